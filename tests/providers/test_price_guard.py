"""The price guard (issue #37, item 11): a price that moves more than MAX_MOVE times against the stored price of the
same machine, or falls below its GPU family's floor for the term, is held (not published) and listed on the sources
page until a later run states it again; a run is compared with the source's last good full set, so runs that each
lose a little cannot erode it."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation

from providers import facts_sync, ingest, pricing, runs
from providers.models import DataSource, HeldPrice, Offer, RunStatus, ScrapeRun
from scrapers import registry
from scrapers.base import SourceInfo
from tests.factories import DataSourceFactory, ScriptedSource, result, scraped

pytestmark = pytest.mark.django_db


@pytest.fixture
def source():
    facts_sync.gpu_catalog_sync()
    return DataSourceFactory(slug="test-api", provider__slug="lambda")


def sync(source, res, *, allow_shrink=False, now=None):
    now = now or timezone.now()
    run = ScrapeRun.objects.create(source=source, started_at=now)
    with transaction.atomic():
        return ingest.offers_sync(source=source, run=run, result=res, now=now, allow_shrink=allow_shrink)


def test_a_price_ten_times_the_published_one_is_held_until_a_later_run_states_it_again(source):
    start = timezone.now() - timedelta(hours=2)
    sync(source, result(scraped(price="2.49"), scraped("b", price="2.49")), now=start)
    published = Offer.objects.get(instance_type="gpu_1x_h100")

    counts = sync(source, result(scraped(price="24.90"), scraped("b", price="2.59")),
                  now=start + timedelta(hours=1))
    offer = Offer.objects.get(pk=published.pk)
    assert counts.held == 1 and counts.updated == 1 and counts.deactivated == 0
    assert offer.is_active and offer.price_hour == Decimal("2.49") and offer.last_seen == published.last_seen
    hold = HeldPrice.objects.get()
    assert (hold.instance_type, hold.price_hour) == ("gpu_1x_h100", Decimal("24.90"))
    assert "10 times the published $2.49" in hold.reason
    assert Offer.objects.get(instance_type="b").price_hour == Decimal("2.59")  # an ordinary move is published

    counts = sync(source, result(scraped(price="24.90"), scraped("b", price="2.59")))
    assert counts.held == 0 and Offer.objects.get(pk=published.pk).price_hour == Decimal("24.90")
    assert not HeldPrice.objects.exists()
    assert any("a second run states the price the guard held" in note for note in counts.rejections)


def test_a_hold_ends_when_the_price_comes_back_and_is_replaced_when_another_is_stated(source):
    sync(source, result(scraped(price="2.49"), scraped("b")), now=timezone.now() - timedelta(hours=3))
    sync(source, result(scraped(price="0.30"), scraped("b")), now=timezone.now() - timedelta(hours=2))
    first = HeldPrice.objects.get()
    sync(source, result(scraped(price="0.31"), scraped("b")), now=timezone.now() - timedelta(hours=1))
    replaced = HeldPrice.objects.get()
    assert replaced.price_hour == Decimal("0.31") and replaced.first_held_at > first.first_held_at
    assert Offer.objects.get(instance_type="gpu_1x_h100").price_hour == Decimal("2.49")

    sync(source, result(scraped(price="2.45"), scraped("b")))
    assert not HeldPrice.objects.exists()
    assert Offer.objects.get(instance_type="gpu_1x_h100").price_hour == Decimal("2.45")


def test_a_new_machine_priced_below_its_gpus_floor_is_not_listed_until_confirmed(source):
    counts = sync(source, result(scraped("cheap", price="0.0001"), scraped("b")))
    assert counts.held == 1 and counts.created == 1
    assert not Offer.objects.filter(instance_type="cheap").exists()
    assert "below the floor of $0.36 for H100" in HeldPrice.objects.get().reason


def test_spot_has_its_own_floor_and_a_slice_is_judged_per_whole_gpu(source):
    floor = pricing.floor_of("H100")
    assert floor.spot < floor.on_demand
    between = (floor.spot + floor.on_demand) / 2
    counts = sync(source, result(
        scraped("spot-ok", price="2.49", spot=str(between)),           # a spot price above the spot floor
        scraped("od-low", price=str(between)),                          # the same figure on demand is held
        scraped("slice", gpu_count="0.125", price="0.10", gpu_fraction=Decimal("0.125")),   # $0.80 per GPU
        scraped("slice-low", gpu_count="0.125", price="0.02", gpu_fraction=Decimal("0.125")),  # $0.16 per GPU
    ))
    assert counts.held == 2
    assert set(Offer.objects.values_list("instance_type", flat=True)) == {"spot-ok", "slice"}
    assert set(HeldPrice.objects.values_list("instance_type", flat=True)) == {"od-low", "slice-low"}


def test_runs_that_each_lose_a_little_cannot_erode_the_last_good_full_set():
    facts_sync.gpu_catalog_sync()
    catalog = DataSourceFactory(slug="test-catalog", kind="catalog", provider__slug="lambda")
    rows = [scraped(f"i{n}") for n in range(100)]
    sync(catalog, result(*rows), now=timezone.now() - timedelta(hours=3))
    sync(catalog, result(*rows[:95]), now=timezone.now() - timedelta(hours=2))   # 5% of the stored set
    sync(catalog, result(*rows[:91]), now=timezone.now() - timedelta(hours=1))   # 4% of the stored set
    with pytest.raises(ingest.ShrinkRefusedError, match="under 90% of the 100"):
        sync(catalog, result(*rows[:89]))                                       # 2% of the stored set, 11% of 100
    assert Offer.objects.filter(source=catalog, is_active=True).count() == 91

    sync(catalog, result(*rows[:89]), allow_shrink=True)  # an operator accepts the shrink: the baseline is reset
    assert DataSource.objects.get(pk=catalog.pk).full_set_size == 89
    sync(catalog, result(*rows[:85]))
    assert Offer.objects.filter(source=catalog, is_active=True).count() == 85


def test_every_bundled_price_is_above_its_floor(snapshot):
    """The floors are set far below real prices: none of the bundled snapshot's live offers may be under one."""
    families = dict(Offer.objects.filter(is_active=True).values_list("gpu_id", "gpu__family").distinct())
    under = [
        (offer_id, reason) for offer_id, gpu, price, spot in Offer.objects.filter(is_active=True).values_list(
            "id", "gpu_id", "price_per_gpu_hour_usd", "spot_price_per_gpu_hour_usd")
        if (reason := pricing.held_because(family=families.get(gpu), price=price, spot=spot,
                                           stored_price=None, stored_spot=None))]
    assert Offer.objects.filter(is_active=True).count() > 3000
    assert under == []


class GuardedSource(ScriptedSource):
    info = SourceInfo(slug="guard-test", provider="lambda", name="Guard test", kind="api",
                      url="https://example.org/api")


def test_a_run_counts_its_held_prices_and_the_sources_page_lists_each_with_its_reason(monkeypatch, client):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    monkeypatch.setitem(registry.SOURCES, GuardedSource.info.slug, GuardedSource)
    GuardedSource.response = result(scraped(price="2.49"), scraped("b"))
    runs.source_scrape(slug="guard-test")
    GuardedSource.response = result(scraped(price="249"), scraped("b"))
    run = runs.source_scrape(slug="guard-test")
    assert run.status == RunStatus.SUCCEEDED and run.held == 1

    with translation.override("en"):
        page = client.get(reverse("source-status")).content.decode()
    held = page[page.index('id="held"'):page.index('id="refused"')]
    assert "gpu_1x_h100" in held and "100 times the published $2.49" in held and "249.000 USD" in held
    assert '<a href="#held">1 held</a>' in page
