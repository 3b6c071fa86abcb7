"""Celery tasks: thin wrappers that take a source slug and call the ingestion service.

Only transient errors (timeouts, 429, 5xx) are retried, with exponential backoff and a bound; a bad key or a broken
response is recorded on the ScrapeRun and not retried. Running a task twice is safe: ingestion is idempotent.
"""

from celery import shared_task

from scrapers.base import TransientScrapeError


@shared_task(bind=True, max_retries=4, acks_late=True)
def provider_scrape(self, slug: str, offline: bool = False) -> dict:
    from providers.services import source_scrape

    try:
        run = source_scrape(slug=slug, offline=offline)
    except TransientScrapeError as exc:
        countdown = exc.retry_after if exc.retry_after is not None else 60 * 2**self.request.retries
        raise self.retry(exc=exc, countdown=min(countdown, 1800)) from exc
    return {"run": run.id, "status": run.status, "created": run.created, "updated": run.updated}
