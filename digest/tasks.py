"""The weekly digest task, started by Celery beat (comparator/celery.py) at the send boundary.

Thin: it calls services.digest_send and decides about retries. The week is pinned on the first run and passed on
to every retry, so a digest retried after midnight or after the next boundary still reports the week it started.
Transient SMTP trouble is retried with exponential backoff, a bounded number of times, after which those
subscribers are recorded as failed for the week; subscribers held by another live run (a worker that died with
their claim) are looked at again once that claim's lease has run out.
"""

from datetime import datetime

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

MAX_RETRIES = 6


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True)
def digest_send_due(self, at: str | None = None) -> dict:
    from digest.services import digest_send

    moment = datetime.fromisoformat(at) if at else timezone.now()
    final = self.request.retries >= self.max_retries
    try:
        result = digest_send(at=moment, give_up_transient=final)
    except SoftTimeLimitExceeded as exc:
        # digest_send released what it had not recorded; carry on in a fresh task.
        raise self.retry(exc=exc, countdown=5, kwargs={"at": moment.isoformat()}) from exc
    summary = {"week": result.week.isoformat(), "claimed": result.claimed, "sent": result.sent,
               "skipped": result.skipped, "failed": result.failed, "transient": result.transient,
               "held_elsewhere": result.held_elsewhere, "filters": result.filters}
    if not final and result.transient:
        raise self.retry(countdown=min(60 * 2**self.request.retries, 3600), kwargs={"at": moment.isoformat()})
    if not final and result.held_elsewhere:
        raise self.retry(countdown=settings.DIGEST_CLAIM_LEASE_SECONDS + 60, kwargs={"at": moment.isoformat()})
    return summary
