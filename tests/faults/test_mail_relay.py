"""The digest through a scripted relay on loopback: each SMTP fault has its documented outcome (docs/operations.md,
"Mail"). Nobody is marked undeliverable unless RCPT TO answered 5xx for that address; a message whose outcome is
unknown is never sent again by a run."""

from datetime import datetime, timedelta
from unittest import mock

import pytest
from django.core import mail

from comparator.health import metrics_text
from digest import services, tasks
from digest.models import Delivery, SendProblem, Subscription
from tests.digest.conftest import SEND_AT, START, subscriber

pytestmark = [pytest.mark.services, pytest.mark.django_db]


@pytest.fixture
def changed(world):
    world.change(world.offer("h100-drop", price="2.00"), at=START + timedelta(days=3), price="1.50")
    return world


def _subscribers(count: int) -> list[str]:
    addresses = [f"s{index:02}@example.org" for index in range(count)]
    for address in addresses:
        subscriber(address, query="gpu=h100")
    return addresses


def _each_got_one(relay, addresses) -> bool:
    return sorted(m["To"] for m in relay.messages) == sorted(addresses)


@pytest.mark.parametrize("reply", ["554 5.7.1 Message rejected by policy", "451 4.3.0 Queue full, try later"])
def test_a_refusal_of_the_message_marks_nobody_and_keeps_the_rest_for_the_retry(changed, relay, reply):
    addresses = _subscribers(31)
    relay.data_reply_from = (5, reply)
    first = services.digest_send(at=SEND_AT)
    assert (first.sent, first.failed, first.unknown, first.transient) == (5, 0, 0, 26)
    assert not Subscription.objects.exclude(status="active").exists()
    assert Delivery.objects.count() == 5
    problem = SendProblem.objects.get()
    assert (problem.kind, problem.pending) == ("relay_failure", 26) and reply.split()[0] in problem.reply
    assert 'comparator_digest_send_problems_total{kind="relay_failure"} 1' in metrics_text()

    relay.data_reply_from = None  # the relay is fixed; the task's retry sends the rest, once each
    assert services.digest_send(at=SEND_AT).sent == 26
    assert _each_got_one(relay, addresses)


def test_a_permanent_refusal_at_rcpt_marks_only_that_address(changed, relay):
    addresses = _subscribers(3)
    relay.rcpt_replies[addresses[1]] = "550 5.1.1 No such user"
    result = services.digest_send(at=SEND_AT)
    assert (result.sent, result.failed, result.transient, result.problem) == (2, 1, 0, None)
    assert list(Subscription.objects.exclude(status="active").values_list("email", flat=True)) == [addresses[1]]


def test_a_temporary_refusal_at_rcpt_delays_only_that_address(changed, relay):
    addresses = _subscribers(3)
    relay.rcpt_replies[addresses[0]] = "451 4.2.1 Mailbox busy"
    result = services.digest_send(at=SEND_AT)
    assert (result.sent, result.failed, result.transient, result.problem) == (2, 0, 1, None)
    del relay.rcpt_replies[addresses[0]]
    assert services.digest_send(at=SEND_AT).sent == 1 and _each_got_one(relay, addresses)


def test_a_dropped_connection_marks_nobody_and_the_retry_sends_each_once(changed, relay):
    addresses = _subscribers(6)
    relay.drop_at_rcpt.add(addresses[2])
    first = services.digest_send(at=SEND_AT)
    assert (first.sent, first.failed, first.transient) == (2, 0, 4)
    assert SendProblem.objects.get().kind == "relay_failure"
    assert not Subscription.objects.exclude(status="active").exists()

    relay.drop_at_rcpt.clear()
    assert services.digest_send(at=SEND_AT).sent == 4 and _each_got_one(relay, addresses)


def test_a_reply_after_the_timeout_is_an_unknown_outcome_never_sent_again(changed, relay):
    addresses = _subscribers(4)
    relay.late_for.add(addresses[1])
    first = services.digest_send(at=SEND_AT)
    assert (first.sent, first.unknown, first.failed, first.transient) == (1, 1, 0, 2)
    unknown = Delivery.objects.get(status="unknown")
    assert unknown.subscription.email == addresses[1] and unknown.message_id.startswith("<digest.")
    assert SendProblem.objects.get().kind == "outcome_unknown"
    text = metrics_text()
    assert "comparator_digest_outcome_unknown_awaiting_decision 1" in text
    assert 'comparator_digest_send_problems_total{kind="outcome_unknown"} 1' in text

    again = services.digest_send(at=SEND_AT)
    assert (again.claimed, again.sent) == (2, 2)
    assert services.digest_send(at=SEND_AT).claimed == 0
    # the relay did take the late message: each address has exactly one copy, none sent twice
    assert _each_got_one(relay, addresses)
    assert not Subscription.objects.exclude(status="active").exists()


def test_the_operator_decides_about_an_unknown_outcome_in_the_admin(changed, relay, admin_client):
    (address,) = _subscribers(1)
    relay.late_for.add(address)
    services.digest_send(at=SEND_AT)
    unknown = Delivery.objects.get()
    page = admin_client.get("/admin/digest/delivery/?status__exact=unknown")
    assert address in page.content.decode()

    relay.late_for.clear()
    with mock.patch("digest.admin.digest_send_due.delay") as queued:
        admin_client.post("/admin/digest/delivery/", {"action": "send_again", "_selected_action": [unknown.pk]})
    assert not Delivery.objects.exists()
    services.digest_send(at=datetime.fromisoformat(queued.call_args.kwargs["at"]))
    assert len(relay.to(address)) == 2  # sent again because the operator said so


def test_the_task_retries_a_relay_failure_with_backoff_and_reports_the_problem(changed, relay):
    _subscribers(3)
    relay.data_reply_from = (1, "554 5.7.1 rejected")
    with mock.patch.object(tasks.digest_send_due, "retry", side_effect=RuntimeError("retry")) as retry, \
            pytest.raises(RuntimeError):
        tasks.digest_send_due.apply(kwargs={"at": SEND_AT.isoformat()}, throw=True)
    assert retry.call_args.kwargs["countdown"] == 60
    assert Delivery.objects.count() == 1 and SendProblem.objects.get().pending == 2


def test_confirmation_mail_is_sent_by_the_task_not_the_request(changed, relay, client):
    with mock.patch("digest.tasks.confirmation_send.delay") as queued:
        response = client.post("/digest/subscribe/?gpu=h100", {"email": "ann@example.org", "language": "en"})
    assert response.status_code == 200 and not relay.messages and not mail.outbox
    tasks.confirmation_send.apply(kwargs=queued.call_args.kwargs, throw=True)
    assert [m["To"] for m in relay.messages] == ["ann@example.org"]


SUBSCRIBE_IN_A_FRESH_PROCESS = """
import django
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
response = Client().post("/digest/subscribe/", {"email": "ann@example.org", "language": "en"})
print(response.status_code, "ann@example.org" in response.content.decode())
"""


@pytest.mark.parametrize("mode", ["refuse", "hang"])
def test_a_broken_broker_makes_subscribing_a_503_that_keeps_the_form(mode):
    """In a process of its own (the broker is configured when Celery first connects), against the broker behind a
    proxy that refuses or hangs: the request is answered, 503, the form kept."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from django.db import connection

    from tests.faults.proxy import FaultProxy

    proxy = FaultProxy(6379)
    proxy.mode = mode
    db = connection.settings_dict
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "comparator.settings.test",
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
           "CELERY_BROKER_URL": f"redis://{proxy.url_host}/3"}
    try:
        completed = subprocess.run([sys.executable, "-c", SUBSCRIBE_IN_A_FRESH_PROCESS], env=env, text=True,
                                   capture_output=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    finally:
        proxy.close()
    assert completed.stdout.split()[-2:] == ["503", "True"], completed.stderr[-2000:]
