"""Celery tasks: thin wrappers that take a source slug (or nothing) and call one service.

- One task per source run (`provider_scrape`), fanned out per kind of source by `sources_scrape` from the beat table
  in comparator/celery.py; `exchange_rates_refresh` and `source_links_check` are the daily and weekly chores.
- Only transient errors (timeouts, connection errors, 429, 5xx) are retried, a bounded number of times, after the
  delay the provider asked for (Retry-After) or an exponential backoff; a bad key or a broken response is recorded
  on the ScrapeRun and not retried, and a programming error is never retried.
- Two runs of the same source never overlap: the run itself holds the source's lock (runs.source_lock, a
  PostgreSQL advisory lock, the same one `manage.py scrape` and the snapshot take); the second one skips, logs why
  and says so in its result. The database frees the lock of a worker that died with its connection, so a task
  redelivered after its worker died (acks_late + reject_on_worker_lost) goes ahead. The daily and weekly chores
  keep a Redis lock (`task_lock`), which a redelivery of the same task id takes over.
- Running any task twice is safe: ingestion is idempotent, so acks_late can redeliver freely.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from celery import shared_task
from django.conf import settings
from django.db import transaction

from scrapers.base import TransientScrapeError

logger = logging.getLogger(__name__)

MAX_RETRIES = 4
BASE_BACKOFF_SECONDS = 60
# A Retry-After longer than this is not waited for inside one task: the next scheduled run will try again.
MAX_RETRY_DELAY_SECONDS = 1800
MIN_RETRY_DELAY_SECONDS = 5

# Compare-and-delete: only the holder's token releases the lock (a run that outlived its lock must not free the
# next run's one).
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.CELERY_BROKER_URL)


@contextmanager
def task_lock(name: str, *, token: str | None) -> Iterator[bool]:
    """Hold the Redis lock `name` for the body, yielding whether we got it.

    The lock expires after the task hard time limit plus a margin, so a worker killed while holding it cannot block
    the source for longer than one run could have lasted. `token` is the task id: a redelivery of the very same task
    (its previous worker is gone) takes the lock over at once.
    """
    key = f"comparator:lock:{name}"
    token = token or uuid.uuid4().hex
    client = _redis()
    timeout = int(settings.CELERY_TASK_TIME_LIMIT) + 60
    acquired = bool(client.set(key, token, nx=True, ex=timeout))
    if not acquired and client.get(key) == token.encode():
        logger.warning("lock %s: taking over from an earlier delivery of the same task %s", name, token)
        acquired = bool(client.set(key, token, xx=True, ex=timeout))
    try:
        yield acquired
    finally:
        if acquired:
            client.eval(_RELEASE, 1, key, token)
        client.close()


def retry_delay(exc: TransientScrapeError, retries: int) -> float | None:
    """Seconds before the next attempt: the provider's Retry-After if it gave one, otherwise 60 s doubled per
    earlier retry with up to 10% jitter (so sources failing together do not come back together). None when the
    provider asked for longer than we wait within one task."""
    if exc.retry_after is not None:
        if exc.retry_after > MAX_RETRY_DELAY_SECONDS:
            return None
        # Not sooner than a few seconds, even for "Retry-After: 0": the retry carries this task's id, and the lock
        # is only released when this attempt has returned.
        return max(exc.retry_after, MIN_RETRY_DELAY_SECONDS)
    delay = BASE_BACKOFF_SECONDS * 2**retries
    return min(delay + random.uniform(0, delay / 10), MAX_RETRY_DELAY_SECONDS)


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True, reject_on_worker_lost=True)
def provider_scrape(self, slug: str, offline: bool = False) -> dict:
    """Scrape one source (runs.source_scrape, which takes the source's lock); returns what happened, for the
    result backend."""
    from providers.runs import RunSkippedError, source_scrape

    try:
        run = source_scrape(slug=slug, offline=offline)
    except RunSkippedError as exc:
        logger.warning("source %s: skipped: %s", slug, exc)
        return {"source": slug, "skipped": str(exc)}
    except TransientScrapeError as exc:
        delay = retry_delay(exc, self.request.retries)
        if delay is None:
            logger.warning("source %s: the provider asked us to wait %.0f s; leaving it to the next scheduled "
                           "run", slug, exc.retry_after)
            raise
        raise self.retry(exc=exc, countdown=delay) from exc
    return {"source": slug, "run": run.id, "status": run.status, "created": run.created, "updated": run.updated,
            "deactivated": run.deactivated}


def provider_scrape_enqueue(*, slugs: list[str], expires: float | None = None) -> None:
    """Queue one provider_scrape per slug once the current transaction commits (at once outside one), so a worker
    never starts on data this transaction has not written yet. `expires` (seconds) drops a run that waited too long
    in a backlog instead of running it late next to a newer one."""
    for slug in slugs:
        transaction.on_commit(lambda slug=slug: provider_scrape.apply_async(args=[slug], expires=expires))


@shared_task(acks_late=True, reject_on_worker_lost=True)
def sources_scrape(kind: str, expires: float | None = None) -> list[str]:
    """Queue a provider_scrape for every scheduled source of one kind (api | catalog | curated); a catalog is left
    out when its provider's own API is read (scrapers.registry.scheduled_sources)."""
    from scrapers import registry

    slugs = registry.scheduled_sources(kind)
    provider_scrape_enqueue(slugs=slugs, expires=expires)
    logger.info("queued %s %s source(s): %s", len(slugs), kind, ", ".join(slugs) or "none")
    return slugs


# An availability poll runs every 15 minutes: a retry later than this is left to the next scheduled poll.
AVAILABILITY_MAX_RETRY_DELAY_SECONDS = 10 * 60


@shared_task(bind=True, max_retries=2, acks_late=True, reject_on_worker_lost=True)
def availability_poll(self, slug: str) -> dict:
    """Poll one source's stock (runs.availability_poll) under the source's own lock, shared with its price run,
    so the two never write the same offers at once (the later one skips). Transient failures are retried at most
    twice and only within the polling period; a failed poll has changed nothing."""
    from providers.runs import RunSkippedError
    from providers.runs import availability_poll as poll_service
    from scrapers import registry

    if slug not in registry.availability_sources():
        # A keyed source without its key: said once per poll in the log, not stored every 15 minutes.
        logger.info("availability of %s: skipped, its API key is not set", slug)
        return {"source": slug, "skipped": "not configured"}
    try:
        poll = poll_service(slug=slug)
    except RunSkippedError as exc:
        logger.warning("availability of %s: skipped: %s", slug, exc)
        return {"source": slug, "skipped": str(exc)}
    except TransientScrapeError as exc:
        delay = retry_delay(exc, self.request.retries)
        if delay is None or delay > AVAILABILITY_MAX_RETRY_DELAY_SECONDS:
            logger.warning("availability of %s: leaving the retry to the next scheduled poll", slug)
            raise
        raise self.retry(exc=exc, countdown=delay) from exc
    return {"source": slug, "poll": poll.id, "status": poll.status, "checked": poll.checked,
            "changed": poll.changed}


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True, reject_on_worker_lost=True)
def exchange_rates_refresh(self, offline: bool = False) -> dict:
    """Fetch the ECB's reference rates (exchange_rates.exchange_rates_sync); transient failures are retried."""
    from providers import exchange_rates

    with task_lock("exchange-rates", token=self.request.id) as acquired:
        if not acquired:
            logger.warning("exchange rates: skipped, another refresh is still in progress")
            return {"skipped": "another refresh is still in progress"}
        try:
            stored = exchange_rates.exchange_rates_sync(offline=offline)
        except TransientScrapeError as exc:
            delay = retry_delay(exc, self.request.retries)
            if delay is None:
                raise
            raise self.retry(exc=exc, countdown=delay) from exc
    return {"rates": stored}


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def source_links_check(self) -> dict:
    """Check that every curated capability source URL still answers (link_check.source_links_check)."""
    from providers import link_check

    with task_lock("source-links", token=self.request.id) as acquired:
        if not acquired:
            logger.warning("source links: skipped, another check is still in progress")
            return {"skipped": "another check is still in progress"}
        return link_check.source_links_check()
