"""End to end through the real parts: a Celery worker process on Redis, PostgreSQL, and an SMTP server on loopback.

subscribe -> confirmation email over SMTP -> confirm -> a week of history -> the beat task on the broker -> exactly
one multipart email per due subscriber with the right changes -> the task again -> nothing new.
"""

import os
import re
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from comparator.celery import app
from digest.models import Delivery, Subscription
from digest.tasks import digest_send_due
from digest.weeks import digest_week

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def worker(smtp_settings, tmp_path):
    if connection.vendor != "postgresql":
        pytest.fail("the worker end-to-end test needs PostgreSQL (the worker is another process)")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "comparator.settings.test",
        "DATABASE_URL": _database_url(),  # the test database, never the developer's
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp_settings.port),
    }
    app.control.purge()  # a message left on this test broker db by an earlier aborted run must not run here
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "comparator", "worker", "--pool=solo", "--loglevel=INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"digest-e2e-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not app.control.ping(timeout=1):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Celery worker did not start:\n{(tmp_path / 'worker.log').read_text()}")
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def test_subscribe_confirm_and_the_weekly_task_send_exactly_once(world, client, worker, smtp_settings):
    # Subscribe two addresses (one in Chinese) and one that never confirms.
    for email, language in (("ann@example.org", "en"), ("bo@example.org", "zh-hans"), ("cy@example.org", "en")):
        response = client.post("/digest/subscribe/?gpu=h100", {"email": email, "language": language})
        assert response.status_code == 200
    deadline = time.monotonic() + 60  # the worker sends the confirmations
    while len(smtp_settings.messages) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(smtp_settings.messages) == 3
    for message in smtp_settings.messages[:2]:
        body = message.get_body(("plain",)).get_content()
        # the host it was served on, in the language chosen (bo's link opens the Chinese page)
        path = re.search(r"http://testserver((?:/zh-hans)?/digest/confirm/\S+/)", body).group(1)
        assert path.startswith("/zh-hans/") == ("bo@example.org" in message["To"])
        assert client.post(path).status_code == 302
    assert sorted(Subscription.objects.values_list("email", flat=True)) == ["ann@example.org", "bo@example.org"]
    smtp_settings.messages.clear()

    # A week of history: one H100 price drop, one new H100 offer, an A100 change nobody asked for.
    week = digest_week(timezone.now())
    mid = week.start + timedelta(days=2)
    world.change(world.offer("gpu_1x_h100", price="2.49", at=week.start - timedelta(days=1)), at=mid, price="1.99")
    world.offer("gpu_8x_h100", price="23.92", gpu_count="8", at=mid)
    world.change(world.offer("gpu_1x_a100", gpu="a100-80gb", price="1.29"), at=mid, price="0.99")

    summary = digest_send_due.delay(at=timezone.now().isoformat()).get(timeout=120)
    assert (summary["sent"], summary["claimed"], summary["filters"]) == (2, 2, 1)
    assert sorted(m["To"] for m in smtp_settings.messages) == ["ann@example.org", "bo@example.org"]
    for message in smtp_settings.messages:
        assert [part.get_content_type() for part in message.iter_parts()] == ["text/plain", "text/html"]
        assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        text = message.get_body(("plain",)).get_content()
        assert "gpu_1x_h100" in text and "2.490 -> 1.990" in text and "-20.1%" in text and "gpu_8x_h100" in text
        assert "gpu_1x_a100" not in text
    bo = next(m for m in smtp_settings.messages if m["To"] == "bo@example.org")
    assert "降价" in bo.get_body(("plain",)).get_content()
    assert Delivery.objects.filter(status="sent").count() == 2

    again = digest_send_due.delay(at=timezone.now().isoformat()).get(timeout=120)
    assert (again["claimed"], again["sent"]) == (0, 0)
    assert len(smtp_settings.messages) == 2
