"""The weekly digest task, started by Celery beat (comparator/celery.py) at the send boundary.

Thin: it calls services.digest_send and decides about retries. The week is pinned on the first run and passed on
to every retry, so a digest retried after midnight or after the next boundary still reports the week it started.
Transient SMTP trouble (a relay failure, a 4xx to one address) is retried with exponential backoff, a bounded
number of times; after the last one an address still refused with 4xx is recorded as failed for the week, and
subscribers a relay failure left are kept unrecorded, named by the run's SendProblem for the operator
(docs/operations.md, "Mail"); subscribers held by another live run (a worker that died with
their claim) are looked at again once that claim's lease has run out.
"""

from datetime import datetime

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

MAX_RETRIES = 6
CONFIRMATION_RETRIES = 5


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
               "skipped": result.skipped, "failed": result.failed, "unknown": result.unknown,
               "problem": result.problem.kind if result.problem else "", "transient": result.transient,
               "held_elsewhere": result.held_elsewhere, "filters": result.filters}
    if not final and result.transient:
        raise self.retry(countdown=min(60 * 2**self.request.retries, 3600), kwargs={"at": moment.isoformat()})
    if not final and result.held_elsewhere:
        raise self.retry(countdown=settings.DIGEST_CLAIM_LEASE_SECONDS + 60, kwargs={"at": moment.isoformat()})
    return summary


@shared_task(bind=True, max_retries=CONFIRMATION_RETRIES, acks_late=True, ignore_result=True)
def confirmation_send(self, *, email: str, language: str, confirm_url: str, filter_query: str,
                      already_subscribed: bool, base: str) -> None:
    """The confirmation email of a subscribe request, sent here so a slow relay never holds a web request."""
    from digest.services import ConfirmationNotSent, confirmation_deliver

    try:
        confirmation_deliver(email=email, language=language, confirm_url=confirm_url, filter_query=filter_query,
                             already_subscribed=already_subscribed, base=base)
    except ConfirmationNotSent as exc:
        raise self.retry(exc=exc, countdown=min(30 * 2**self.request.retries, 1800)) from exc
