"""The Google Cloud catalog source: accelerator-optimised machine types from Karpenter-for-GCP's price table with
their GPUs from Google's machine-type page, and TPU chips from gpuhunt's table; broken copies are refused."""

from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest

from scrapers import gcp_catalog, registry
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client
from tests.scrapers.replay import answer

ROUTES = gcp_catalog.GcpCatalogClient.recorded()


def client(overrides=None) -> gcp_catalog.GcpCatalogClient:
    transport = httpx.MockTransport(lambda request: answer(ROUTES, overrides or {}, str(request.url)))
    return gcp_catalog.GcpCatalogClient(build_client(transport=transport))


@pytest.fixture(scope="module")
def result():
    return registry.make_client("gcp-catalog", offline=True).fetch()


def offer(result, instance_type, region):
    return next(o for o in result.offers if (o.instance_type, o.region) == (instance_type, region))


def test_a3_high_in_us_central1_has_its_gpus_from_the_machine_type_and_both_prices(result):
    a3 = offer(result, "a3-highgpu-8g", "us-central1")
    assert (a3.gpu_name, a3.gpu_count, a3.gpu_memory_gb) == ("H100", 8, 80)
    assert a3.price_hour == Decimal("88.49000") and a3.spot_price_hour == Decimal("50.60954")
    assert a3.price_as_of == datetime(2026, 8, 3, tzinfo=UTC)
    assert "karpenter-provider-gcp/blob/417f047b" in a3.price_source_url


def test_a3_gpus_are_sxm_as_googles_gpu_page_says_and_other_series_leave_the_form_factor_unset(result):
    assert {o.form_factor for o in result.offers if o.instance_type.startswith(("a3-highgpu", "a3-megagpu"))} \
        == {"sxm"}
    assert {o.form_factor for o in result.offers if o.instance_type.startswith(("a2-", "g2-", "g4-", "tpu-"))} \
        == {""}


def test_gpu_counts_follow_the_machine_type(result):
    counts = {o.instance_type: o.gpu_count for o in result.offers}
    assert counts["a2-highgpu-4g"] == 4 and counts["a2-megagpu-16g"] == 16
    assert counts["g2-standard-24"] == 2 and counts["g2-standard-32"] == 1 and counts["g2-standard-96"] == 8
    assert counts["g4-standard-384"] == 8
    assert {o.gpu_name for o in result.offers if o.instance_type.startswith("a2-ultragpu")} == {"A100-80GB"}


def test_a_machine_type_whose_gpu_count_we_do_not_know_is_refused_with_the_reason(result):
    assert not any(o.instance_type == "g4-standard-6" for o in result.offers)
    assert any(reason.startswith("g4-standard-6:") for reason in result.rejected)
    assert len(result.rejected) == len({reason.split(":")[0] for reason in result.rejected})  # one per type


def test_cpu_machine_types_are_not_offers(result):
    assert all(o.instance_type.startswith(("a2-", "a3-", "g2-", "g4-", "tpu-")) for o in result.offers)
    assert len({o.region for o in result.offers if not o.instance_type.startswith("tpu")}) >= 25


def test_tpus_are_priced_per_chip_with_their_own_date(result):
    v6e = offer(result, "tpu-v6e (per chip)", "us-east1")
    assert v6e.gpu_name == "tpu-v6e" and v6e.gpu_count == 1
    assert (v6e.price_hour, v6e.spot_price_hour) == (Decimal("2.7000"), Decimal("1.8900"))
    assert v6e.price_as_of == datetime(2024, 12, 23, tzinfo=UTC)
    assert offer(result, "tpu-v3 device (per chip)", next(
        o.region for o in result.offers if o.instance_type == "tpu-v3 device (per chip)")).gpu_name == "tpu-v3"


def test_a_price_file_with_renamed_tables_is_refused():
    with pytest.raises(SchemaScrapeError, match="on_demand"):
        client({gcp_catalog.PRICES.raw_url: {"prices": {"us-central1": {"onDemand": {}}}}}).fetch()
    with pytest.raises(SchemaScrapeError, match="'prices'"):
        client({gcp_catalog.PRICES.raw_url: {"regions": {}}}).fetch()


def test_a_truncated_price_file_is_refused():
    body = ROUTES[gcp_catalog.PRICES.raw_url].read_bytes()[:4000]
    with pytest.raises(SchemaScrapeError, match="not JSON"):
        client({gcp_catalog.PRICES.raw_url: httpx.Response(200, content=body)}).fetch()


def test_a_tpu_table_with_renamed_fields_is_refused():
    with pytest.raises(SchemaScrapeError, match="On Demand"):
        client({gcp_catalog.TPUS.raw_url: {"TPU v6e": {"us-east1": {"OnDemand": 2.7}}}}).fetch()


# --- 1- and 3-year commitment prices (Cyclenerd's pricing.yml, recorded as its GPU machine types) ----------------

RECORDED_PRICING = gcp_catalog.COMMITMENTS.recorded(gcp_catalog.RECORDED)


def recorded_cost(machine_type: str, region: str) -> dict:
    import yaml

    return yaml.safe_load(RECORDED_PRICING.read_text())["compute"]["instance"][machine_type]["cost"][region]


def test_commitment_prices_are_the_files_monthly_prices_over_730_hours_dated_by_the_file(result):
    a3 = offer(result, "a3-highgpu-8g", "us-central1")
    cost = recorded_cost("a3-highgpu-8g", "us-central1")
    assert a3.commit_1y_price_hour == (Decimal(str(cost["month_1y"])) / 730).quantize(Decimal("0.00001"))
    assert a3.commit_3y_price_hour == (Decimal(str(cost["month_3y"])) / 730).quantize(Decimal("0.00001"))
    assert a3.commit_3y_price_hour < a3.commit_1y_price_hour < a3.price_hour  # 38.86 < 61.38 < 88.49
    assert a3.commitment_as_of.isoformat() == "2026-07-30"  # about.timestamp 1785391997, "generated: Thu Jul 30"
    assert a3.commitment_source_url.endswith("/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml")


def test_a2_ultra_has_no_1_year_price_as_the_file_states_none_and_tpus_have_no_commitment(result):
    ultra = [o for o in result.offers if o.instance_type.startswith("a2-ultragpu")]
    assert ultra and all(o.commit_1y_price_hour is None for o in ultra)
    assert all(o.commit_1y_price_hour is None and o.commit_3y_price_hour is None and not o.commitment_as_of
               for o in result.offers if o.instance_type.startswith("tpu-"))
    with_one_year = [o for o in result.offers if o.commit_1y_price_hour is not None]
    assert len({o.instance_type for o in with_one_year}) >= 15  # A2 Standard, A3, G2 and G4 types


@pytest.mark.parametrize(("text", "problem"), [
    ("compute: [", "not YAML"),
    ("about: {}\ncompute:\n  instance: {}\n", "no about.timestamp"),
    ("about: {timestamp: 1785391997}\ncompute:\n  instance:\n    a3-highgpu-8g:\n      cost:\n        us-central1:\n"
     "          hour: 88.49\n          month: 1000.0\n          month_1y: 500.0\n", "is not 730 hours"),
    ("about: {timestamp: 1785391997}\ncompute:\n  instance:\n    a3-highgpu-8g:\n      cost:\n        us-central1:\n"
     "          hour: 88.49\n          month_1y: soon\n", "a3-highgpu-8g in us-central1: not a number"),
])
def test_a_broken_commitment_file_fails_the_run_and_names_the_problem(text, problem):
    with pytest.raises(SchemaScrapeError, match=problem):
        client({gcp_catalog.COMMITMENTS.raw_url: httpx.Response(200, text=text)}).fetch()


def test_vcpus_and_memory_come_from_the_pricing_file_per_machine_type(result):
    import yaml

    machine = yaml.safe_load(RECORDED_PRICING.read_text())["compute"]["instance"]["a3-highgpu-8g"]
    a3 = offer(result, "a3-highgpu-8g", "us-central1")
    assert (a3.vcpus, a3.ram_gb) == (Decimal(machine["cpu"]), Decimal(machine["ram"])) == (208, 1872)
    assert offer(result, "g2-standard-4", "us-central1").vcpus == 4
