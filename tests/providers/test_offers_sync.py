"""offers_sync against the real test database (PostgreSQL in CI): idempotent upsert, history only on change,
deactivation instead of deletion, and refusal of a response that would wipe good data."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from providers import services
from providers.models import ExchangeRate, GpuModel, Offer, PriceObservation, RunStatus, ScrapeRun
from tests.factories import DataSourceFactory, result, scraped

pytestmark = pytest.mark.django_db


@pytest.fixture
def source():
    services.gpu_catalog_sync()
    return DataSourceFactory(slug="test-api", provider__slug="lambda")


def sync(source, res, now=None):
    now = now or timezone.now()
    run = ScrapeRun.objects.create(source=source, started_at=now)
    with transaction.atomic():
        return services.offers_sync(source=source, run=run, result=res, now=now)


def test_first_sync_creates_offers_with_normalised_prices_and_history(source):
    counts = sync(source, result(scraped(gpu_count="8", price="31.92", spot="12"), scraped("cpu-less", gpu_name="Z9")))
    assert (counts.created, counts.updated, counts.unchanged) == (2, 0, 0)
    offer = Offer.objects.get(instance_type="gpu_1x_h100")
    assert offer.gpu == GpuModel.objects.get(slug="h100")
    assert offer.price_per_gpu_hour_usd == Decimal("3.99000")
    assert offer.spot_price_per_gpu_hour_usd == Decimal("1.50000")
    assert (offer.country, offer.continent) == ("US", "NA")
    assert offer.history.count() == 1
    unknown = Offer.objects.get(instance_type="cpu-less")
    assert unknown.gpu is None and unknown.gpu_name == "Z9"
    assert counts.unknown_gpus == {"Z9": 1}


def test_unchanged_rerun_changes_nothing_but_last_seen(source):
    first = timezone.now() - timedelta(hours=1)
    sync(source, result(scraped(), scraped("b")), now=first)
    before = list(Offer.objects.order_by("id").values())
    counts = sync(source, result(scraped(), scraped("b")))
    assert (counts.created, counts.updated, counts.unchanged, counts.deactivated) == (0, 0, 2, 0)
    after = list(Offer.objects.order_by("id").values())
    for old, new in zip(before, after, strict=True):
        assert new["last_seen"] > old["last_seen"]
        for ignored in ("last_seen", "last_run_id"):
            old.pop(ignored), new.pop(ignored)
        assert old == new
    assert PriceObservation.objects.count() == 2


def test_price_change_updates_offer_and_appends_history(source):
    sync(source, result(scraped(price="2.49"), scraped("b", price="1.00")))
    counts = sync(source, result(scraped(price="2.29"), scraped("b", price="1.00")))
    assert (counts.updated, counts.unchanged) == (1, 1)
    offer = Offer.objects.get(instance_type="gpu_1x_h100")
    assert offer.price_hour == Decimal("2.29")
    assert list(offer.history.order_by("observed_at").values_list("price_hour", flat=True)) == [
        Decimal("2.49"), Decimal("2.29")]


def test_availability_change_appends_history(source):
    sync(source, result(scraped(availability="available")))
    sync(source, result(scraped(availability="unavailable")))
    offer = Offer.objects.get()
    assert [h.availability for h in offer.history.order_by("observed_at")] == ["available", "unavailable"]


def test_offer_missing_from_response_is_deactivated_not_deleted_and_comes_back(source):
    sync(source, result(scraped("a"), scraped("b"), scraped("c")))
    counts = sync(source, result(scraped("a"), scraped("b")))
    assert counts.deactivated == 1
    gone = Offer.objects.get(instance_type="c")
    assert gone.is_active is False
    last_seen = gone.last_seen
    sync(source, result(scraped("a"), scraped("b"), scraped("c")))
    gone.refresh_from_db()
    assert gone.is_active is True and gone.last_seen > last_seen


def test_response_that_would_deactivate_more_than_half_is_refused(source):
    sync(source, result(*[scraped(f"i{n}") for n in range(10)]))
    with pytest.raises(services.ShrinkRefusedError, match="would deactivate 6 of 10"):
        sync(source, result(*[scraped(f"i{n}") for n in range(4)]))
    assert Offer.objects.filter(is_active=True).count() == 10


def test_sync_query_count_does_not_grow_with_offers(source):
    from django.db import connection

    def queries_for(n):
        # A provider of its own each time: the same SKUs listed by two sources of one provider are one offer.
        target = DataSourceFactory()
        sync(target, result(*[scraped(f"old-{i}") for i in range(n)], *[scraped(f"gone-{i}") for i in range(n // 5)]))
        changed = [scraped(f"old-{i}", price="9.99" if i % 2 else "2.49") for i in range(n)]
        with CaptureQueriesContext(connection) as ctx:
            sync(target, result(*changed, *[scraped(f"new-{i}") for i in range(n)]))
        return len(ctx)

    # Creates, updates, history and deactivation in batches: as many statements for 10 offers as for 400.
    assert queries_for(10) == queries_for(400)


def test_eur_prices_are_converted_with_the_latest_ecb_rate(source):
    day = timezone.now().date()
    ExchangeRate.objects.create(currency="USD", date=day - timedelta(days=1), per_eur=Decimal("1.0"),
                                source_url="https://www.ecb.europa.eu/")
    ExchangeRate.objects.create(currency="USD", date=day, per_eur=Decimal("1.1"), source_url="https://www.ecb.europa.eu/")
    sync(source, result(scraped(currency="EUR", price="10", gpu_count="2")))
    offer = Offer.objects.get()
    assert offer.price_hour == Decimal("10") and offer.currency == "EUR"
    assert offer.price_hour_usd == Decimal("11.00000")
    assert offer.price_per_gpu_hour_usd == Decimal("5.50000")


def test_currency_without_rate_leaves_usd_unknown(source):
    sync(source, result(scraped(currency="CNY", price="20")))
    offer = Offer.objects.get()
    assert offer.price_hour_usd is None and offer.price_per_gpu_hour_usd is None


def test_failed_scrape_keeps_offers_and_records_reason(source, monkeypatch):
    services.providers_sync()
    services.source_scrape(slug="skypilot-lambda", offline=True)
    active = Offer.objects.filter(source__slug="skypilot-lambda", is_active=True).count()
    assert active == 374

    import httpx

    broken = httpx.MockTransport(lambda request: httpx.Response(200, text="<html>we are down</html>"))
    run = services.source_scrape(slug="skypilot-lambda", transport=broken)
    assert run.status == RunStatus.FAILED
    assert "no GPU rows" in run.error or "columns missing" in run.error
    assert Offer.objects.filter(source__slug="skypilot-lambda", is_active=True).count() == active


def test_transient_failure_is_recorded_then_raised_for_retry(source):
    import httpx

    from scrapers.base import TransientScrapeError

    services.providers_sync()
    down = httpx.MockTransport(lambda request: httpx.Response(503, text="busy"))
    with pytest.raises(TransientScrapeError):
        services.source_scrape(slug="skypilot-lambda", transport=down)
    run = ScrapeRun.objects.get(source__slug="skypilot-lambda")
    assert run.status == RunStatus.FAILED and "503" in run.error


def test_an_offer_tied_to_no_region_is_kept_with_a_blank_region(source):
    """RunPod prices the same everywhere; Linode's type list does not say where a plan is sold."""
    counts = sync(source, result(scraped("gpu_1x", region="")))
    assert counts.created == 1
    offer = Offer.objects.get()
    assert offer.region == "" and (offer.country, offer.continent) == ("", "")


def test_memory_per_gpu_comes_from_the_catalog_only_when_the_gpu_is_unambiguous(source):
    sync(source, result(scraped("a10", gpu_name="A10"), scraped("h100", gpu_name="H100"),
                        scraped("own", gpu_name="A10", gpu_memory_gb=Decimal("22.5"))))
    memory = dict(Offer.objects.values_list("instance_type", "gpu_memory_gb"))
    assert memory["a10"] == Decimal("24.0")  # the catalog's A10
    assert memory["h100"] is None  # "H100" alone: 80 GB SXM/PCIe or 94 GB NVL, so unknown
    assert memory["own"] == Decimal("22.5")  # what the source states wins
