"""/healthz and /metrics (comparator.health): what the Kubernetes probes and Prometheus read."""

import re
import uuid
from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from digest.models import Delivery, Subscription
from providers.models import DataVersion, Offer, RunStatus, ScrapeRun
from tests.factories import DataSourceFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_down(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.mark.services
def test_healthz_is_ok_when_database_and_redis_answer(client, settings):
    settings.HEALTH_CHECK_REDIS = True
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok", "cache": "not used"}
    assert "no-cache" in response["Cache-Control"]


def test_healthz_stays_ready_naming_the_broker_when_it_is_down(client, settings, redis_down):
    settings.HEALTH_CHECK_REDIS = True
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["broker"] == "unreachable"
    assert response.json()["database"] == "ok"


def test_healthz_is_503_naming_the_database_when_it_fails(client, settings, monkeypatch):
    settings.HEALTH_CHECK_REDIS = False

    def broken():
        raise OperationalError("connection refused")
    monkeypatch.setattr(connection, "cursor", broken)
    response = client.get("/healthz")
    assert response.status_code == 503 and response.json() == {"status": "unavailable", "database": "unreachable",
                                                                "broker": "not used", "cache": "not used"}


def test_the_liveness_probe_only_asks_the_process(client, settings, redis_down, monkeypatch):
    settings.HEALTH_CHECK_REDIS = True
    monkeypatch.setattr(connection, "cursor", lambda: (_ for _ in ()).throw(OperationalError("down")))
    assert client.get("/healthz?probe=live").status_code == 200


def parse(text: str) -> dict[tuple[str, frozenset], float]:
    """The Prometheus text format, strictly: every sample line is name{labels} value, every family has HELP and
    TYPE before its samples."""
    samples, declared = {}, set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            assert kind in {"gauge", "counter"}
            declared.add(name)
            continue
        match = re.fullmatch(r'([a-z_]+)(?:\{((?:[a-z_]+="(?:[^"\\]|\\.)*",?)*)\})? (\S+)', line)
        assert match, line
        name, labels, value = match.groups()
        assert name in declared, name
        pairs = frozenset(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', labels or ""))
        samples[(name, pairs)] = float(value)
    return samples


def test_metrics_expose_source_freshness_run_outcomes_offers_and_digest_sends(client):
    now = timezone.now()
    fresh = DataSourceFactory(slug="fresh-api", kind="api", provider__slug="p1",
                              last_success_at=now - timedelta(hours=2))
    never = DataSourceFactory(slug="never", kind="catalog", provider__slug="p2")
    for status in (RunStatus.SUCCEEDED, RunStatus.SUCCEEDED, RunStatus.FAILED):
        ScrapeRun.objects.create(source=fresh, started_at=now - timedelta(hours=3), status=status)
    ScrapeRun.objects.create(source=fresh, started_at=now - timedelta(hours=1), status=RunStatus.FAILED)
    ScrapeRun.objects.create(source=never, started_at=now, status=RunStatus.SUCCEEDED, offline=True)  # a replay
    for n in range(3):
        Offer.objects.create(source=fresh, provider=fresh.provider, instance_type=f"i{n}", region="r", gpu_name="H100",
                             gpu_count=1, currency="USD", first_seen=now, last_seen=now, is_active=n < 2)
    subscription = Subscription.objects.create(email="a@example.org", confirmed_at=now)
    Delivery.objects.create(subscription=subscription, week=now.date(), status="sent", created_at=now)

    response = client.get("/metrics")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = parse(response.content.decode())
    labels = frozenset({("source", "fresh-api"), ("kind", "api"), ("provider", "p1")})
    age = samples[("comparator_source_last_success_age_seconds", labels)]
    assert 7100 < age < 7300
    assert samples[("comparator_source_last_success_timestamp_seconds", labels)] == pytest.approx(
        (now - timedelta(hours=2)).timestamp())
    assert samples[("comparator_source_never_succeeded",
                    frozenset({("source", "never"), ("kind", "catalog"), ("provider", "p2")}))] == 1
    assert samples[("comparator_source_runs_total", frozenset({("source", "fresh-api"), ("status", "succeeded")}))] == 2
    assert samples[("comparator_source_runs_total", frozenset({("source", "fresh-api"), ("status", "failed")}))] == 2
    assert ("comparator_source_runs_total", frozenset({("source", "never"), ("status", "succeeded")})) not in samples
    assert samples[("comparator_source_last_run_succeeded", frozenset({("source", "fresh-api")}))] == 0
    assert samples[("comparator_offers_active", frozenset({("provider", "p1")}))] == 2
    assert samples[("comparator_digest_deliveries_total", frozenset({("status", "sent")}))] == 1


def test_metrics_ask_for_the_bearer_token_when_one_is_set(client, settings):
    settings.METRICS_TOKEN = "s3cret-token"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200


def test_metrics_without_a_token_answer_only_this_machine(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.7").status_code == 403


def test_metrics_count_hits_and_misses_of_the_values_kept_until_the_data_changes(client):
    DataVersion.objects.get_or_create(id=1)  # a transactional test before this one may have flushed its row
    # A provider no other test has: its slug lookup is kept under the data version, which the rolled-back
    # transactions of other tests can have reached with the same filters.
    slug = f"kept-{uuid.uuid4().hex[:8]}"
    source = DataSourceFactory(slug=slug, kind="api", provider__slug=slug)
    now = timezone.now()
    Offer.objects.create(source=source, provider=source.provider, instance_type="i", region="r", gpu_name="H100",
                         gpu_count=1, currency="USD", first_seen=now, last_seen=now, is_active=True)

    def kept() -> dict:
        samples = parse(client.get("/metrics").content.decode())
        return {(cache, result): samples[("comparator_kept_lookups_total",
                                          frozenset({("cache", cache), ("result", result)}))]
                for cache in ("remembered",) for result in ("hit", "miss")}

    before = kept()
    for _ in range(2):  # the same question twice: the slug lookup read once, then answered from what was kept
        assert client.get(f"/api/v1/offers/?provider={slug}&gpu_count_min=1").status_code == 200
    after = kept()
    assert after["remembered", "miss"] > before["remembered", "miss"]
    assert after["remembered", "hit"] > before["remembered", "hit"]  # the provider slug lookup, kept
