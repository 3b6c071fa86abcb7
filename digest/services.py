"""Writes of the digest: subscribing (double opt-in), managing a subscription, and sending the weekly digest.

Sending is exactly-once per subscriber and week as far as SMTP allows:

- a run claims every due subscriber with one conditional UPDATE (active, no Delivery for the week, and no live claim
  by another run), so a second run of the task, concurrent or later, finds nothing to claim;
- each outcome is recorded as a Delivery row right after its SMTP transaction, one row per subscriber and week
  (a unique constraint), so a re-run after a crash sends only to subscribers without a record;
- whatever a run claimed and did not record (a crash, a time limit, an SMTP outage) is released in a `finally`, and
  a claim left by a worker that died outright expires after DIGEST_CLAIM_LEASE_SECONDS, longer than the task's hard
  time limit and shorter than the broker's visibility timeout, so the redelivered task can take it over;
- a relay- or message-level failure stops the run and marks nobody (delivery.py names each outcome); a message
  sent in full that got no reply is recorded as "unknown", never sent again by a run (docs/operations.md, "Mail");
- the only window for a duplicate is a worker dying between the SMTP server's acceptance and the Delivery insert;
  the Message-ID is the same for a re-sent copy, so receiving systems can recognise it.
"""

from __future__ import annotations

import logging
import smtplib
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import groupby

from django.conf import settings
from django.core.mail import get_connection
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse
from django.utils import timezone, translation
from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from .delivery import OutcomeUnknown, RecipientDeferred, RecipientRefused, RelayFailure, email_deliver
from .emails import confirmation_message, digest_message, digest_render, site_url
from .models import Delivery, DeliveryStatus, SendProblem, SendProblemKind, Subscription, SubscriptionStatus
from .ratelimit import rate_limit_exceeded
from .savedfilters import saved_filter_parse
from .selectors import digest_build, week_changes
from .tokens import SubscribeRequest, confirm_token_make, confirm_token_read, now_timestamp
from .weeks import digest_week

logger = logging.getLogger(__name__)


class RateLimited(Exception):
    """Too many subscription requests from one IP address in the current window."""


class ConfirmationNotSent(Exception):
    """The confirmation email could not be queued (web) or sent (worker); nothing was stored."""


class LinkSuperseded(Exception):
    """A confirmation link issued before the address unsubscribed: it must not subscribe it again."""


class FilterNoLongerValid(Exception):
    def __init__(self, errors: dict[str, list[str]]):
        super().__init__("; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items()))
        self.errors = errors


# --- subscribing -----------------------------------------------------------------------------------------------


def subscription_request(*, email: str, filter_query: str, language: str, always_send: bool, ip: str,
                         base: str = "") -> bool:
    """Queue a signed confirmation link for this address and filter (a worker sends it: tasks.confirmation_send);
    store nothing.

    The caller shows the same answer whether or not the address is subscribed. Raises RateLimited when the IP
    address is over its limit, ConfirmationNotSent when the task cannot be queued (the broker is down). Returns
    False without sending when the address itself is over its limit (so nobody can flood a mailbox through the
    form), True otherwise. `base` is the origin the email's links start with (emails.site_base of the request;
    SITE_URL when set).
    """
    from .tasks import confirmation_send

    window = settings.DIGEST_SUBSCRIBE_RATE_WINDOW
    if rate_limit_exceeded(scope="ip", ident=ip, limit=settings.DIGEST_SUBSCRIBE_RATE_PER_IP, window=window):
        raise RateLimited
    if rate_limit_exceeded(scope="address", ident=email, limit=settings.DIGEST_SUBSCRIBE_RATE_PER_ADDRESS,
                           window=window):
        logger.info("digest confirmation not sent: address over its hourly limit")
        return False
    request = SubscribeRequest(email=email, filter_query=filter_query, language=language, always_send=always_send,
                               issued_at=now_timestamp())
    with translation.override(language):  # the confirmation link opens in the language the subscriber chose
        confirm_url = site_url(reverse("digest:confirm", args=[confirm_token_make(request)]), base=base)
    already = Subscription.objects.filter(
        email__iexact=email, status__in=[SubscriptionStatus.ACTIVE, SubscriptionStatus.PAUSED]
    ).exists()
    try:
        confirmation_send.delay(email=email, language=language, confirm_url=confirm_url, filter_query=filter_query,
                                already_subscribed=already, base=base)
    except (KombuError, RedisError, OSError) as exc:
        logger.warning("digest confirmation email not queued: %s: %s", type(exc).__name__, exc)
        raise ConfirmationNotSent from exc
    return True


def confirmation_deliver(*, email: str, language: str, confirm_url: str, filter_query: str,
                         already_subscribed: bool, base: str) -> None:
    """Send one confirmation email (from the worker). Raises ConfirmationNotSent when the relay does not take it;
    sending it again is harmless (the link is the same request)."""
    message = confirmation_message(email=email, language=language, confirm_url=confirm_url,
                                   filter_query=filter_query, already_subscribed=already_subscribed, base=base)
    try:
        message.send()
    except (smtplib.SMTPException, OSError) as exc:
        logger.warning("digest confirmation email not sent: %s: %s", type(exc).__name__, exc)
        raise ConfirmationNotSent from exc


def subscription_confirm(*, token: str) -> Subscription:
    """Create or update the subscription a confirmation link asks for, active from now.

    Raises tokens.TokenInvalid or tokens.TokenExpired for a bad link, LinkSuperseded for a link issued before the
    address unsubscribed, FilterNoLongerValid when the saved filter names something that has left the catalog.
    A link issued before the subscription last changed (its filters, language, a pause) leaves it as it is now, so
    an old link never re-applies the filters of the day it was sent. Confirming twice is harmless:
    the second time changes nothing but `confirmed_at`.
    """
    request = confirm_token_read(token)
    parsed = saved_filter_parse(request.filter_query)
    if not parsed.is_valid:
        raise FilterNoLongerValid(parsed.errors)
    values = {"filter_query": parsed.query, "language": request.language, "always_send": request.always_send,
              "status": SubscriptionStatus.ACTIVE, "confirmed_at": timezone.now(), "unsubscribed_at": None,
              "undeliverable_reason": ""}
    for _attempt in range(2):
        try:
            with transaction.atomic():
                subscription = Subscription.objects.select_for_update().filter(email__iexact=request.email).first()
                if subscription is None:
                    return Subscription.objects.create(email=request.email, **values)
                if subscription.unsubscribed_at and subscription.unsubscribed_at.timestamp() > request.issued_at:
                    raise LinkSuperseded
                if (subscription.status in (SubscriptionStatus.ACTIVE, SubscriptionStatus.PAUSED)
                        and subscription.updated_at.timestamp() > request.issued_at):
                    # Changed (filters, language, paused) after this link was sent: an old link, valid for days,
                    # neither re-applies that day's filters over the later change nor resumes a pause.
                    return subscription
                for name, value in values.items():
                    setattr(subscription, name, value)
                subscription.save()
                return subscription
        except IntegrityError:
            continue  # the same link confirmed twice at once: the other request created the row; update it
    raise RuntimeError("could not create or update the subscription")


def subscription_update(*, subscription: Subscription, filter_query: str, language: str,
                        always_send: bool) -> Subscription:
    """Change the saved filter (a canonical query from savedfilters.saved_filter_parse), language and the
    send-even-without-change choice."""
    subscription.filter_query = filter_query
    subscription.language = language
    subscription.always_send = always_send
    subscription.save(update_fields=["filter_query", "language", "always_send", "updated_at"])
    return subscription


def subscription_pause(*, subscription: Subscription, paused: bool) -> Subscription:
    """Pause or resume. An unsubscribed or undeliverable subscription is left as it is (it needs a new opt-in)."""
    if subscription.status in (SubscriptionStatus.ACTIVE, SubscriptionStatus.PAUSED):
        subscription.status = SubscriptionStatus.PAUSED if paused else SubscriptionStatus.ACTIVE
        subscription.save(update_fields=["status", "updated_at"])
    return subscription


def subscription_unsubscribe(*, subscription: Subscription) -> Subscription:
    """Stop every email to this subscription. Idempotent: a second call keeps the first time of unsubscribing."""
    if subscription.status != SubscriptionStatus.UNSUBSCRIBED:
        subscription.status = SubscriptionStatus.UNSUBSCRIBED
        subscription.unsubscribed_at = timezone.now()
        subscription.save(update_fields=["status", "unsubscribed_at", "updated_at"])
        logger.info("digest subscription %s unsubscribed", subscription.pk)
    return subscription


# --- sending ---------------------------------------------------------------------------------------------------


@dataclass
class SendResult:
    week: date
    claimed: int = 0
    sent: int = 0
    skipped: int = 0
    failed: int = 0
    unknown: int = 0
    transient: int = 0
    held_elsewhere: int = 0
    filters: int = 0
    problem: SendProblem | None = None


def _done_for(week_key: date):
    return Exists(Delivery.objects.filter(subscription=OuterRef("pk"), week=week_key))


def digest_claim(*, week_key: date, token: uuid.UUID, now: datetime) -> int:
    """Claim every active subscriber with no Delivery for the week and no live claim, in one conditional UPDATE.

    PostgreSQL re-checks the claim condition on each row a concurrent UPDATE has just changed, so of two runs
    claiming at once each subscriber goes to exactly one.
    """
    lease_cutoff = now - timedelta(seconds=settings.DIGEST_CLAIM_LEASE_SECONDS)
    return (
        Subscription.objects.filter(status=SubscriptionStatus.ACTIVE)
        .filter(Q(claim_token__isnull=True) | Q(claimed_at__lt=lease_cutoff))
        .filter(~_done_for(week_key))
        .update(claim_token=token, claimed_at=now)
    )


def _record(subscription: Subscription, week_key: date, status: str, *, changes: int = 0, message_id: str = "",
            error: str = "") -> None:
    try:
        Delivery.objects.create(subscription=subscription, week=week_key, status=status, changes=changes,
                                message_id=message_id, error=error[:500], created_at=timezone.now())
    except IntegrityError:
        # Only possible if two runs held the same subscriber, which the claim rules out; say so loudly.
        logger.error("digest delivery for subscription %s, week %s was already recorded", subscription.pk, week_key)


def _record_many(subscriptions: list[Subscription], week_key: date, status: str, *, changes: int = 0,
                 error: str = "") -> None:
    now = timezone.now()
    Delivery.objects.bulk_create(
        [Delivery(subscription=s, week=week_key, status=status, changes=changes, error=error[:500], created_at=now)
         for s in subscriptions],
        ignore_conflicts=True,
    )


def digest_send(*, at: datetime | None = None, give_up_transient: bool = False) -> SendResult:
    """Send this week's digest to every due subscriber; safe to run any number of times.

    `at` picks the week (the latest send boundary at or before it; now by default), so a retried task keeps its
    week. Per distinct saved filter the changes are computed and rendered once per language. A filter without
    change is recorded as skipped for its subscribers unless they chose to always receive the digest.

    SMTP outcomes (delivery.py; the policy is docs/operations.md, "Mail"): a 5xx to RCPT TO marks that address
    undeliverable and records a failed delivery; a 4xx to RCPT TO leaves that subscriber for a retry, or records it
    failed when `give_up_transient`. A relay- or message-level failure stops the run: nobody is marked, everyone not
    yet accepted stays unrecorded for the task's retry, and a SendProblem is stored for the operator. A message sent
    in full without a reply is recorded as unknown (so no run sends it again) and also stops the run.
    `transient` counts what is left for a retry; `held_elsewhere` counts due subscribers another live run holds.
    """
    now = timezone.now()
    week = digest_week(at or now)
    token = uuid.uuid4()
    result = SendResult(week=week.key)
    result.claimed = digest_claim(week_key=week.key, token=token, now=now)
    if result.claimed:
        try:
            _send_claimed(token=token, week=week, result=result, give_up_transient=give_up_transient)
        finally:
            Subscription.objects.filter(claim_token=token).update(claim_token=None, claimed_at=None)
    lease_cutoff = now - timedelta(seconds=settings.DIGEST_CLAIM_LEASE_SECONDS)
    result.held_elsewhere = (
        Subscription.objects.filter(status=SubscriptionStatus.ACTIVE, claim_token__isnull=False,
                                    claimed_at__gte=lease_cutoff)
        .filter(~_done_for(week.key))
        .count()
    )
    logger.info(
        "digest week %s: %s claimed over %s filters, %s sent, %s skipped (no change), %s failed, %s outcome "
        "unknown, %s to retry, %s held by another run", week.key, result.claimed, result.filters, result.sent,
        result.skipped, result.failed, result.unknown, result.transient, result.held_elsewhere,
    )
    return result


class _Stop(Exception):
    """The run must stop: the relay failed, or a message's outcome is unknown."""

    def __init__(self, kind: str, reply: str):
        super().__init__(reply)
        self.kind, self.reply = kind, reply


def _send_claimed(*, token: uuid.UUID, week, result: SendResult, give_up_transient: bool) -> None:
    subscriptions = list(Subscription.objects.filter(claim_token=token).order_by("filter_query", "id"))
    changes = week_changes(week=week)
    stop = None
    connection = get_connection(fail_silently=False)
    try:
        connection.open()
    except (smtplib.SMTPException, OSError) as exc:
        stop = _Stop(SendProblemKind.RELAY_FAILURE, f"SMTP server unreachable: {type(exc).__name__}: {exc}")
    else:
        try:
            for query, members in groupby(subscriptions, key=lambda s: s.filter_query):
                result.filters += 1
                _send_group(query=query, members=list(members), changes=changes, week=week,
                            connection=connection, result=result, give_up_transient=give_up_transient)
        except _Stop as exc:
            stop = exc
        finally:
            try:
                connection.close()
            except (smtplib.SMTPException, OSError):
                pass  # the connection is already gone; the outcome is recorded
    # Claimed but not recorded: temporary refusals and everyone a stopped run did not reach; released by the caller.
    result.transient = result.claimed - result.sent - result.skipped - result.failed - result.unknown
    if stop is not None:
        result.problem = SendProblem.objects.create(week=week.key, kind=stop.kind, reply=stop.reply[:500],
                                                    pending=result.transient, created_at=timezone.now())
        logger.error("digest week %s stopped (%s): %s; nobody marked undeliverable, %s left for a retry, %s with "
                     "an unknown outcome", week.key, stop.kind, stop.reply, result.transient, result.unknown)


def _send_group(*, query, members, changes, week, connection, result: SendResult, give_up_transient: bool) -> None:
    """Send one saved filter's digest to its claimed subscribers; raise _Stop when the whole run must stop."""
    try:
        digest = digest_build(query=query, changes=changes)
    except ValueError as exc:
        logger.warning("digest: saved filter %r no longer valid: %s", query, exc)
        _record_many(members, week.key, DeliveryStatus.FAILED, error=f"saved filter no longer valid: {exc}")
        result.failed += len(members)
        return
    if not digest.has_changes:
        quiet = [s for s in members if not s.always_send]
        _record_many(quiet, week.key, DeliveryStatus.SKIPPED)
        result.skipped += len(quiet)
        members = [s for s in members if s.always_send]
    rendered = {}
    for subscription in members:
        if subscription.language not in rendered:
            rendered[subscription.language] = digest_render(digest, language=subscription.language)
        message = digest_message(rendered[subscription.language], subscription=subscription, week_key=week.key,
                                 connection=connection)
        message_id = message.extra_headers["Message-ID"]
        try:
            email_deliver(connection=connection, message=message)
        except RecipientRefused as exc:
            _undeliverable(subscription, week.key, str(exc), result)
        except RecipientDeferred as exc:
            if give_up_transient:
                _record(subscription, week.key, DeliveryStatus.FAILED, error=f"gave up after retries: {exc}")
                result.failed += 1
            else:
                logger.info("digest: temporary refusal for subscription %s: %s", subscription.pk, exc)
        except RelayFailure as exc:
            raise _Stop(SendProblemKind.RELAY_FAILURE, str(exc)) from exc
        except OutcomeUnknown as exc:
            _record(subscription, week.key, DeliveryStatus.UNKNOWN, changes=digest.change_count,
                    message_id=message_id, error=str(exc))
            result.unknown += 1
            raise _Stop(SendProblemKind.OUTCOME_UNKNOWN, f"subscription {subscription.pk}: {exc}") from exc
        else:
            _record(subscription, week.key, DeliveryStatus.SENT, changes=digest.change_count, message_id=message_id)
            result.sent += 1


def _undeliverable(subscription: Subscription, week_key: date, reason: str, result: SendResult) -> None:
    logger.warning("digest: subscription %s undeliverable: %s", subscription.pk, reason)
    Subscription.objects.filter(pk=subscription.pk).update(status=SubscriptionStatus.UNDELIVERABLE,
                                                           undeliverable_reason=reason[:300])
    _record(subscription, week_key, DeliveryStatus.FAILED, error=reason)
    result.failed += 1
