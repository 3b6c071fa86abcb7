"""manage.py send_digest: a dry run reports per saved filter and touches nothing; a real run sends."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core import mail
from django.core.management import CommandError, call_command

from digest.models import Delivery, Subscription
from tests.digest.conftest import SEND_AT, START, subscriber

pytestmark = pytest.mark.django_db


@pytest.fixture
def subscribers(world):
    world.change(world.offer("h100", price="2.00"), at=START + timedelta(days=1), price="1.00")
    subscriber("ann@example.org", query="gpu=h100")
    subscriber("bo@example.org", query="gpu=h100")
    subscriber("cy@example.org", query="gpu=b200")


def test_dry_run_reports_each_filter_and_sends_claims_and_records_nothing(subscribers):
    out = StringIO()
    call_command("send_digest", "--dry-run", f"--at={SEND_AT.isoformat()}", stdout=out)
    report = out.getvalue()
    assert "gpu=h100: 2 subscriber(s), 1 change(s) [drops 1" in report
    assert "gpu=b200: 1 subscriber(s), 0 change(s)" in report and "nothing sent" in report
    assert not mail.outbox and not Delivery.objects.exists()
    assert not Subscription.objects.filter(claim_token__isnull=False).exists()


def test_a_real_run_sends(subscribers):
    out = StringIO()
    call_command("send_digest", f"--at={SEND_AT.isoformat()}", stdout=out)
    assert "sent 2, skipped 1" in out.getvalue() and len(mail.outbox) == 2


def test_a_bad_moment_is_a_clear_error(subscribers):
    with pytest.raises(CommandError, match="ISO 8601"):
        call_command("send_digest", "--at=next monday")
    with pytest.raises(CommandError, match="time zone"):
        call_command("send_digest", "--at=2026-11-23T08:00:00")
