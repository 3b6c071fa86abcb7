"""Freshness users can see: last_success_at recorded per source, offers of a source without a successful run for
more than STALE_AFTER_HOURS flagged stale by offer_list, and the status page showing last run, last success and age.
Plus the failure rules: a failed or refused run never touches good offers nor another source's."""

from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from providers import facts_sync, runs, selectors
from providers.models import DataSource, Offer, RunStatus, ScrapeRun
from scrapers import registry
from scrapers.base import SourceInfo
from tests.factories import DataSourceFactory, ScriptedSource, result, scraped

pytestmark = pytest.mark.django_db


def with_offer(slug, last_success_at):
    source = DataSourceFactory(slug=slug, last_success_at=last_success_at)
    now = timezone.now()
    Offer.objects.create(provider=source.provider, source=source, instance_type="i", region="r", gpu_name="H100",
                         gpu_count=1, currency="USD", first_seen=now, last_seen=now)
    return source


def test_offer_list_flags_offers_of_sources_without_a_recent_success(settings):
    settings.STALE_AFTER_HOURS = 24
    now = timezone.now()
    with_offer("fresh", now - timedelta(hours=23))
    with_offer("old", now - timedelta(hours=25))
    with_offer("never", None)
    flags = {offer.source.slug: offer.is_stale for offer in selectors.offer_list()}
    assert flags == {"fresh": False, "old": True, "never": True}
    assert selectors.stale_source_ids() == set(DataSource.objects.filter(slug__in=["old", "never"])
                                               .values_list("id", flat=True))
    settings.STALE_AFTER_HOURS = 26
    assert not selectors.offer_list().get(source__slug="old").is_stale


class Replay(ScriptedSource):
    info = SourceInfo(slug="replay-api", provider="replay", name="Replay", kind="api", url="https://example.org/")


@pytest.fixture
def replay(monkeypatch):
    DataSourceFactory(slug="replay-api", provider__slug="replay")
    monkeypatch.setitem(registry.SOURCES, "replay-api", Replay)
    return Replay


def test_success_sets_last_success_and_a_failure_keeps_it(replay):
    replay.response = result(scraped("a"), scraped("b"))
    run = runs.source_scrape(slug="replay-api")
    source = DataSource.objects.get(slug="replay-api")
    assert source.last_success_at == run.started_at
    from scrapers.base import SchemaScrapeError

    replay.response = SchemaScrapeError("column Price renamed")
    failed = runs.source_scrape(slug="replay-api")
    assert failed.status == RunStatus.FAILED and failed.error == "SchemaScrapeError: column Price renamed"
    assert DataSource.objects.get(slug="replay-api").last_success_at == run.started_at
    assert Offer.objects.filter(source=source, is_active=True).count() == 2


def test_empty_response_is_refused_and_keeps_offers(replay):
    replay.response = result(scraped("a"))
    runs.source_scrape(slug="replay-api")
    replay.response = result()
    run = runs.source_scrape(slug="replay-api")
    assert run.status == RunStatus.FAILED and "empty" in run.error
    assert Offer.objects.filter(is_active=True).count() == 1


def test_bad_rows_are_refused_alone_with_their_reason(replay):
    # The same row twice is one offer (said nowhere); a second row for its key at another price is refused.
    replay.response = result(
        scraped("ok"), scraped("ok"), scraped("ok", price="3.10"), scraped("", region="r"),
        scraped("huge", price="123456789"), scraped("odd", availability="plenty"), scraped("cur", currency="dollars"),
        scraped("x" * 121),
    )
    run = runs.source_scrape(slug="replay-api")
    assert run.status == RunStatus.SUCCEEDED and (run.created, run.skipped) == (1, 6)
    reasons = " | ".join(run.rejections)
    for expected in ("a second row for the same size and region at 3.10", "instance_type is blank",
                     "price_hour 123456789 is out of range",
                     "availability 'plenty'", "ISO 4217", "longer than 120"):
        assert expected in reasons


def test_a_failing_source_leaves_other_sources_unaffected(replay):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    replay.response = httpx.ConnectError("boom")  # an unexpected error class: an internal error
    with pytest.raises(httpx.ConnectError):
        runs.source_scrape(slug="replay-api")
    run = runs.source_scrape(slug="skypilot-lambda", offline=True)
    assert run.status == RunStatus.SUCCEEDED and run.created > 0
    assert ScrapeRun.objects.get(source__slug="replay-api").status == RunStatus.FAILED


def test_a_run_left_running_by_a_killed_worker_is_marked_interrupted(replay):
    stuck = ScrapeRun.objects.create(source=DataSource.objects.get(slug="replay-api"), started_at=timezone.now())
    replay.response = result(scraped("a"))
    runs.source_scrape(slug="replay-api")
    stuck.refresh_from_db()
    assert stuck.status == RunStatus.FAILED and "interrupted" in stuck.error


def test_status_page_shows_last_success_age_and_stale_flag(client):
    now = timezone.now()
    fresh = DataSourceFactory(slug="fresh", name="Fresh source", last_success_at=now - timedelta(hours=2))
    DataSourceFactory(slug="old", name="Old source", last_success_at=now - timedelta(days=3))
    ScrapeRun.objects.create(source=fresh, started_at=now - timedelta(hours=2), status=RunStatus.SUCCEEDED)
    page = client.get("/sources/").content.decode()
    assert "Last success" in page and "2\xa0hours" in page
    assert page.count("stale: its offers are flagged") == 1


@pytest.mark.parametrize("slug", sorted(registry.RECORDED_ON))
def test_a_replayed_recording_dates_its_prices_by_the_day_it_was_captured_a_live_read_does_not(slug, monkeypatch):
    """The offline replay of an API recording says how old its prices are (registry.RECORDED_ON, the day the
    recording is known to have been captured); the same answer read live is as fresh as the run (last_seen)."""
    from datetime import UTC, datetime

    from scrapers.http import RecordedTransport

    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    runs.source_scrape(slug=slug, offline=True)
    captured = datetime.fromisoformat(registry.RECORDED_ON[slug]).replace(tzinfo=UTC)
    replayed = Offer.objects.filter(source__slug=slug)
    assert replayed and {offer.price_as_of for offer in replayed} == {captured}
    assert not selectors.offer_list().filter(source__slug=slug, price_as_of__gte=timezone.now() - timedelta(days=1))
    if key := registry.SOURCES[slug].info.api_key_env:
        monkeypatch.setenv(key, "a-token")
    runs.source_scrape(slug=slug, transport=RecordedTransport(registry.recorded_routes(slug)))
    assert {offer.price_as_of for offer in Offer.objects.filter(source__slug=slug)} == {None}
