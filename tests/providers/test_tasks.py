"""The Celery tasks, called directly (the real worker is exercised in tests/integration): per-source lock, retries
for transient errors only (Retry-After respected), on-commit fan-out, the daily and weekly chores, and the beat
table's rules. The lock lives in the local Redis (CELERY_BROKER_URL), so these are `services` tests."""

import http.server
import threading
from datetime import UTC, datetime

import httpx
import pytest
from celery.exceptions import Retry

from comparator.celery import BEAT_SCHEDULE, app
from providers import facts_sync, runs, tasks
from providers.models import Capability, ExchangeRate, LinkCheck, ScrapeRun
from scrapers import registry
from tests.factories import ProviderFactory

pytestmark = [pytest.mark.django_db, pytest.mark.services]

SLUG = "skypilot-lambda"


@pytest.fixture
def lambda_provider():
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()


@pytest.fixture
def answering(monkeypatch):
    """Make the source's client answer with `handler` (an httpx.MockTransport), through the real source_scrape."""
    make_client = registry.make_client

    def use(handler):
        monkeypatch.setattr(registry, "make_client",
                            lambda slug, **kw: make_client(slug, offline=False, transport=httpx.MockTransport(handler)))
    return use


@pytest.fixture
def retries(monkeypatch):
    calls = []

    def fake_retry(exc=None, countdown=None, **kwargs):
        calls.append(countdown)
        return Retry(exc=exc, when=countdown)

    monkeypatch.setattr(tasks.provider_scrape, "retry", fake_retry)
    return calls


@pytest.mark.django_db(transaction=True)
def test_second_run_of_the_same_source_skips_while_the_first_holds_the_lock(lambda_provider):
    from django.db import connection

    held, release = threading.Event(), threading.Event()

    def first_run():  # the lock every path takes, held from another connection as another run would
        with runs.source_lock(SLUG):
            held.set()
            release.wait(30)
        connection.close()

    thread = threading.Thread(target=first_run)
    thread.start()
    try:
        assert held.wait(30)
        result = tasks.provider_scrape(SLUG, offline=True)
    finally:
        release.set()
        thread.join(30)
    assert "another run" in result["skipped"]
    assert not ScrapeRun.objects.exists()
    # Released afterwards: the next run goes ahead.
    assert tasks.provider_scrape(SLUG, offline=True)["status"] == "succeeded"


def test_redelivered_task_takes_over_its_own_lock():
    with tasks.task_lock("source:x", token="task-1") as first:
        with tasks.task_lock("source:x", token="task-1") as again, tasks.task_lock("source:x", token="task-2") as other:
            assert (first, again, other) == (True, True, False)


def test_transient_error_is_retried_with_backoff(lambda_provider, answering, retries):
    answering(lambda request: httpx.Response(503, text="busy"))
    with pytest.raises(Retry):
        tasks.provider_scrape(SLUG)
    assert len(retries) == 1 and 60 <= retries[0] <= 66
    assert ScrapeRun.objects.get().status == "failed"


def test_retry_after_is_respected(lambda_provider, answering, retries):
    answering(lambda request: httpx.Response(429, headers={"Retry-After": "7"}))
    with pytest.raises(Retry):
        tasks.provider_scrape(SLUG)
    assert retries == [7.0]


def test_retry_after_longer_than_we_wait_is_left_to_the_next_run(lambda_provider, answering, retries):
    from scrapers.base import TransientScrapeError

    answering(lambda request: httpx.Response(429, headers={"Retry-After": "7200"}))
    with pytest.raises(TransientScrapeError):
        tasks.provider_scrape(SLUG)
    assert retries == []


@pytest.mark.parametrize("status", [401, 403, 404])
def test_bad_key_or_broken_response_is_recorded_and_not_retried(lambda_provider, answering, retries, status):
    answering(lambda request: httpx.Response(status))
    result = tasks.provider_scrape(SLUG)
    assert result["status"] == "failed" and retries == []
    assert f"HTTP {status}" in ScrapeRun.objects.get().error


def test_programming_error_is_recorded_and_not_retried(lambda_provider, monkeypatch, retries):
    def broken(slug, **kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(registry, "make_client", broken)
    with pytest.raises(KeyError):
        tasks.provider_scrape(SLUG)
    assert retries == [] and "internal error: KeyError" in ScrapeRun.objects.get().error


def test_fan_out_enqueues_each_source_of_the_kind_only_on_commit(monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(tasks.provider_scrape, "apply_async", lambda args, expires: sent.append((args[0], expires)))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        slugs = tasks.sources_scrape("catalog", expires=60)
        assert sent == []  # nothing leaves before the transaction commits
    catalog = sorted(registry.scheduled_sources("catalog"))
    assert "skypilot-oci" not in catalog  # superseded by Oracle's own price list, which needs no key
    assert len(callbacks) == len(catalog) and sorted(slugs) == catalog
    assert sorted(sent) == [(slug, 60) for slug in catalog]


def test_exchange_rates_task_stores_the_recorded_ecb_rates():
    result = tasks.exchange_rates_refresh(offline=True)
    assert result["rates"] > 0 and ExchangeRate.objects.filter(currency="USD").exists()


def _period(schedule) -> float:
    """Shortest gap between consecutive runs over two weeks of a crontab."""
    moment, gaps = datetime(2026, 1, 5, tzinfo=UTC), []
    previous = None
    while moment < datetime(2026, 1, 19, tzinfo=UTC):
        start, delta, _ = schedule.remaining_delta(moment)
        moment = start + delta
        if previous is not None:
            gaps.append((moment - previous).total_seconds())
        previous = moment
    return min(gaps)


@pytest.mark.parametrize("name", sorted(BEAT_SCHEDULE))
def test_every_beat_entry_names_a_task_and_expires_within_its_period(name):
    entry = BEAT_SCHEDULE[name]
    app.loader.import_default_modules()
    assert entry["task"] in app.tasks
    period = _period(entry["schedule"])
    assert 0 < entry["options"]["expires"] < period
    # The fanned-out per-source runs expire within the period too.
    assert entry.get("kwargs", {}).get("expires", 0) < period


def test_beat_runs_apis_hourly_catalogs_six_hourly_rates_daily_links_weekly():
    pipeline = ("scrape-provider-apis", "scrape-catalogs", "refresh-exchange-rates", "check-source-links")
    periods = {name: _period(BEAT_SCHEDULE[name]["schedule"]) / 3600 for name in pipeline}
    assert periods == {"scrape-provider-apis": 1, "scrape-catalogs": 6, "refresh-exchange-rates": 24,
                       "check-source-links": 168}
    kinds = {BEAT_SCHEDULE[name]["kwargs"]["kind"] for name in pipeline[:2]}
    assert kinds == {"api", "catalog"}


class Pages(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self):
        if self.path == "/no-head":
            self.send_response(405)
        else:
            self.send_response({"/ok": 200, "/gone": 404, "/moved": 301}.get(self.path, 500))
            if self.path == "/moved":
                self.send_header("Location", "/ok")
        self.end_headers()

    def do_GET(self):
        self.send_response(200 if self.path in ("/ok", "/no-head") else 404)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture
def pages():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_link_check_records_broken_source_links_and_keeps_when_they_broke(pages):
    provider = ProviderFactory()
    for key, path in (("mig", "/ok"), ("mps", "/gone"), ("roce", "/no-head"), ("efa", "/moved"), ("amd", "/gone")):
        Capability.objects.create(provider=provider, key=key, value="yes", source_url=pages + path)
    Capability.objects.create(provider=provider, key="intel", value="yes", source_url="http://127.0.0.1:9/closed")
    assert tasks.source_links_check() == {"checked": 5, "broken": 2}
    checks = {check.url.removeprefix(pages): check for check in LinkCheck.objects.all()}
    assert {path for path, check in checks.items() if check.ok} == {"/ok", "/no-head", "/moved"}
    assert checks["/gone"].status_code == 404 and checks["/gone"].error == "HTTP 404"
    assert "could not connect" in checks["http://127.0.0.1:9/closed"].error
    since = checks["/gone"].failing_since
    tasks.source_links_check()
    assert LinkCheck.objects.get(url=pages + "/gone").failing_since == since
    from providers.selectors import link_check_failures

    assert [(check.url, names) for check, names in link_check_failures()][0][1] == [provider.name]
