"""End to end through the real broker and a real worker: a Celery worker process (started here, solo pool) on the
local Redis consumes provider_scrape for a source whose "provider API" is a loopback HTTP server replaying the
recorded Lambda catalog, and writes to pytest-django's PostgreSQL test database.

The second test kills the worker (SIGKILL) while the task is in flight and checks that the redelivered task
(acks_late: the message is only acknowledged after the task; a new worker restores it after the visibility timeout,
shortened here by env) converges to the same final state as an undisturbed run.

Both are bounded: every wait has a timeout and the worker is always killed in a finally.
"""

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from providers import facts_sync
from providers.models import Offer, PriceObservation, RunStatus, ScrapeRun
from providers.tasks import provider_scrape
from tests.integration.loopback_source import PATH, RECORDED, SLUG

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
CELERY = Path(sys.executable).with_name("celery")
# The recorded Lambda catalog has this many GPU offers (tests/providers/test_offers_sync.py agrees).
LAMBDA_OFFERS = 374
# Short enough for a test, long enough that the task's time limits (just under it) never cut a loaded machine's run.
VISIBILITY_TIMEOUT = 20


class Catalog(http.server.BaseHTTPRequestHandler):
    """Serves the recorded catalog; with `hold_first`, the first request waits until `release` is set."""

    requests = 0
    hold_first = False
    started = threading.Event()
    release = threading.Event()

    def do_GET(self):
        if self.path != f"/{PATH}":
            self.send_error(404)
            return
        type(self).requests += 1
        if self.hold_first and self.requests == 1:
            self.started.set()
            self.release.wait(timeout=60)
        body = RECORDED.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass  # the worker that asked was killed

    def log_message(self, *args):
        pass


@pytest.fixture
def catalog_server():
    handler = type("CatalogHandler", (Catalog,), {"started": threading.Event(), "release": threading.Event()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        handler.release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def lambda_provider():
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()


def database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """One `celery worker` subprocess on its own queue, with the test database and the loopback source."""

    def __init__(self, queue: str, base_url: str, log: Path):
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "comparator.settings.test",
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "LOOPBACK_BASE_URL": base_url,
            "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT),
            "CELERY_TASK_TIME_LIMIT": str(VISIBILITY_TIMEOUT - 1),
            "CELERY_TASK_SOFT_TIME_LIMIT": str(VISIBILITY_TIMEOUT - 2),
            "PYTHONPATH": str(ROOT),
        }
        self.log = log
        self.handle = log.open("ab")
        self.process = subprocess.Popen(
            [str(CELERY), "-A", "comparator", "worker", "--pool=solo", "--concurrency=1", "-Q", queue,
             "--include", "tests.integration.loopback_source", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "--loglevel=INFO", "-n", f"{queue}-{uuid.uuid4().hex[:6]}@%h"],
            cwd=ROOT, env=env, stdout=self.handle, stderr=subprocess.STDOUT,
        )

    def kill(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.handle.close()


def wait_for(condition, *, timeout: float, what: str, workers=(), log: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        for worker in workers:
            assert worker.process.poll() is None, f"worker exited early:\n{worker.log.read_text()[-3000:]}"
        time.sleep(0.2)
    tail = log.read_text()[-3000:] if log and log.exists() else ""
    pytest.fail(f"timed out after {timeout}s waiting for {what}\n{tail}")


def succeeded():
    return ScrapeRun.objects.filter(source__slug=SLUG, status=RunStatus.SUCCEEDED).exists()


def assert_final_state():
    active = Offer.objects.filter(source__slug=SLUG, is_active=True)
    assert active.count() == LAMBDA_OFFERS
    assert Offer.objects.filter(source__slug=SLUG).count() == LAMBDA_OFFERS
    # One first observation per offer: no attempt wrote half a run, none wrote it twice.
    assert PriceObservation.objects.filter(offer__source__slug=SLUG).count() == LAMBDA_OFFERS
    run = ScrapeRun.objects.get(source__slug=SLUG, status=RunStatus.SUCCEEDED)
    assert (run.created, run.updated, run.deactivated) == (LAMBDA_OFFERS, 0, 0)


def test_worker_scrapes_the_loopback_api_into_postgresql(catalog_server, lambda_provider, tmp_path):
    handler, base_url = catalog_server
    queue = f"it-{uuid.uuid4().hex}"
    log = tmp_path / "worker.log"
    worker = Worker(queue, base_url, log)
    try:
        provider_scrape.apply_async(args=[SLUG], queue=queue)
        wait_for(succeeded, timeout=90, what="a succeeded run", workers=[worker], log=log)
    finally:
        worker.kill()
    assert_final_state()
    assert handler.requests == 1


@pytest.mark.slow
def test_worker_killed_mid_task_is_redelivered_and_converges(catalog_server, lambda_provider, tmp_path):
    handler, base_url = catalog_server
    handler.hold_first = True
    queue = f"it-{uuid.uuid4().hex}"
    log = tmp_path / "worker.log"
    first = Worker(queue, base_url, log)
    second = None
    try:
        provider_scrape.apply_async(args=[SLUG], queue=queue)
        wait_for(handler.started.is_set, timeout=90, what="the first worker to fetch", workers=[first], log=log)
        fetching_since = time.monotonic()
        first.kill()  # SIGKILL while the task is in flight: nothing acknowledged the message
        handler.release.set()
        assert ScrapeRun.objects.get(source__slug=SLUG).status == RunStatus.RUNNING
        # The Redis transport restores unacknowledged messages older than the visibility timeout when a worker
        # starts (and then only every 100 s), so start the second worker once the message is that old.
        time.sleep(max(0.0, VISIBILITY_TIMEOUT + 1 - (time.monotonic() - fetching_since)))
        second = Worker(queue, base_url, log)
        wait_for(succeeded, timeout=VISIBILITY_TIMEOUT + 90, what="the redelivered run", workers=[second], log=log)
    finally:
        first.kill()
        if second is not None:
            second.kill()
    assert_final_state()
    assert handler.requests == 2
    interrupted = ScrapeRun.objects.get(source__slug=SLUG, status=RunStatus.FAILED)
    assert "interrupted" in interrupted.error
