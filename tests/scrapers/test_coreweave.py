"""CoreWeave's daily pricing-page scrapes: each day an edition dated by its scrapeDate, NVL72's footnoted GPU count
read as 4 with the correction recorded, HGX boards as SXM; broken files refused."""

from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest

from scrapers import coreweave, registry
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client
from tests.scrapers.replay import answer

ROUTES = coreweave.CoreWeaveClient.recorded()
NEWEST = coreweave.edition_file("2026-08-22").raw_url


def client(overrides=None, edition=None) -> coreweave.CoreWeaveClient:
    transport = httpx.MockTransport(lambda request: answer(ROUTES, overrides or {}, str(request.url)))
    return coreweave.CoreWeaveClient(build_client(transport=transport), edition=edition)


def test_thirty_four_editions_oldest_first_and_the_newest_by_default():
    editions = registry.editions("coreweave-tracker")
    assert len(editions) == 34 and editions == sorted(editions)
    assert (editions[0], editions[-1]) == ("2026-03-13", "2026-08-22")
    assert client().edition == "2026-08-22"
    with pytest.raises(ValueError):
        client(edition="2020-01-01")


def test_an_edition_is_dated_by_its_scrape_date():
    result = registry.make_client("coreweave-tracker", offline=True, edition="2026-03-13").fetch()
    assert {o.price_as_of for o in result.offers} == {datetime(2026, 3, 13, tzinfo=UTC)}
    assert all("coreweave-pricing-tracker/blob/9b48aedc" in o.price_source_url for o in result.offers)


def test_hgx_h100_is_an_sxm_board_of_eight_priced_per_instance_hour():
    offers = {(o.instance_type, o.region): o for o in client().fetch().offers}
    h100 = offers[("NVIDIA HGX H100 x8", "North America")]
    assert (h100.gpu_name, h100.gpu_count, h100.form_factor) == ("H100", 8, "sxm")
    assert (h100.price_hour, h100.spot_price_hour) == (Decimal("49.24"), Decimal("19.71"))


def test_nvl72_footnoted_count_is_four_with_the_correction_recorded():
    result = client().fetch()
    gb200 = next(o for o in result.offers if o.gpu_name == "GB200")
    assert gb200.gpu_count == 4 and gb200.form_factor == "nvl"
    assert any("gpuCount '41'" in reason for reason in result.corrections)
    early = client(edition="2026-03-13").fetch()  # spelled "4^1" there: read as 4, nothing to correct
    assert next(o for o in early.offers if o.gpu_name == "GB200").gpu_count == 4 and not early.corrections


def test_a_machine_listed_without_any_price_is_kept_with_its_price_unknown():
    """The GB300 NVL72 is listed with null prices ("contact us") in both regions: a machine CoreWeave sells, whose
    price nobody states, so it is an offer with no price (counted as left out by a price ceiling), not dropped."""
    result = client().fetch()
    gb300 = {o.region: o for o in result.offers if o.gpu_name == "GB300"}
    assert set(gb300) == {"North America", "Europe"}
    assert all((o.price_hour, o.spot_price_hour, o.gpu_count, o.form_factor) == (None, None, 4, "nvl")
               for o in gb300.values())
    assert gb300["Europe"].gpu_memory_gb == Decimal(279) and not result.rejected


def test_renamed_fields_and_truncated_files_are_refused():
    with pytest.raises(SchemaScrapeError, match="regions"):
        client({NEWEST: {"scrapeDate": "2026-08-22", "region": []}}).fetch()
    with pytest.raises(SchemaScrapeError, match="lacks"):
        client({NEWEST: {"scrapeDate": "2026-08-22", "regions": [
            {"name": "Europe", "gpu": [{"model": "NVIDIA L40", "count": "8", "onDemand": 10}]}]}}).fetch()
    with pytest.raises(SchemaScrapeError, match="scrapeDate"):
        client({NEWEST: {"date": "2026-08-22", "regions": []}}).fetch()
    body = ROUTES[NEWEST].read_bytes()[:3000]
    with pytest.raises(SchemaScrapeError):
        client({NEWEST: httpx.Response(200, content=body)}).fetch()


def test_a_zero_or_unreadable_count_is_refused_with_its_reason():
    row = {"model": "NVIDIA L40", "gpuCount": "0", "vramGB": "48", "onDemandPrice": 10, "spotPrice": None}
    good = dict(row, model="NVIDIA L40S", gpuCount="8")
    result = client({NEWEST: {"scrapeDate": "2026-08-22", "regions": [
        {"name": "Europe", "gpu": [row, good]}]}}).fetch()
    assert [o.gpu_name for o in result.offers] == ["L40S"]
    assert any("NVIDIA L40 in Europe: GPU count '0'" in reason for reason in result.rejected)
