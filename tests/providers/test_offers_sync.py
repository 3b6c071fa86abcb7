"""offers_sync against the real test database (PostgreSQL in CI): idempotent upsert, history only on change,
deactivation instead of deletion, and refusal of a response that would wipe good data."""

import weakref
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from providers import facts_sync, ingest, runs
from providers.models import ExchangeRate, GpuModel, Offer, PriceObservation, RunStatus, ScrapeRun
from scrapers.base import ScrapedOffer, ScrapeResult
from tests.factories import DataSourceFactory, result, scraped

pytestmark = pytest.mark.django_db


@pytest.fixture
def source():
    facts_sync.gpu_catalog_sync()
    return DataSourceFactory(slug="test-api", provider__slug="lambda")


def sync(source, res, now=None):
    now = now or timezone.now()
    run = ScrapeRun.objects.create(source=source, started_at=now)
    with transaction.atomic():
        return ingest.offers_sync(source=source, run=run, result=res, now=now)


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
    with pytest.raises(ingest.ShrinkRefusedError, match="would deactivate 6 of 10"):
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
    facts_sync.providers_sync()
    runs.source_scrape(slug="skypilot-lambda", offline=True)
    active = Offer.objects.filter(source__slug="skypilot-lambda", is_active=True).count()
    assert active == 374

    import httpx

    broken = httpx.MockTransport(lambda request: httpx.Response(200, text="<html>we are down</html>"))
    run = runs.source_scrape(slug="skypilot-lambda", transport=broken)
    assert run.status == RunStatus.FAILED
    assert "no GPU rows" in run.error or "columns missing" in run.error
    assert Offer.objects.filter(source__slug="skypilot-lambda", is_active=True).count() == active


def test_transient_failure_is_recorded_then_raised_for_retry(source):
    import httpx

    from scrapers.base import TransientScrapeError

    facts_sync.providers_sync()
    down = httpx.MockTransport(lambda request: httpx.Response(503, text="busy"))
    with pytest.raises(TransientScrapeError):
        runs.source_scrape(slug="skypilot-lambda", transport=down)
    run = ScrapeRun.objects.get(source__slug="skypilot-lambda")
    assert run.status == RunStatus.FAILED and "503" in run.error


def test_an_offer_tied_to_no_region_is_kept_with_a_blank_region(source):
    """RunPod prices the same everywhere; Linode's type list does not say where a plan is sold."""
    counts = sync(source, result(scraped("gpu_1x", region="")))
    assert counts.created == 1
    offer = Offer.objects.get()
    assert offer.region == "" and (offer.country, offer.continent) == ("", "WW")  # global, not without a location


def test_memory_per_gpu_comes_from_the_catalog_only_when_the_gpu_is_unambiguous(source):
    sync(source, result(scraped("a10", gpu_name="A10"), scraped("h100", gpu_name="H100"),
                        scraped("own", gpu_name="A10", gpu_memory_gb=Decimal("22.5")),
                        scraped("v100", gpu_name="V100"), scraped("v100-32", gpu_name="V100-32GB"),
                        scraped("h200", gpu_name="H200"), scraped("tpu", gpu_name="tpu-v5litepod")))
    memory = dict(Offer.objects.values_list("instance_type", "gpu_memory_gb"))
    assert memory["a10"] == Decimal("24.0")  # the catalog's A10
    assert memory["h100"] is None  # "H100" alone: 80 GB SXM/PCIe or 94 GB NVL, so unknown
    assert memory["v100"] is None  # "V100" alone: 16 or 32 GB
    # Form factor not stated, but one memory: the name says 32 GB; the H200 and a TPU v5e chip come in one size
    assert (memory["v100-32"], memory["h200"], memory["tpu"]) == (Decimal("32.0"), Decimal("141.0"), Decimal("16.0"))
    # What the source states just below the card's memory is its usable figure; the card is sold as 24 GB.
    own = Offer.objects.get(instance_type="own")
    assert (own.gpu_memory_gb, own.gpu_memory_usable_gb) == (Decimal("24.0"), Decimal("22.5"))


class TrackedOffer(ScrapedOffer):
    """A ScrapedOffer that can be watched with a weak reference (the dataclass itself has slots and no weakref)."""

    __slots__ = ("__weakref__",)


def watched_stream(offers, alive):
    """Yield `offers` one at a time as TrackedOffer, recording before each how many of those already yielded are
    still referenced by anyone: the consumer's current row at most, if it keeps none of them."""
    refs = []
    for offer in offers:
        alive.append(sum(ref() is not None for ref in refs))
        tracked = TrackedOffer(**{name: getattr(offer, name) for name in ScrapedOffer.__slots__})
        refs.append(weakref.ref(tracked))
        yield tracked
        del tracked


def test_sync_reads_a_generator_once_and_keeps_none_of_its_offers(source):
    sync(source, result(*[scraped(f"i{n}", price="2.49") for n in range(300)]))
    alive = []
    offers = [scraped(f"i{n}", price="2.29" if n % 3 else "2.49") for n in range(300)]
    offers += [scraped(f"new-{n}") for n in range(50)]
    counts = sync(source, ScrapeResult(offers=watched_stream(offers, alive)))
    assert (counts.created, counts.updated, counts.unchanged, counts.deactivated) == (50, 200, 100, 0)
    # Never more than the row being compared is held: the sync does not need the whole response.
    assert len(alive) == 350 and max(alive) <= 1
    assert Offer.objects.filter(source=source, is_active=True).count() == 350
    assert Offer.objects.get(instance_type="i1").price_hour == Decimal("2.29")
    assert PriceObservation.objects.count() == 300 + 200 + 50


def test_the_same_row_twice_is_one_offer_and_a_second_row_at_another_price_is_refused_first_kept(source):
    """A catalog lists a size once per zone (SkyPilot's OCI file): the same row again is the same offer, said nowhere;
    another row for the same size and region is refused with the reason and never merged with the first."""
    counts = sync(source, result(scraped(), scraped(), scraped(price="2.10"), scraped("b"), scraped("b")))
    assert (counts.created, counts.skipped) == (2, 1)
    assert Offer.objects.get(instance_type="gpu_1x_h100").price_hour == Decimal("2.49")
    assert len(counts.rejections) == 1
    assert "a second row for the same size and region at 2.10 / -" in counts.rejections[0]
    # The same on a re-run, where the key has a stored offer: an unchanged offer, and the differing row refused.
    counts = sync(source, result(scraped(), scraped(), scraped(price="2.10"), scraped("b")))
    assert (counts.unchanged, counts.updated, counts.skipped, counts.deactivated) == (2, 0, 1, 0)
    assert Offer.objects.get(instance_type="gpu_1x_h100").price_hour == Decimal("2.49")


def test_the_compared_keys_hold_one_copy_of_each_name_however_many_rows_repeat_it(source):
    """A catalog repeats a few region names over a million rows: the stored offers' keys, and the incoming rows'
    keys made through them, share one string per name (what keeps a 1,000,000-offer re-run's index small)."""
    sync(source, result(*[scraped(f"i{n}", region="".join(["us-", "east-1"])) for n in range(20)]))
    stored = ingest._StoredOffers.read(source)
    assert len(stored) == 20 and len({id(region) for _, region in stored.index}) == 1
    stored_region = next(iter(stored.index))[1]
    incoming = stored.key("".join(["i", "7"]), "".join(["us-east", "-1"]))
    assert incoming in stored.index and incoming[1] is stored_region
    assert incoming[0] is next(key for key in stored.index if key == incoming)[0]


def test_a_generator_that_refuses_rows_as_it_is_read_is_counted_after_reading(source):
    sync(source, result(*[scraped(f"i{n}") for n in range(10)]))
    res = ScrapeResult(offers=[])

    def parse():
        for n in range(10):
            if n == 3:
                # The client could not read this row but still names it: its stored offer must stay as it is.
                res.rejected.append("i3: unparsable price")
                res.rejected_keys.add(("i3", "us-east-1"))
                continue
            yield scraped(f"i{n}", price="3.00")

    res.offers = parse()
    counts = sync(source, res)
    assert (counts.updated, counts.deactivated, counts.skipped) == (9, 0, 1)
    assert "i3: unparsable price" in counts.rejections
    assert Offer.objects.get(instance_type="i3").price_hour == Decimal("2.49")


def test_a_shrunk_stream_is_refused_before_anything_is_written(source):
    sync(source, result(*[scraped(f"i{n}") for n in range(10)]), now=timezone.now() - timedelta(hours=1))
    before = list(Offer.objects.order_by("id").values())
    from django.db import connection

    # Four old offers at a new price and two new ones: the response would deactivate 6 of 10.
    stream = (scraped(f"i{n}", price="9.99") if n < 4 else scraped(f"new-{n}") for n in range(6))
    with CaptureQueriesContext(connection) as ctx, pytest.raises(ingest.ShrinkRefusedError,
                                                               match="lists 6 offers but would deactivate 6 of 10"):
        sync(source, ScrapeResult(offers=stream))
    writes = [q["sql"] for q in ctx.captured_queries
              if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "COPY"))
              and "providers_scraperun" not in q["sql"]]
    assert writes == []
    assert list(Offer.objects.order_by("id").values()) == before
    assert PriceObservation.objects.count() == 10


def test_an_empty_stream_is_refused(source):
    sync(source, result(scraped()))
    with pytest.raises(ingest.ShrinkRefusedError, match="empty"):
        sync(source, ScrapeResult(offers=iter(())))
    assert Offer.objects.get().is_active


def test_a_response_whose_rows_are_all_refused_is_a_failed_run_that_keeps_the_offers(source):
    sync(source, result(scraped(), scraped("gpu_2x_h100", gpu_count="2")))
    before = list(Offer.objects.order_by("id").values())
    with pytest.raises(ingest.ShrinkRefusedError, match="all 2 rows of the response were refused"):
        sync(source, result(scraped(currency="XX"), scraped("gpu_2x_h100", gpu_count="2", currency="XX")))
    assert list(Offer.objects.order_by("id").values()) == before
