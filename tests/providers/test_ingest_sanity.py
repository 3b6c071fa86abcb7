"""Sanity at ingest (issue 13): offers_sync corrects or refuses rows that contradict their SKU's own facts, and says
why on the run; dates of the data are kept apart from when we read it."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from providers import facts_sync, ingest
from providers.models import Offer, ScrapeRun
from tests.factories import DataSourceFactory, result, scraped

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def catalog():
    facts_sync.gpu_catalog_sync()


def sync(source, res, now=None):
    now = now or timezone.now()
    run = ScrapeRun.objects.create(source=source, started_at=now)
    with transaction.atomic():
        return ingest.offers_sync(source=source, run=run, result=res, now=now)


def test_a_gpu_count_that_contradicts_the_sizes_own_page_is_corrected_with_the_reason():
    source = DataSourceFactory(slug="skypilot-azure-test", kind="catalog", provider__slug="azure")
    counts = sync(source, result(scraped("Standard_ND96isr_H100_v5", "eastus", gpu_count="12", price="98.32")))
    offer = Offer.objects.get()
    assert offer.gpu_count == 8 and offer.price_per_gpu_hour_usd == Decimal("12.29000")
    assert counts.corrected == 1
    assert any("GPU count 12 corrected to 8" in reason and "ndh100v5-series" in reason for reason in counts.rejections)


def test_a_fractional_size_carries_its_share_and_a_whole_gpu_equivalent_price():
    source = DataSourceFactory(slug="azure-test", provider__slug="azure")
    sync(source, result(scraped("Standard_NV4as_v4", "eastus", gpu_name="Radeon MI25", gpu_count="1", price="0.2",
                                gpu_memory_gb=Decimal("2"))))
    offer = Offer.objects.get()
    assert (offer.gpu_fraction, offer.gpu_count) == (Decimal("0.125"), Decimal("0.125"))
    assert offer.price_per_gpu_hour_usd == Decimal("1.60000")  # 0.2 for an eighth: 1.60 per whole GPU
    assert offer.gpu.slug == "radeon-instinct-mi25"  # named by a whole GPU's memory (2 GB / 0.125), not the slice's


def test_aws_fractional_l4_resolves_to_the_l4_by_a_whole_gpus_memory():
    source = DataSourceFactory(slug="aws-test", kind="catalog", provider__slug="aws")
    sync(source, result(scraped("g6f.large", gpu_name="l4", gpu_count="0.125", price="0.202",
                                gpu_fraction=Decimal("0.125"), gpu_memory_gb=Decimal("2.8"), efa_interfaces=None)))
    offer = Offer.objects.get()
    assert offer.gpu.slug == "l4" and offer.price_per_gpu_hour_usd == Decimal("1.61600")


def test_a_spot_price_not_below_on_demand_is_not_a_spot_price():
    source = DataSourceFactory(slug="spot-test", provider__slug="lambda")
    counts = sync(source, result(scraped(price="2.49", spot="2.49"), scraped("b", price="2.49", spot="1.10"),
                                 scraped("c", price="2.00", spot="2.64"), scraped("d", price=None, spot="1.50")))
    offers = {offer.instance_type: offer for offer in Offer.objects.all()}
    assert offers["gpu_1x_h100"].spot_price_hour is None and offers["c"].spot_price_hour is None
    assert offers["b"].spot_price_hour == Decimal("1.10")
    assert offers["d"].spot_price_hour == Decimal("1.50")  # no on-demand price to compare with: kept
    assert counts.corrected == 2
    assert any("2.64 is not below the on-demand price 2.00" in reason for reason in counts.rejections)


def test_variants_stay_distinct_and_an_unknown_memory_variant_is_reported_not_the_base_model():
    source = DataSourceFactory(slug="variants", provider__slug="vastai")
    counts = sync(source, result(
        scraped("a", gpu_name="RTX_4060_Ti", gpu_memory_gb=Decimal("16")),
        scraped("b", gpu_name="RTX_3060_Ti", gpu_memory_gb=Decimal("8")),
        scraped("c", gpu_name="RTX_4070S_Ti", gpu_memory_gb=Decimal("16")),
        scraped("d", gpu_name="RTX4090", gpu_memory_gb=Decimal("48")),
        scraped("e", gpu_name="RTX4090", gpu_memory_gb=Decimal("24")),
    ))
    gpus = dict(Offer.objects.values_list("instance_type", "gpu__slug"))
    assert gpus == {"a": "rtx-4060-ti-16gb", "b": "rtx-3060-ti", "c": "rtx-4070-ti-super", "d": None, "e": "rtx-4090"}
    assert counts.unknown_gpus == {"RTX4090 (48 GB)": 1}


def test_form_factor_from_the_instance_name_picks_the_variant_and_is_stored():
    source = DataSourceFactory(slug="forms", provider__slug="lambda")
    sync(source, result(scraped("gpu_8x_h100_sxm5", gpu_count="8", price="23.92", gpu_memory_gb=Decimal("80")),
                        scraped("gpu_1x_l4", gpu_name="L4")))
    offers = {offer.instance_type: offer for offer in Offer.objects.select_related("gpu")}
    assert (offers["gpu_8x_h100_sxm5"].gpu.slug, offers["gpu_8x_h100_sxm5"].form_factor) == ("h100-sxm", "sxm")
    assert offers["gpu_1x_l4"].form_factor == "pcie"  # the catalog's L4 entry is a PCIe card


def test_one_sku_in_one_region_from_two_sources_of_a_provider_is_one_live_offer_and_the_other_is_kept():
    # A catalog file at a commit (undated) and the provider's API: the API's price is the live one.
    catalog = DataSourceFactory(slug="skypilot-do-test", kind="catalog", provider__slug="digitalocean",
                                revision="1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a")
    api = DataSourceFactory(slug="do-api-test", kind="api", provider=catalog.provider)
    sync(catalog, result(scraped("gpu-h100x8-640gb", "nyc1", gpu_count="8", price="47.60")))
    counts = sync(api, result(scraped("gpu-h100x8-640gb", "nyc1", gpu_count="8", price="23.92")))
    active = Offer.objects.filter(is_active=True)
    assert [(o.source.slug, o.price_hour) for o in active] == [("do-api-test", Decimal("23.92000"))]
    assert any("skypilot-do-test's price is not live" in reason for reason in counts.rejections)
    # The catalog's next run cannot bring its copy back beside the API's; its row is kept, not live, with history.
    counts = sync(catalog, result(scraped("gpu-h100x8-640gb", "nyc1", gpu_count="8", price="47.60"),
                                  scraped("gpu-h100x1-80gb", "nyc1", price="6.74")))
    assert counts.skipped == 0 and any("skypilot-do-test's price is not live" in r for r in counts.rejections)
    assert Offer.objects.filter(is_active=True, instance_type="gpu-h100x8-640gb").count() == 1
    assert Offer.objects.filter(source=catalog, instance_type="gpu-h100x8-640gb", is_active=False).exists()


def test_a_provider_api_listing_a_size_in_some_regions_makes_a_copy_elsewhere_not_live_unless_it_names_none():
    catalog = DataSourceFactory(slug="copy", kind="catalog", provider__slug="digitalocean",
                                revision="1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a")
    api = DataSourceFactory(slug="api", kind="api", provider=catalog.provider)
    sync(catalog, result(scraped("gpu-h100x8", "tor1", gpu_count="8", price="47.60"),
                         scraped("gpu-l40s", "tor1", price="1.57")))
    counts = sync(api, result(scraped("gpu-h100x8", "nyc1", gpu_count="8", price="23.92"),
                              scraped("gpu-l40s", "", price="1.57")))
    live = set(Offer.objects.filter(is_active=True).values_list("source__slug", "instance_type", "region"))
    assert ("copy", "gpu-h100x8", "tor1") not in live and ("api", "gpu-h100x8", "nyc1") in live
    assert ("copy", "gpu-l40s", "tor1") in live  # the API's row names no region: it says nothing about tor1
    assert any("lists this size only in nyc1" in reason for reason in counts.rejections)


def test_price_as_of_is_the_datas_date_and_dates_the_history_apart_from_last_seen():
    source = DataSourceFactory(slug="dated", kind="catalog", provider__slug="coreweave")
    day = datetime(2026, 3, 13, tzinfo=UTC)
    sync(source, result(scraped(price="49.24", price_as_of=day)))
    later = day + timedelta(days=30)
    sync(source, result(scraped(price="45.00", price_as_of=later)))
    offer = Offer.objects.get()
    assert offer.price_as_of == later and offer.last_seen > later + timedelta(days=200)
    assert list(offer.history.values_list("observed_at", flat=True)) == [day, later]


def test_a_source_without_a_stated_date_gives_its_offers_none_or_the_sources_as_of():
    undated = DataSourceFactory(slug="undated", provider__slug="lambda")
    sync(undated, result(scraped()))
    assert Offer.objects.get(source=undated).price_as_of is None
    dated = DataSourceFactory(slug="dated-source", provider__slug="lambda", as_of="2026-08-03")
    sync(dated, result(scraped("other")))
    assert Offer.objects.get(source=dated).price_as_of == datetime(2026, 8, 3, tzinfo=UTC)


def test_impossible_sku_facts_are_refused_alone():
    source = DataSourceFactory(slug="bad-facts", provider__slug="lambda")
    counts = sync(source, result(scraped("ok"), scraped("half", gpu_fraction=Decimal("1.5")),
                                 scraped("oam", form_factor="oam"), scraped("pct", spot_savings_pct=140)))
    assert list(Offer.objects.values_list("instance_type", flat=True)) == ["ok"]
    assert counts.skipped == 3


def test_a_commitment_price_not_below_on_demand_is_left_out_and_a_real_one_is_stored_per_gpu_with_its_date():
    # Google's price table writes the on-demand month where it finds no commitment SKU: equal is not a discount.
    source = DataSourceFactory(slug="gcp-commit-test", kind="catalog", provider__slug="gcp")
    day = datetime(2026, 7, 30, tzinfo=UTC).date()
    counts = sync(source, result(
        scraped("a", gpu_count="8", price="88.49", commit_1y_price_hour=Decimal("88.49"),
                commit_3y_price_hour=Decimal("38.86438"), commitment_as_of=day,
                commitment_source_url="https://github.com/o/r/blob/c/pricing.yml"),
        scraped("b", gpu_count="8", price="88.49", commit_1y_price_hour=Decimal("61.38367"),
                commit_3y_price_hour=Decimal("61.38367"), commitment_as_of=day,
                commitment_source_url="https://github.com/o/r/blob/c/pricing.yml")))
    offers = {offer.instance_type: offer for offer in Offer.objects.all()}
    assert offers["a"].commit_1y_price_hour_usd is None and offers["a"].commit_3y_price_hour_usd == Decimal("38.86438")
    assert offers["a"].commit_3y_price_per_gpu_hour_usd == Decimal("4.85805")
    assert offers["b"].commit_1y_price_per_gpu_hour_usd == Decimal("7.67296")
    assert offers["b"].commit_3y_price_hour_usd is None  # a 3-year price equal to the 1-year one is the same fallback
    assert offers["b"].commitment_as_of == day and offers["b"].commitment_source_url.endswith("pricing.yml")
    assert counts.corrected == 2 and sum("not a commitment price" in reason for reason in counts.rejections) == 2


def test_an_offer_without_commitment_prices_keeps_no_commitment_date_or_file():
    source = DataSourceFactory(slug="gcp-commit-none", kind="catalog", provider__slug="gcp")
    sync(source, result(scraped("a", price="2.0", commitment_as_of=datetime(2026, 7, 30, tzinfo=UTC).date(),
                                commitment_source_url="https://github.com/o/r/blob/c/pricing.yml")))
    offer = Offer.objects.get()
    assert (offer.commitment_as_of, offer.commitment_source_url) == (None, None)


def test_a_changed_commitment_price_is_kept_in_the_history():
    source = DataSourceFactory(slug="gcp-commit-history", kind="catalog", provider__slug="gcp")
    start = timezone.now() - timedelta(days=2)
    sync(source, result(scraped("a", price="10", commit_1y_price_hour=Decimal("7"))), now=start)
    sync(source, result(scraped("a", price="10", commit_1y_price_hour=Decimal("6.5"))), now=start + timedelta(days=1))
    offer = Offer.objects.get()
    assert [obs.commit_1y_price_hour_usd for obs in offer.history.order_by("observed_at")] == [Decimal("7"),
                                                                                               Decimal("6.5")]
