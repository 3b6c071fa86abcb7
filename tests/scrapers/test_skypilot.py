from decimal import Decimal

import httpx
import pytest

from scrapers import registry, skypilot
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
LAMBDA = skypilot.CLIENTS["skypilot-lambda"]


def csv_row(instance="gpu_1x_a100", gpu="A100", count="1", price="1.29", region="us-east-1", spot="",
            info="{'Gpus': [{'Name': 'A100', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 40960}}], "
                 "'TotalGpuMemoryInMiB': 40960}"):
    return f'{instance},{gpu},{count},30,200,{price},{region},"{info}",{spot}\n'


def client_for(handler) -> skypilot.SkyPilotCatalogClient:
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == LAMBDA.url(), f"unexpected request {request.url}"
        return handler(request)

    return LAMBDA(build_client(transport=httpx.MockTransport(route)))


def serve(body: str, status: int = 200, headers=None):
    return lambda request: httpx.Response(status, text=body, headers=headers or {})


def test_recorded_lambda_catalog_parses_gpu_rows_only():
    result = registry.make_client("skypilot-lambda", offline=True).fetch()
    assert len(result.offers) == 374  # the CSV's rows with an accelerator; CPU rows are not offers
    assert not result.rejected
    h100 = next(o for o in result.offers if o.instance_type == "gpu_8x_h100_sxm5" and o.region == "us-east-1")
    assert h100.gpu_count == 8 and h100.currency == "USD"
    assert h100.gpu_memory_gb == Decimal("80.0")


def test_rows_with_absurd_values_are_rejected_and_reported():
    body = HEADER + csv_row() + csv_row("zero", count="0") + csv_row("neg", price="-1") + csv_row(
        "free", price="0") + csv_row("none", price="")
    result = client_for(serve(body)).fetch()
    assert [o.instance_type for o in result.offers] == ["gpu_1x_a100"]
    assert len(result.rejected) == 4
    assert any("GPU count '0'" in reason for reason in result.rejected)
    assert any("no price" in reason for reason in result.rejected)


def test_spot_only_rows_are_kept_and_zero_spot_means_none():
    body = HEADER + csv_row("spot-only", price="", spot="2.4") + csv_row("zero-spot", spot="0.00")
    offers = {o.instance_type: o for o in client_for(serve(body)).fetch().offers}
    assert offers["spot-only"].price_hour is None and offers["spot-only"].spot_price_hour == Decimal("2.4")
    assert offers["zero-spot"].spot_price_hour is None


def test_same_instance_in_two_zones_of_a_region_is_one_offer():
    body = HEADER + csv_row() + csv_row()
    assert len(client_for(serve(body)).fetch().offers) == 1


@pytest.mark.parametrize("info, count, size_is_total, expected", [
    # Vast.ai: SizeInMiB holds the total of all GPUs.
    ("{'Gpus': [{'Name': 'H200', 'Count': 2, 'MemoryInfo': {'SizeInMiB': 287542}}], 'TotalGpuMemoryInMiB': 287542}",
     "2", True, Decimal("140.4")),
    # Lambda: per-GPU size, and a "total" that is not one.
    ("{'Gpus': [{'Name': 'H100', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 81920}",
     "8", False, Decimal("80.0")),
    # Shadeform: GB written as MiB.
    ("{'Gpus': [{'Name': 'A6000', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 48}, 'TotalGpuMemoryInMiB': 384}]}",
     "8", False, Decimal("48.0")),
    # Hyperstack: JSON-ish null inside a Python literal.
    ("{'Gpus': [{'Name': 'A100', 'Manufacturer': null, 'Count': 1, 'MemoryInfo': {'SizeInMiB': 81920}}], "
     "'TotalGpuMemoryInMiB': 81920}", "1", False, Decimal("80.0")),
    # DigitalOcean: lower-case keys.
    ("{'gpus': [{'name': 'h100', 'count': 8.0, 'memoryinfo': {'sizeinmib': 81559}}], 'totalgpumemoryinmib': 81559}",
     "8", False, Decimal("79.6")),
    ("H100", "1", False, None),
])
def test_gpu_memory_per_gpu_handles_each_catalogs_quirk(info, count, size_is_total, expected):
    assert skypilot.gpu_memory_per_gpu(info, Decimal(count), size_is_total) == expected


def test_recorded_vast_catalog_divides_total_memory_by_count():
    offers = registry.make_client("skypilot-vast", offline=True).fetch().offers
    two_h200 = next(o for o in offers if o.instance_type == "2x-H200-32-65536")
    assert two_h200.gpu_memory_gb == Decimal("140.4")


def test_renamed_column_is_a_schema_error():
    body = HEADER.replace("Price", "Cost", 1) + csv_row()
    with pytest.raises(SchemaScrapeError, match="Price"):
        client_for(serve(body)).fetch()


@pytest.mark.parametrize("body", ["", "<html>maintenance</html>", HEADER, HEADER + csv_row()[:12]])
def test_empty_truncated_or_html_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client_for(serve(body)).fetch()


def test_azure_catalog_rows_take_gpu_and_memory_from_microsofts_size_table():
    offers = registry.make_client("skypilot-azure", offline=True).fetch().offers
    nc_h100 = next(o for o in offers if o.instance_type == "Standard_NC40ads_H100_v5")
    assert (nc_h100.gpu_name, nc_h100.gpu_memory_gb) == ("H100-NVL", Decimal("94"))
    unlisted = next(o for o in offers if o.instance_type.startswith("Standard_NV") and "A10" not in o.instance_type)
    assert unlisted.gpu_memory_gb is None  # not in the table: the row stays as the catalog wrote it


def test_a_second_row_of_one_size_and_region_at_another_price_is_refused_with_the_reason():
    body = HEADER + csv_row() + csv_row() + csv_row(price="2.10")
    result = client_for(serve(body)).fetch()
    assert [o.price_hour for o in result.offers] == [Decimal("1.29")]
    assert len(result.rejected) == 1 and "a second row for the same size and region at 2.10" in result.rejected[0]
