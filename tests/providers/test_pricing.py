"""providers/pricing.py: every price dated with how we know it (the source's own date, a date inferred from content
identity with its evidence, or undated), and "old" by the price's own date."""

import json
import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from providers import facts_sync, pricing, runs
from providers.models import DataSource, Offer, PriceObservation
from providers.snapshot import snapshot_load
from scrapers import registry

ROOT = Path(__file__).resolve().parents[2]

# The Oracle part each OCI catalog GPU name was matched to (as price_dating.toml's evidence names them).
OCI_PARTS = {
    "A10": "B95909", "A100-80GB": "B95907", "A100": "B92740", "B200": "B110978", "B300": "B112237",
    "GB200": "B110979", "GB300": "B112140", "H100": "B98415", "H200": "B110519", "L40S": "B109479",
    "MI300X": "B109485", "MI355X": "B111758", "RTXPRO6000": "B112613", "P100": "B88517", "V100": "B89734",
}


def test_the_oci_dating_evidence_holds_for_oracles_recorded_price_list():
    """The claim behind the inferred date, checked against our recording of Oracle's list: the list's lastUpdated is
    the stated day, and each matched part's pay-as-you-go price is the one the dating record holds."""
    listing = json.loads((ROOT / "scrapers/recorded/oci/products_usd.json").read_text())
    [dating] = pricing.dating_of("skypilot-oci")
    assert listing["lastUpdated"].startswith(dating.as_of.isoformat())
    parts = {item["partNumber"]: item for item in listing["items"]}
    assert set(OCI_PARTS) == set(dating.prices)
    for name, part in OCI_PARTS.items():
        [price] = [p["value"] for c in parts[part]["currencyCodeLocalizations"] for p in c["prices"]
                   if c["currencyCode"] == "USD" and p["model"] == "PAY_AS_YOU_GO"]
        assert Decimal(str(price)) == dating.prices[name], name
        assert part in dating.evidence


def test_a_row_is_dated_by_the_source_first_then_by_an_equal_dated_record_else_left_undated():
    stated = datetime(2026, 1, 2, tzinfo=UTC)
    assert pricing.price_date(slug="skypilot-oci", stated=stated, instance_type="BM.GPU.H100.8", gpu_name="H100",
                              price_hour=Decimal(80), gpu_count=Decimal(8)) == (stated, pricing.STATED)
    inferred = pricing.price_date(slug="skypilot-oci", stated=None, instance_type="BM.GPU.H100.8", gpu_name="H100",
                                  price_hour=Decimal("80.0"), gpu_count=Decimal(8))
    assert inferred == (datetime(2026, 8, 14, tzinfo=UTC), pricing.INFERRED)
    # A cent off, another GPU, a spot-only row or a source with no record: undated, never a guessed date.
    for slug, name, price in (("skypilot-oci", "H100", Decimal("80.08")), ("skypilot-oci", "H100X", Decimal(80)),
                              ("skypilot-oci", "H100", None), ("skypilot-vast", "H100", Decimal(80))):
        assert pricing.price_date(slug=slug, stated=None, instance_type="BM.GPU.H100.8", gpu_name=name,
                                  price_hour=price, gpu_count=Decimal(8)) == (None, pricing.UNDATED)


def test_a_region_priced_apart_is_dated_only_by_a_record_of_its_own_region():
    """Azure prices each size per region: the Retail Prices capture of 2026-03-21 dates eastus's and eastus2's NC24ads
    A100 v4 at 3.673 and westus's at 4.775, each by its own region's price, never westus's row at eastus's 3.673; a
    size only the older dump of 2025-06-21 has (ND40rs v2 in eastus) keeps that dump's date, and the same size in a
    region neither record holds stays undated."""
    def dated(region, price, size="Standard_NC24ads_A100_v4", gpus=1):
        return pricing.price_date(slug="skypilot-azure", stated=None, instance_type=size, gpu_name="A100-80GB",
                                  price_hour=Decimal(price), gpu_count=Decimal(gpus), region=region)

    assert dated("eastus", "3.673") == dated("eastus2", "3.673") == (datetime(2026, 3, 21, tzinfo=UTC),
                                                                      pricing.INFERRED)
    assert dated("westus", "4.775")[0] == datetime(2026, 3, 21, tzinfo=UTC)
    for region, price in (("westus", "3.673"), ("eastus", "3.674")):
        assert dated(region, price) == (None, pricing.UNDATED), region
    assert dated("eastus", "22.032", "Standard_ND40rs_v2", 8) == (datetime(2025, 6, 21, tzinfo=UTC), pricing.INFERRED)
    assert dated("southcentralus", "26.438", "Standard_ND40rs_v2", 8) == (None, pricing.UNDATED)


def test_a_size_whose_gpu_count_the_catalog_misstates_is_dated_per_gpu_of_the_machine_as_sold():
    """SkyPilot's Azure file gives ND96isr H100 v5 12 GPUs; Microsoft sells it with 8 (the ingest corrects it), and
    Azure's 98.32 a node is 12.29 per GPU of those 8: dated at 8, not at the file's 12, in eastus and eastus2."""
    def dated(region, gpus):
        return pricing.price_date(slug="skypilot-azure", stated=None, instance_type="Standard_ND96isr_H100_v5",
                                  gpu_name="H100", price_hour=Decimal("98.32"), gpu_count=Decimal(gpus), region=region)

    assert dated("eastus", 8) == dated("eastus2", 8) == (datetime(2026, 3, 21, tzinfo=UTC), pricing.INFERRED)
    assert dated("eastus", 12) == dated("eastus2", 12) == (None, pricing.UNDATED)


def test_a_cudo_size_is_dated_where_cudos_own_rates_for_its_data_center_rebuild_its_price():
    """Cudo prices a size as GPU + vCPU + memory rates per data center: Kristiansand's H100 at 1.79 + 2 x 0.0059 +
    4 x 0.0049 = 1.8214 an hour (Cudo's API captured 2026-03-22); the same size in Montreal (2.5354) has no capture."""
    def dated(region, price):
        return pricing.price_date(slug="skypilot-cudo", stated=None, instance_type="sapphire-rapids-h100_1x2v4gb",
                                  gpu_name="H100-SXM", price_hour=Decimal(price), gpu_count=Decimal(1), region=region)

    assert dated("no-kristiansand-1", "1.8214000000000001") == (datetime(2026, 3, 22, tzinfo=UTC), pricing.INFERRED)
    assert dated("no-kristiansand-1", "1.83") == (None, pricing.UNDATED)
    assert dated("ca-montreal-3", "2.5354") == (None, pricing.UNDATED)


def test_every_dating_record_names_its_evidence_and_is_no_later_than_its_check():
    for dating in (record for records in pricing.datings().values() for record in records):
        assert dating.evidence_url.startswith("https://") and len(dating.evidence) > 40
        assert dating.as_of <= dating.verified_on <= date.today()
        # A catalog's, or a curated table's that states no date: a source that states its own date needs none.
        assert registry.SOURCES[dating.slug].info.kind in ("catalog", "curated")
        assert not registry.SOURCES[dating.slug].info.as_of


def test_every_dating_record_says_its_evidence_in_chinese_with_the_same_dates_prices_and_commits():
    # A translation that dropped a date, a price or a commit would send a Chinese reader to the wrong record.
    figures = re.compile(r"\d{4}-\d\d-\d\d|\d+\.\d+|\b[0-9a-f]{7,8}\b")
    for dating in (record for records in pricing.datings().values() for record in records):
        assert re.search(r"[\u4e00-\u9fff]", dating.evidence_zh), dating.slug
        assert [figure for figure in figures.findall(dating.evidence) if figure not in dating.evidence_zh] == [], \
            dating.slug


@pytest.mark.parametrize("entry, problem", [
    ('as_of = 2026-01-01\nverified_on = 2025-01-01\nevidence = "e"\nevidence_zh = "证"\n',
     "as_of not after verified_on"),
    ('as_of = 2026-01-01\nverified_on = 2026-02-01\nevidence = "equals the list"\nevidence_zh = ""\n',
     "needs evidence, evidence_zh"),
])
def test_a_malformed_dating_file_is_refused_naming_the_source_and_the_problem(tmp_path, monkeypatch, entry, problem):
    broken = tmp_path / "price_dating.toml"
    broken.write_text(f'[source.x]\n{entry}evidence_url = "https://example.com"\n[source.x.prices]\n"H100" = "1"\n')
    monkeypatch.setattr(pricing, "DATING_FILE", broken)
    pricing.datings.cache_clear()
    try:
        with pytest.raises(pricing.DatingFileError, match=rf"\[source.x\]: .*{problem}"):
            pricing.datings()
    finally:
        pricing.datings.cache_clear()


def test_old_is_the_prices_own_age_past_the_threshold_and_undated_is_not_old():
    now = datetime(2026, 12, 4, tzinfo=UTC)
    assert pricing.is_old(now - timedelta(days=pricing.OLD_AFTER_DAYS, seconds=1), now)
    assert not pricing.is_old(now - timedelta(days=pricing.OLD_AFTER_DAYS - 1), now)
    assert not pricing.is_old(None, now)


@pytest.mark.django_db
def test_a_replayed_catalog_dates_matching_rows_with_the_evidence_on_the_source_and_history_on_that_day():
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    run = runs.source_scrape(slug="skypilot-nebius", offline=True)
    assert run.status == "succeeded", run.error
    offers = Offer.objects.filter(source__slug="skypilot-nebius")
    dated = offers.filter(price_dated_by=pricing.INFERRED)
    assert dated.exists() and offers.filter(price_dated_by__isnull=True).exists()
    # Each row takes the newest record that prices it: getdeploying.com's scrape of 2026-03-22 prices all three
    # (the 8-GPU B200 at 8 x 5.50), the cloud-gpus.com record of 2025-05-29 only the H100 and H200.
    assert set(dated.values_list("price_as_of", flat=True)) == {datetime(2026, 3, 22, tzinfo=UTC)}
    assert set(dated.values_list("gpu_name", flat=True)) == {"H100", "H200", "B200"}
    assert not offers.filter(price_dated_by__isnull=True, price_as_of__isnull=False).exists()
    source = DataSource.objects.get(slug="skypilot-nebius")
    assert "cloud-gpus.com" in source.price_evidence and "getdeploying.com" in source.price_evidence
    assert source.price_evidence_url.startswith("https://github.com/thatkavish/OpenComputePrices/")  # the newest
    # The first observation of a dated row is dated by the price's day, not by the replay.
    first = PriceObservation.objects.filter(offer=dated.first()).get()
    assert first.observed_at == datetime(2026, 3, 22, tzinfo=UTC)


@pytest.mark.django_db
def test_a_curated_table_without_a_date_is_dated_row_by_row_where_a_record_has_its_price():
    """OVHcloud's table states no date: getdeploying.com's scrape of 2026-03-22 dates the V100 rows at its prices
    (0.77, and 0.88 a GPU for the 32 GB sizes), cloud-gpus.com's record of 2024-05-07 the one-GPU A100 at 3.07; a
    row a cent off either (t1-le-90 at 1.55 where the scrape has 1.56, a100-360 at 3.075 a GPU) stays undated."""
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    run = runs.source_scrape(slug="curated-ovhcloud", offline=True)
    assert run.status == "succeeded", run.error
    as_of = {(offer.instance_type, offer.region): (offer.price_as_of, offer.price_dated_by)
             for offer in Offer.objects.filter(source__slug="curated-ovhcloud")}
    scraped, recorded = datetime(2026, 3, 22, tzinfo=UTC), datetime(2024, 5, 7, tzinfo=UTC)
    assert as_of["t1-le-45", "GRA"] == as_of["t2-le-90", "WAW"] == (scraped, pricing.INFERRED)
    assert as_of["a100-180", "GRA"] == (recorded, pricing.INFERRED)
    for undated in (("t1-le-90", "GRA"), ("a100-360", "GRA"), ("t2-le-180", "BHS"), ("t1-45", "BHS")):
        assert as_of[undated] == (None, pricing.UNDATED), undated


@pytest.mark.django_db
def test_the_api_and_the_offer_page_say_how_a_price_is_dated(client):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    runs.source_scrape(slug="skypilot-nebius", offline=True)
    offer = Offer.objects.filter(source__slug="skypilot-nebius", price_dated_by=pricing.INFERRED).first()
    body = client.get(f"/api/v1/offers/{offer.pk}/").json()
    assert body["price_dated_by"] == "inferred" and body["price_is_old"] is True  # 2026-03-22: past 180 days
    assert "cloud-gpus.com" in body["source"]["price_evidence"]
    assert "cloud-gpus.com 的 Nebius 记录" in body["source"]["price_evidence_zh"]
    listed = client.get("/api/v1/offers/?provider=nebius").json()["results"]
    assert {row["price_dated_by"] for row in listed} == {"inferred", None}
    page = client.get(f"/offers/{offer.pk}/").content.decode()
    assert "~" in page and "date inferred, not stated by the source" in page and 'class="old"' in page
    client.cookies["django_language"] = "zh-hans"
    page_zh = client.get(f"/zh-hans/offers/{offer.pk}/").content.decode()
    rows_zh = client.get("/zh-hans/?provider=nebius").content.decode()
    client.cookies["django_language"] = "en"
    for shown in (page_zh, rows_zh):  # the offer page and the list's hover text, in Chinese
        assert "在 2025-05-29 写入时的值" in shown and "equal the Nebius record" not in shown
    undated = Offer.objects.filter(source__slug="skypilot-nebius", price_dated_by__isnull=True).first()
    assert ">undated</span>" in client.get(f"/offers/{undated.pk}/").content.decode()


def test_retirements_are_per_size_and_nvv3_nvv4_are_not_part_of_the_2023_nv_retirement():
    nv = pricing.retirement_of("azure", "Standard_NV12")
    assert nv.date == date(2023, 9, 6) and "nv-series-retirement" in nv.source_url
    for size in ("Standard_NV12s_v3", "Standard_NV16as_v4"):
        assert pricing.retirement_of("azure", size).date == date(2026, 9, 30)
    assert pricing.retirement_of("azure", "Standard_NC24ads_A100_v4") is None  # the NCv3 successor
    assert pricing.retirement_of("azure", "Standard_NC6s_v3").date == date(2025, 9, 30)
    # Retiring until the day, retired from it.
    assert not pricing.is_retired("azure", "Standard_NV12s_v3", date(2026, 9, 29))
    assert pricing.is_retired("azure", "Standard_NV12s_v3", date(2026, 9, 30))
    for retirement in set(pricing.retirements().values()):
        assert retirement.source_url.startswith("https://github.com/MicrosoftDocs/")
        assert retirement.verified_on == date(2026, 12, 4)


@pytest.mark.django_db
def test_retired_types_leave_the_live_list_keep_their_history_and_their_page_says_retired(client):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    facts_sync.instance_types_sync()
    run = runs.source_scrape(slug="skypilot-azure", offline=True)
    assert run.status == "succeeded", run.error
    azure = Offer.objects.filter(source__slug="skypilot-azure")
    retired = azure.filter(instance_type__in=["Standard_NC6", "Standard_NC24r_Promo", "Standard_NC6s_v3",
                                              "Standard_NC24rs_v3", "Standard_NV6"])
    assert retired.count() >= 10 and not retired.filter(is_active=True).exists()
    assert PriceObservation.objects.filter(offer__in=retired).count() == retired.count()  # history kept
    assert azure.filter(instance_type="Standard_NC24ads_A100_v4", is_active=True).exists()
    listed = {row["instance_type"] for row in client.get("/api/v1/offers/?provider=azure").json()["results"]}
    assert listed and not listed & {"Standard_NC6", "Standard_NC6s_v3", "Standard_NV6"}
    offer = retired.get(instance_type="Standard_NC6s_v3", region=retired.filter(
        instance_type="Standard_NC6s_v3").values_list("region", flat=True).first())
    page = client.get(f"/offers/{offer.pk}/").content.decode()
    assert "Retired on 2025-09-30" in re.sub(r"<[^>]+>", "", page) and "ncv3-nc6s-nc12s-nc24s-retirement" in page
    assert client.get(f"/api/v1/offers/{offer.pk}/").json()["retires_on"] == "2025-09-30"
    # A second run changes nothing: the retired rows stay inactive, no history is added.
    again = runs.source_scrape(slug="skypilot-azure", offline=True)
    assert again.created == again.updated == again.deactivated == 0


def test_dating_records_keyed_by_size_date_each_size_by_the_newest_record_that_prices_it():
    """Lambda: the cheapest-per-GPU record of 2026-10-01 shows the 8x H100 SXM (3.99/GPU) but not the 1x (4.29);
    the per-configuration record of 2026-08-23 shows the 1x. A price neither shows stays undated."""
    dated = pricing.price_date(slug="skypilot-lambda", stated=None, instance_type="gpu_8x_h100_sxm5", gpu_name="H100",
                               price_hour=Decimal("31.92"), gpu_count=Decimal(8))
    assert dated == (datetime(2026, 10, 1, tzinfo=UTC), pricing.INFERRED)
    assert pricing.price_date(slug="skypilot-lambda", stated=None, instance_type="gpu_1x_h100_sxm5", gpu_name="H100",
                              price_hour=Decimal("4.29"), gpu_count=Decimal(1)) == (
        datetime(2026, 8, 23, tzinfo=UTC), pricing.INFERRED)
    assert pricing.price_date(slug="skypilot-lambda", stated=None, instance_type="gpu_1x_h100_sxm5", gpu_name="H100",
                              price_hour=Decimal("3.29"), gpu_count=Decimal(1)) == (None, pricing.UNDATED)


def test_one_price_per_machine_follows_the_written_precedence():
    day = datetime(2026, 8, 1, tzinfo=UTC)
    api, page, catalog = (pricing.Candidate("api", "api", day), pricing.Candidate("page", "curated", day),
                          pricing.Candidate("catalog", "catalog", day))
    assert pricing.preferred(catalog, api)[0] is api and pricing.preferred(api, page)[0] is api
    assert pricing.preferred(catalog, page)[0] is page
    # A fresher candidate beats an older-than-the-cutoff one whatever its kind; an undated one loses to a dated one.
    old_api = pricing.Candidate("api", "api", day - timedelta(days=pricing.FRESHER_AFTER_DAYS + 1))
    winner, reason = pricing.preferred(old_api, catalog)
    assert winner is catalog and "api's price is not live" in reason and "fresher" in reason
    undated_api = pricing.Candidate("api", "api", None)
    assert pricing.preferred(undated_api, catalog)[0] is catalog
    # Within the cutoff, same kind: the newer date; equal: the live one stays.
    newer = pricing.Candidate("newer", "catalog", day + timedelta(days=10))
    assert pricing.preferred(catalog, newer)[0] is newer
    assert pricing.preferred(catalog, pricing.Candidate("twin", "catalog", day))[0] is catalog


@pytest.mark.django_db
def test_the_snapshot_has_one_live_price_per_machine_and_the_other_source_says_why_not(client):
    """DigitalOcean: SkyPilot's older copy prices the 8x H100 at $5.95/GPU in tor1, DigitalOcean's API (2025-08-29)
    at $2.99 and lists the size only in nyc1: the copy is kept, not live, and its page says why."""
    snapshot_load()
    live = Offer.objects.filter(is_active=True)
    machines = live.values_list("provider_id", "instance_type", "region")
    assert len(set(machines)) == len(machines)
    copy = Offer.objects.get(source__slug="skypilot-digitalocean", instance_type="gpu-h100x8-640gb")
    assert not copy.is_active and copy.history.exists()
    api = live.get(provider__slug="digitalocean", instance_type="gpu-h100x8-640gb")
    assert api.price_hour == Decimal("23.92")
    page = client.get(f"/offers/{copy.pk}/").content.decode()
    assert "Not the live price of this machine:" in page and "lists this size only in nyc1" in page
    assert 'id="other-sources"' in page
    undated = live.filter(price_dated_by__isnull=True).count()
    assert undated / live.count() < 0.2  # measured 548 of 3,278 (16.7%) on 2026-12-06


def test_a_price_the_api_ties_to_no_region_leaves_the_catalogs_regional_copies_live(db):
    """Oracle's price list prices BM.GPU.H100.8 in no region ("global"): that does not say the size is sold only
    somewhere else, so SkyPilot's copies in OCI's 44 regions stay live beside it, at the same price per GPU."""
    snapshot_load()
    live = Offer.objects.filter(is_active=True, provider__slug="oci", instance_type="BM.GPU.H100.8")
    oracle = live.get(source__slug="oci")
    assert (oracle.region, oracle.continent, oracle.gpu_count, oracle.price_hour) == ("global", "WW", 8, 80)
    regional = live.filter(source__slug="skypilot-oci")
    assert regional.count() == 44
    assert set(regional.values_list("price_per_gpu_hour_usd", flat=True)) == {oracle.price_per_gpu_hour_usd}
    assert not Offer.objects.filter(source__slug="skypilot-oci", is_active=False).exists()


def test_memory_is_as_sold_with_the_reported_usable_figure_beside_it():
    from scrapers.normalize import default_gpu_resolver

    specs = default_gpu_resolver().specs
    assert pricing.memory_as_sold(Decimal("22.4"), specs["a10g"], None) == (Decimal("24.0"), Decimal("22.4"))
    assert pricing.memory_as_sold(Decimal("22.4"), specs["l4"], None) == (Decimal("24.0"), Decimal("22.4"))
    # A slice is sold with its share of the memory.
    assert pricing.memory_as_sold(Decimal("2.8"), specs["l4"], Decimal("0.125")) == (Decimal("3.0"), Decimal("2.8"))
    # Equal, above, far below, an unknown GPU, or an entry standing for several sizes: kept as reported.
    assert pricing.memory_as_sold(Decimal("24"), specs["l4"], None) == (Decimal("24"), None)
    assert pricing.memory_as_sold(Decimal("192"), specs["gb200"], None) == (Decimal("192"), None)
    assert pricing.memory_as_sold(Decimal("16"), specs["l4"], None) == (Decimal("16"), None)
    assert pricing.memory_as_sold(Decimal("22.4"), None, None) == (Decimal("22.4"), None)
    assert pricing.memory_as_sold(Decimal("39"), specs["a10g"], None, variant_unknown=True) == (Decimal("39"), None)


@pytest.mark.django_db
def test_a10g_and_l4_offers_pass_a_24_gb_filter_and_vultr_slices_show_the_slice_memory(client):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    facts_sync.instance_types_sync()
    for slug in ("aws-catalog", "vultr"):
        assert runs.source_scrape(slug=slug, offline=True).status == "succeeded"
    a10g = Offer.objects.filter(gpu__slug="a10g", is_active=True)
    assert a10g.exists() and set(a10g.values_list("gpu_memory_gb", "gpu_memory_usable_gb")) == {
        (Decimal("24.0"), Decimal("22.4"))}
    listed = client.get("/api/v1/offers/?gpu_family=A10G&gpu_memory_min=24").json()["results"]
    assert listed and all(row["gpu_memory_usable_gb"] == 22.4 for row in listed)
    slices = dict(Offer.objects.filter(source__slug="vultr", gpu__family="A100").values_list(
        "instance_type", "gpu_memory_gb"))
    assert slices["vcg-a100-1c-6g-4vram"] == Decimal("4.0") and slices["vcg-a100-6c-60g-40vram"] == Decimal("40.0")
    assert slices["vcg-a100-12c-120g-80vram"] == Decimal("80.0")


@pytest.mark.django_db
def test_the_sources_page_shows_each_sources_dating_evidence(client):
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    runs.source_scrape(slug="skypilot-nebius", offline=True)
    page = client.get("/sources/").content.decode()
    assert "~ dates inferred from content" in page and "cloud-gpus.com" in page
    assert "https://github.com/thatkavish/OpenComputePrices/blob/079e5f20" in page  # the newest record's link
    assert "commit ccc764c" in page  # and the older record's evidence
    client.cookies["django_language"] = "zh-hans"
    page = client.get("/zh-hans/sources/").content.decode()
    assert "在 2025-05-29 写入时的值" in page and "commit ccc764c" not in page  # the evidence in the page's language
