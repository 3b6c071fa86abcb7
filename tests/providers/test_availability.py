"""The availability service against the real test database: changes only (not every poll), day counters and
in-stock shares summed in the database, a price run that says nothing about stock keeps the last known state, and a
failed poll of any kind changes no state."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from providers import availability_sync, facts_sync, runs
from providers.models import AvailabilityChange, AvailabilityDay, AvailabilityPoll, Offer, RunStatus
from scrapers import registry
from scrapers.availability import AvailabilityResult, ScrapedAvailability
from scrapers.base import SchemaScrapeError, SourceInfo, TransientScrapeError
from tests.factories import ScriptedSource, result, scraped

pytestmark = pytest.mark.django_db

SLUG = "stock-test"
T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


class StockSource(ScriptedSource):
    info = SourceInfo(slug=SLUG, provider="lambda", name="Stock test", kind="api", url="https://example.org/api")
    response = result(scraped("a"), scraped("b"), scraped("c"))
    answers: list = []
    asked: list = []

    @classmethod
    def recorded_availability(cls):
        return {}

    def fetch_availability(self, known):
        StockSource.asked.append(set(known))
        answer = StockSource.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return AvailabilityResult(states=[ScrapedAvailability(key, "us-east-1", *value) for key, value in
                                          answer.items()])


@pytest.fixture
def stock(monkeypatch):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    monkeypatch.setitem(registry.SOURCES, SLUG, StockSource)
    StockSource.answers, StockSource.asked = [], []
    runs.source_scrape(slug=SLUG)
    return StockSource


def poll_at(moment, monkeypatch, answer):
    StockSource.answers.append(answer)
    monkeypatch.setattr(runs.timezone, "now", lambda: moment)
    try:
        return runs.availability_poll(slug=SLUG)
    except TransientScrapeError:
        return AvailabilityPoll.objects.latest("started_at")


def offer(instance_type):
    return Offer.objects.get(source__slug=SLUG, instance_type=instance_type)


def test_only_changes_are_stored_and_each_check_is_counted(stock, monkeypatch):
    for minutes, a_state in [(0, "available"), (15, "available"), (30, "unavailable"), (45, "unavailable"),
                             (60, "available")]:
        poll_at(T0 + timedelta(minutes=minutes), monkeypatch, {"a": (a_state, None), "b": ("limited", 3)})
    a = offer("a")
    assert list(a.availability_changes.values_list("availability", "changed_at")) == [
        ("available", T0), ("unavailable", T0 + timedelta(minutes=30)), ("available", T0 + timedelta(minutes=60))]
    assert offer("b").availability_changes.count() == 1
    assert (a.availability, a.availability_since, a.availability_checked_at) == (
        "available", T0 + timedelta(minutes=60), T0 + timedelta(minutes=60))
    day = AvailabilityDay.objects.get(offer=a)
    assert (day.day, day.checks, day.in_stock) == (T0.date(), 5, 3)
    assert a.in_stock_share_7d == a.in_stock_share_30d == Decimal("0.6000")
    assert offer("b").in_stock_share_7d == Decimal("1.0000")
    # Never stated: unknown stays unknown, with nothing recorded.
    c = offer("c")
    assert (c.availability, c.availability_checked_at, c.in_stock_share_7d) == ("unknown", None, None)
    assert not c.availability_changes.exists()
    assert StockSource.asked[0] == {("a", "us-east-1"), ("b", "us-east-1"), ("c", "us-east-1")}


def test_a_changed_count_is_a_change(stock, monkeypatch):
    poll_at(T0, monkeypatch, {"b": ("limited", 3)})
    poll_at(T0 + timedelta(minutes=15), monkeypatch, {"b": ("limited", 1)})
    assert list(offer("b").availability_changes.values_list("available_count", flat=True)) == [3, 1]


def test_shares_use_the_last_7_and_30_days_of_counters(stock, monkeypatch):
    a = offer("a")
    # 20 days ago: 10 checks, none in stock; 3 days ago: 10 checks, all in stock.
    AvailabilityDay.objects.create(offer=a, day=(T0 - timedelta(days=20)).date(), checks=10, in_stock=0)
    AvailabilityDay.objects.create(offer=a, day=(T0 - timedelta(days=3)).date(), checks=10, in_stock=10)
    AvailabilityDay.objects.create(offer=a, day=(T0 - timedelta(days=40)).date(), checks=99, in_stock=0)
    poll_at(T0, monkeypatch, {"a": ("unavailable", None)})
    a.refresh_from_db()
    assert a.in_stock_share_7d == Decimal("0.9091")  # 10 of 11
    assert a.in_stock_share_30d == Decimal("0.4762")  # 10 of 21; the day 40 days ago is out of the window


@pytest.mark.parametrize("failure", [
    TransientScrapeError("timed out"), TransientScrapeError("429", retry_after=30),
    SchemaScrapeError("'available_plans' missing"), SchemaScrapeError("the listing is empty"),
])
def test_a_failed_poll_changes_no_state(stock, monkeypatch, failure):
    poll_at(T0, monkeypatch, {"a": ("available", None), "b": ("limited", 2)})
    before = list(Offer.objects.order_by("id").values())
    changes, days = AvailabilityChange.objects.count(), list(AvailabilityDay.objects.values())
    failed = poll_at(T0 + timedelta(minutes=15), monkeypatch, failure)
    assert failed.status == RunStatus.FAILED and type(failure).__name__ in failed.error
    assert list(Offer.objects.order_by("id").values()) == before  # still "available", checked at T0
    assert AvailabilityChange.objects.count() == changes
    assert list(AvailabilityDay.objects.values()) == days


def test_a_poll_before_any_price_run_fails_without_writing(monkeypatch):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    monkeypatch.setitem(registry.SOURCES, SLUG, StockSource)
    poll = runs.availability_poll(slug=SLUG)
    assert poll.status == RunStatus.FAILED and "price run comes first" in poll.error


def test_a_price_run_without_stock_keeps_the_polled_state(stock, monkeypatch):
    poll_at(T0, monkeypatch, {"a": ("unavailable", None)})
    monkeypatch.setattr(runs.timezone, "now", lambda: T0 + timedelta(hours=1))
    runs.source_scrape(slug=SLUG)  # its rows say "unknown"
    a = offer("a")
    assert (a.availability, a.availability_checked_at) == ("unavailable", T0)


def test_a_price_run_that_states_stock_is_a_check(stock, monkeypatch):
    poll_at(T0, monkeypatch, {"a": ("available", None)})
    StockSource.response = result(scraped("a", availability="unavailable"), scraped("b"), scraped("c"))
    try:
        monkeypatch.setattr(runs.timezone, "now", lambda: T0 + timedelta(hours=1))
        runs.source_scrape(slug=SLUG)
    finally:
        StockSource.response = result(scraped("a"), scraped("b"), scraped("c"))
    assert list(offer("a").availability_changes.values_list("availability", flat=True)) == [
        "available", "unavailable"]
    assert AvailabilityDay.objects.get(offer=offer("a")).checks == 2


def test_apply_is_a_constant_number_of_statements_whatever_the_number_of_offers(stock):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite (the embedded default) writes in batches of its variable limit")
    source = offer("a").source
    now = T0
    Offer.objects.bulk_create([
        Offer(provider_id=source.provider_id, source=source, instance_type=f"x{i}", region="r", gpu_name="H100",
              gpu_count=1, currency="USD", first_seen=now, last_seen=now) for i in range(2000)])
    states = [ScrapedAvailability(f"x{i}", "r", "available" if i % 3 else "unavailable") for i in range(2000)]
    with transaction.atomic(), CaptureQueriesContext(connection) as small:
        availability_sync.availability_apply(source=source, states=states[:200], now=now)
    with transaction.atomic(), CaptureQueriesContext(connection) as large:
        availability_sync.availability_apply(source=source, states=states, now=now + timedelta(minutes=15))
    assert len(large.captured_queries) <= len(small.captured_queries) + 1  # + one more batch of change inserts
    assert AvailabilityChange.objects.filter(offer__instance_type__startswith="x").count() == 2000


def test_snapshot_replays_recorded_stock_dated_on_its_recording(client):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    runs.source_scrape(slug="digitalocean", offline=True)
    poll = runs.availability_poll(slug="digitalocean", offline=True)
    assert poll.status == RunStatus.SUCCEEDED and poll.offline and poll.checked
    recorded_on = datetime.fromisoformat(registry.SNAPSHOT_AVAILABILITY["digitalocean"]).replace(tzinfo=UTC)
    offers = Offer.objects.filter(source__slug="digitalocean", availability_checked_at__isnull=False)
    assert offers and all(o.availability_recorded and o.availability_checked_at == recorded_on for o in offers)
    assert set(AvailabilityChange.objects.values_list("recorded", flat=True)) == {True}
    # A recording says nothing about the last 7 days, and is not a check.
    assert {o.in_stock_share_7d for o in offers} == {None} and not AvailabilityDay.objects.exists()
    html = client.get(f"/offers/{offers[0].pk}/").content.decode()
    assert "in a recording of 2025-08-29" in html


def test_longest_stockout_and_the_provider_gpu_summary_are_read_from_the_database(stock, monkeypatch):
    from providers import selectors

    now = T0 + timedelta(hours=10)
    # a: sold out from T0+1h to T0+4h (3 h), and again from T0+9h until now (1 h); b: always in stock.
    for hours, a_state in [(0, "available"), (1, "unavailable"), (4, "available"), (9, "unavailable")]:
        poll_at(T0 + timedelta(hours=hours), monkeypatch, {"a": (a_state, None), "b": ("available", None)})
    monkeypatch.setattr(runs.timezone, "now", lambda: now)
    assert selectors.offer_longest_stockout(offer=offer("a"), now=now) == timedelta(hours=3)
    assert selectors.offer_longest_stockout(offer=offer("b"), now=now) is None
    # A window that starts inside the first stretch clips it.
    assert selectors.offer_longest_stockout(offer=offer("a"), days=1, now=T0 + timedelta(hours=26)) == \
        timedelta(hours=17)
    [row] = selectors.availability_summary(provider=offer("a").provider, now=now)
    assert (row["offer__gpu__slug"], row["offers"], row["checks_7d"], row["in_stock_7d"]) == ("h100", 2, 8, 6)
    assert row["share_7d"] == row["share_30d"] == 0.75
    assert row["longest_stockout"] == timedelta(hours=3)


def test_poll_availability_command_and_the_sources_page_show_the_latest_poll(client, capsys):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    with pytest.raises(CommandError, match="not polled"):
        call_command("poll_availability", "aws-ec2")
    with pytest.raises(CommandError, match="1 poll"):
        call_command("poll_availability", "digitalocean", "--offline")  # no offers yet: the price run comes first
    runs.source_scrape(slug="digitalocean", offline=True)
    call_command("poll_availability", "digitalocean", "--offline")
    assert "digitalocean: succeeded" in capsys.readouterr().out
    html = client.get("/sources/").content.decode()
    row = html.split("DigitalOcean API v2")[1].split("</tr>")[0]
    assert "(replayed)" in row and "Succeeded" in row and "changed" in row
