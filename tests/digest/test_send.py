"""Sending: exactly one digest per due subscriber and week, whatever runs twice, crashes or meets SMTP trouble."""

from datetime import timedelta
from unittest import mock

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from digest import services
from digest.models import Delivery, Subscription
from tests.digest.conftest import SEND_AT, START, subscriber

pytestmark = pytest.mark.django_db
MID = START + timedelta(days=3)


@pytest.fixture
def changed(world):
    world.change(world.offer("h100-drop", price="2.00"), at=MID, price="1.50")
    world.offer("a100-steady", gpu="a100-80gb", price="1.00")
    return world


def test_each_due_subscriber_gets_one_multipart_email_and_a_second_run_sends_nothing(changed):
    subscriber("ann@example.org", query="gpu=h100")
    subscriber("bo@example.org", query="gpu=h100", language="zh-hans")
    subscriber("cy@example.org", query="gpu=a100-80gb")  # no change: skipped
    subscriber("di@example.org", query="gpu=a100-80gb", always_send=True)
    subscriber("ed@example.org", query="gpu=h100", status="paused")
    subscriber("fa@example.org", query="gpu=h100", status="unsubscribed")

    result = services.digest_send(at=SEND_AT)
    assert (result.claimed, result.sent, result.skipped, result.failed, result.filters) == (4, 3, 1, 0, 2)
    assert sorted(m.to[0] for m in mail.outbox) == ["ann@example.org", "bo@example.org", "di@example.org"]
    for message in mail.outbox:
        assert message.alternatives[0][1] == "text/html"
        assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        # in the subscriber's language: bo subscribed in Chinese, so his links open the Chinese pages
        prefix = "/zh-hans" if message.to[0] == "bo@example.org" else ""
        assert message.extra_headers["List-Unsubscribe"].startswith(
            f"<http://127.0.0.1:8000{prefix}/digest/unsubscribe/")
    by_address = {m.to[0]: m for m in mail.outbox}
    assert "1.50" in by_address["ann@example.org"].body and "-25.0%" in by_address["ann@example.org"].body
    assert by_address["bo@example.org"].subject.startswith("GPU 周报")
    assert "no change" in by_address["di@example.org"].subject
    assert Delivery.objects.filter(status="sent").count() == 3
    assert Delivery.objects.get(subscription__email="cy@example.org").status == "skipped"

    again = services.digest_send(at=SEND_AT + timedelta(hours=5))
    assert (again.claimed, again.sent) == (0, 0) and len(mail.outbox) == 3
    assert not Subscription.objects.filter(claim_token__isnull=False).exists()


def test_the_next_week_is_sent_again(changed):
    subscriber("ann@example.org", query="gpu=h100", always_send=True)
    services.digest_send(at=SEND_AT)
    services.digest_send(at=SEND_AT + timedelta(days=7))
    assert len(mail.outbox) == 2
    assert sorted(Delivery.objects.values_list("week", flat=True)) == [SEND_AT.date(),
                                                                        SEND_AT.date() + timedelta(days=7)]


def test_changes_are_computed_once_per_distinct_filter(changed):
    for index in range(5):
        subscriber(f"h{index}@example.org", query="gpu=h100", language=["en", "zh-hans"][index % 2])
        subscriber(f"a{index}@example.org", query="gpu=a100-80gb", always_send=True)
    with mock.patch("digest.services.digest_build", wraps=services.digest_build) as build, \
            mock.patch("digest.services.digest_render", wraps=services.digest_render) as render:
        assert services.digest_send(at=SEND_AT).sent == 10
    assert sorted(call.kwargs["query"] for call in build.call_args_list) == ["gpu=a100-80gb", "gpu=h100"]
    assert render.call_count == 3  # (h100, en), (h100, zh-hans), (a100, en)


def test_the_only_query_per_subscriber_is_the_record_of_its_send(changed):
    def run_with(count: int) -> int:
        Subscription.objects.all().delete()  # and their deliveries: the same week again
        for index in range(count):
            subscriber(f"s{index}@example.org", query=["gpu=h100", "gpu=a100-80gb"][index % 2], always_send=True)
        with CaptureQueriesContext(connection) as captured:
            assert services.digest_send(at=SEND_AT).sent == count
        return len(captured)

    few, many = run_with(4), run_with(40)
    assert many - few == 36  # one Delivery insert per extra email; nothing else grows with subscribers


def test_a_subscriber_held_by_a_live_run_is_left_alone_until_its_lease_expires(changed, settings):
    held = subscriber("ann@example.org", query="gpu=h100")
    Subscription.objects.filter(pk=held.pk).update(claim_token="00000000-0000-0000-0000-000000000001",
                                                    claimed_at=timezone.now())
    result = services.digest_send(at=SEND_AT)
    assert (result.claimed, result.held_elsewhere, len(mail.outbox)) == (0, 1, 0)

    stale = timezone.now() - timedelta(seconds=settings.DIGEST_CLAIM_LEASE_SECONDS + 1)
    Subscription.objects.filter(pk=held.pk).update(claimed_at=stale)  # the run that held it died
    assert services.digest_send(at=SEND_AT).sent == 1 and len(mail.outbox) == 1


def test_a_run_that_crashes_midway_loses_no_one_and_sends_no_one_twice(changed):
    for name in ("ann", "bo", "cy"):
        subscriber(f"{name}@example.org", query="gpu=h100")
    real_send = mail.backends.locmem.EmailBackend.send_messages
    calls = {"n": 0}

    def dying_send(self, messages):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("worker killed")
        return real_send(self, messages)

    with mock.patch.object(mail.backends.locmem.EmailBackend, "send_messages", dying_send), \
            pytest.raises(RuntimeError):
        services.digest_send(at=SEND_AT)
    assert len(mail.outbox) == 1 and Delivery.objects.count() == 1
    assert not Subscription.objects.filter(claim_token__isnull=False).exists()  # released for the next run

    assert services.digest_send(at=SEND_AT).sent == 2
    assert sorted(m.to[0] for m in mail.outbox) == ["ann@example.org", "bo@example.org", "cy@example.org"]


def test_a_saved_filter_that_no_longer_validates_is_recorded_as_failed_and_others_still_go(changed):
    subscriber("old@example.org", query="gpu=retired-gpu")
    subscriber("ann@example.org", query="gpu=h100")
    result = services.digest_send(at=SEND_AT)
    assert (result.sent, result.failed) == (1, 1)
    assert "no longer valid" in Delivery.objects.get(subscription__email="old@example.org").error


# --- through a real SMTP server on loopback ------------------------------------------------------------------


def test_smtp_delivery_is_multipart_with_unsubscribe_headers(changed, smtp_settings):
    subscriber("ann@example.org", query="gpu=h100")
    assert services.digest_send(at=SEND_AT).sent == 1
    (message,) = smtp_settings.messages
    assert message.is_multipart()
    assert [part.get_content_type() for part in message.iter_parts()] == ["text/plain", "text/html"]
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["Message-ID"].startswith("<digest.")


def test_a_permanent_refusal_marks_the_address_and_stops_sending(changed, smtp_settings):
    subscriber("gone@example.org", query="gpu=h100", always_send=True)
    subscriber("ann@example.org", query="gpu=h100", always_send=True)
    smtp_settings.rcpt_replies["gone@example.org"] = "550 5.1.1 No such user"
    result = services.digest_send(at=SEND_AT)
    assert (result.sent, result.failed, result.transient) == (1, 1, 0)
    gone = Subscription.objects.get(email="gone@example.org")
    assert gone.status == "undeliverable" and "550" in gone.undeliverable_reason

    services.digest_send(at=SEND_AT + timedelta(days=7))
    assert [m["To"] for m in smtp_settings.messages] == ["ann@example.org", "ann@example.org"]


def test_a_temporary_refusal_is_retried_later_and_then_sent_once(changed, smtp_settings):
    subscriber("busy@example.org", query="gpu=h100")
    smtp_settings.rcpt_replies["busy@example.org"] = "451 4.2.1 Mailbox busy, try later"
    first = services.digest_send(at=SEND_AT)
    assert (first.sent, first.transient) == (0, 1) and not Delivery.objects.exists()

    del smtp_settings.rcpt_replies["busy@example.org"]
    assert services.digest_send(at=SEND_AT).sent == 1
    assert services.digest_send(at=SEND_AT).sent == 0
    assert len(smtp_settings.to("busy@example.org")) == 1


def test_temporary_refusals_are_recorded_as_failed_when_the_retries_are_used_up(changed, smtp_settings):
    subscriber("busy@example.org", query="gpu=h100")
    smtp_settings.rcpt_replies["busy@example.org"] = "451 4.2.1 Mailbox busy, try later"
    result = services.digest_send(at=SEND_AT, give_up_transient=True)
    assert (result.failed, result.transient) == (1, 0)
    assert Subscription.objects.get().status == "active"  # a temporary problem never marks the address


def test_an_unreachable_smtp_server_sends_and_records_nothing(changed, settings):
    from tests.digest.conftest import free_port

    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", free_port(), 2
    subscriber("ann@example.org", query="gpu=h100")
    result = services.digest_send(at=SEND_AT)
    assert (result.sent, result.transient) == (0, 1)
    assert not Delivery.objects.exists() and not Subscription.objects.filter(claim_token__isnull=False).exists()
