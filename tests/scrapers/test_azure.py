"""Azure Retail Prices client: recorded pages replayed by exact URL, edge cases from small item builders."""

import json
from decimal import Decimal

import httpx
import pytest

from scrapers import azure
from scrapers.base import SchemaScrapeError, TransientScrapeError
from scrapers.http import RecordedTransport, build_client


def item(sku="Standard_NC24ads_A100_v4", region="eastus", price=3.673, meter="NC24ads A100 v4", sku_name=None,
         product="Virtual Machines NCads A100 v4 Series", kind="Consumption", **extra):
    # The field set of a real Retail Prices item (recorded/azure/vm_prices_page1.json); values vary per test.
    row = {
        "currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": price, "unitPrice": price,
        "armRegionName": region, "location": "US East", "effectiveStartDate": "2023-01-01T00:00:00Z",
        "meterId": "m", "meterName": meter, "productId": "p", "skuId": "p/1", "productName": product,
        "skuName": sku_name or meter, "serviceName": "Virtual Machines", "serviceId": "s",
        "serviceFamily": "Compute", "unitOfMeasure": "1 Hour", "type": kind, "isPrimaryMeterRegion": True,
        "armSkuName": sku,
    }
    row.update(extra)
    return row


def page(items, next_link=None):
    return {"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
            "Items": items, "NextPageLink": next_link, "Count": len(items)}


AKS_PAGE = json.loads((azure.RECORDED / "aks_eastus_consumption.json").read_text())


def client_for(routes: dict):
    """routes: URL -> dict (JSON body) or callable(request) -> Response; any other URL fails the test."""
    def handle(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        assert url in routes, f"unexpected request {url}"
        answer = routes[url]
        return answer(request) if callable(answer) else httpx.Response(200, json=answer)

    return azure.AzureRetailPricesClient(build_client(transport=httpx.MockTransport(handle)))


def test_recorded_pages_give_the_aks_fee_and_no_gpu_offer_from_a_cpu_size():
    routes = azure.AzureRetailPricesClient.recorded()
    client = azure.AzureRetailPricesClient(build_client(transport=RecordedTransport(routes)))
    result = client.fetch()
    # The recorded VM page is Standard_D2s_v3 only: a CPU size, so no offer and nothing to report.
    assert result.offers == [] and result.rejected == []
    (fee,) = result.capabilities
    assert (fee.key, fee.value, fee.amount, fee.currency) == ("control_plane_fee", "paid", Decimal("0.1"), "USD")
    assert fee.source_url == azure.AKS_URL
    meters = result.kubernetes_facts["aks_control_plane_meters"]["meters"]
    assert meters["Standard Long Term Support"]["amount"] == "0.6"
    # The closed FreeTierInfrastructureCost row (0.01, ends before it starts) loses to the open one.
    assert meters["FreeTierInfrastructureCost Uptime SLA"]["amount"] == "0.05"
    assert not any(name.startswith("Automatic") for name in meters)  # other product, not the control plane


def test_recorded_cpu_page_rows_are_all_filtered_for_the_right_reasons(monkeypatch):
    items = json.loads((azure.RECORDED / "vm_prices_page1.json").read_text())["Items"]
    # Pretend D2s_v3 were a GPU size: of its 9 real rows (Windows, Low Priority, DevTest, Spot, savings plan)
    # only the Linux pay-as-you-go row and the Linux Spot row may survive.
    monkeypatch.setattr(azure, "SIZES", {"Standard_D2s_v3": azure.Size("T4", 1, 16, 2, 8, "https://example.invalid")})
    (offer,) = azure.parse_vm_items(items, [])
    assert offer.price_hour == Decimal("0.096") and offer.spot_price_hour == Decimal("0.018816")
    # The real item's savingsPlan: 1 Year 0.06624, 3 Years 0.04512 per hour, dated by the run's day
    assert (offer.commit_1y_price_hour, offer.commit_3y_price_hour) == (Decimal("0.06624"), Decimal("0.04512"))
    assert offer.commitment_as_of is not None and "api-version=2023-01-01-preview" in offer.commitment_source_url


def test_the_vm_query_asks_for_the_api_version_that_carries_savings_plan_rates():
    assert "api-version=2023-01-01-preview" in azure.VM_URL and "api-version" not in azure.AKS_URL


def test_a_savings_plan_entry_without_a_term_or_a_price_is_refused_and_the_offer_kept():
    rejected = []
    (offer,) = azure.parse_vm_items([item(savingsPlan=[{"retailPrice": 2.0, "term": "5 Years"}])], rejected)
    assert offer.price_hour == Decimal("3.673") and offer.commit_1y_price_hour is None
    assert rejected == ["Standard_NC24ads_A100_v4 in eastus (NC24ads A100 v4): savings plan: savingsPlan entry "
                        "without a 1 Year / 3 Years term: {'retailPrice': 2.0, 'term': '5 Years'}"]


def test_gpu_sizes_become_offers_with_spot_beside_on_demand():
    items = [
        item(),
        item(price=0.7345, meter="NC24ads A100 v4 Spot"),
        item(price=9.9, product="Virtual Machines NCads A100 v4 Series Windows"),
        item(price=0.5, meter="NC24ads A100 v4 Low Priority"),
        item(price=2.0, kind="DevTestConsumption"),
        item(sku="Standard_ND96isr_H100_v5", region="westus3", price=98.32, meter="ND96isr H100 v5"),
    ]
    offers = {(o.instance_type, o.region): o for o in client_for({azure.VM_URL: page(items),
                                                                   azure.AKS_URL: AKS_PAGE}).fetch().offers}
    a100 = offers[("Standard_NC24ads_A100_v4", "eastus")]
    assert (a100.price_hour, a100.spot_price_hour) == (Decimal("3.673"), Decimal("0.7345"))
    assert (a100.gpu_name, a100.gpu_count, a100.gpu_memory_gb) == ("A100-80G-PCIe", 1, 80)
    h100 = offers[("Standard_ND96isr_H100_v5", "westus3")]
    assert h100.gpu_count == 8 and h100.spot_price_hour is None


def test_every_curated_size_resolves_to_a_catalog_gpu_with_its_memory():
    from scrapers.normalize import default_gpu_resolver

    for sku, size in azure.SIZES.items():
        # A fractional size (NVv4) states its slice's memory; the GPU is named by a whole one's.
        memory = Decimal(size.gpu_memory_gb) / (size.gpu_fraction or 1)
        slug = default_gpu_resolver().resolve(size.gpu_name, memory)
        assert slug is not None, sku
        assert (size.gpu_fraction is None) == (size.gpu_count >= 1), sku


def test_unknown_gpu_size_is_reported_not_guessed_and_cpu_sizes_are_silent():
    items = [item(), item(sku="Standard_NV36ads_A10_v5", meter="NV36ads A10 v5"),
             item(sku="Standard_NV36ads_A10_v5", meter="NV36ads A10 v5 Spot", price=1.0),
             item(sku="Standard_D4s_v5", meter="D4s v5")]
    result = client_for({azure.VM_URL: page(items), azure.AKS_URL: AKS_PAGE}).fetch()
    assert [o.instance_type for o in result.offers] == ["Standard_NC24ads_A100_v4"]
    assert len(result.rejected) == 1 and "Standard_NV36ads_A10_v5" in result.rejected[0]
    assert "2 price rows" in result.rejected[0]


@pytest.mark.parametrize("price", [0, -1, "abc"])
def test_absurd_prices_are_rejected_with_a_reason(price):
    result = client_for({azure.VM_URL: page([item(price=price), item(region="westus2")]),
                         azure.AKS_URL: AKS_PAGE}).fetch()
    assert [o.region for o in result.offers] == ["westus2"]
    assert len(result.rejected) == 1 and "eastus" in result.rejected[0]


def test_pagination_follows_next_page_link_across_pages():
    second = "https://prices.azure.com/api/retail/prices?$filter=x&$skip=1000"
    routes = {azure.VM_URL: page([item()], next_link=second),
              str(httpx.URL(second)): page([item(region="westeurope")]), azure.AKS_URL: AKS_PAGE}
    assert {o.region for o in client_for(routes).fetch().offers} == {"eastus", "westeurope"}


def test_a_page_failing_midway_fails_the_whole_read():
    second = "https://prices.azure.com:443/api/retail/prices?$skip=1000"
    routes = {azure.VM_URL: page([item()], next_link=second),
              str(httpx.URL(second)): lambda request: httpx.Response(503), azure.AKS_URL: AKS_PAGE}
    with pytest.raises(TransientScrapeError):
        client_for(routes).fetch()


def test_a_next_page_link_loop_is_a_schema_error():
    routes = {azure.VM_URL: page([item()], next_link=azure.VM_URL), azure.AKS_URL: AKS_PAGE}
    with pytest.raises(SchemaScrapeError, match="loops"):
        client_for(routes).fetch()


@pytest.mark.parametrize("body", [page([]), {"items": [item()]}, {"Items": None}])
def test_empty_list_or_renamed_envelope_raises(body):
    with pytest.raises(SchemaScrapeError):
        client_for({azure.VM_URL: body, azure.AKS_URL: AKS_PAGE}).fetch()


def test_missing_item_field_is_named():
    broken = item()
    del broken["retailPrice"]
    with pytest.raises(SchemaScrapeError, match="retailPrice"):
        client_for({azure.VM_URL: page([broken]), azure.AKS_URL: AKS_PAGE}).fetch()


def test_empty_aks_page_raises_and_missing_standard_meter_leaves_fee_unknown():
    with pytest.raises(SchemaScrapeError):
        client_for({azure.VM_URL: page([item()]), azure.AKS_URL: page([])}).fetch()
    only_lts = [row for row in AKS_PAGE["Items"] if row["meterName"] != "Standard Uptime SLA"]
    result = client_for({azure.VM_URL: page([item()]), azure.AKS_URL: page(only_lts)}).fetch()
    assert result.capabilities == [] and result.offers


@pytest.mark.parametrize("body", [b"", b"<html>maintenance</html>", b'{"Items": [{"armSkuName": "Standard_'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client_for({azure.VM_URL: lambda request: httpx.Response(200, content=body)}).fetch()
