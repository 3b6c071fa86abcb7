"""Azure GPU virtual-machine prices and the AKS control-plane fee, from the Azure Retail Prices API (no key).

API: https://learn.microsoft.com/en-us/rest/api/cost-management/retail-prices/azure-retail-prices
(`GET https://prices.azure.com/api/retail/prices?$filter=<OData>`, unauthenticated; pages are chained by
`NextPageLink`, null on the last page; each item carries `armSkuName`, `armRegionName`, `retailPrice`,
`currencyCode`, `meterName`, `skuName`, `productName`, `type`, `unitOfMeasure`).

The price list says nothing about GPUs: a size's GPU model and count come from the curated `SIZES` table below,
copied from Microsoft's size pages (each row cites its page). A size that is not in the table is never guessed: it is
reported in `result.rejected` (once per size) and left out. Rows are kept when they are pay-as-you-go Linux prices:
`type == "Consumption"` (DevTestConsumption and Reservation are other price types), no "Windows" in `productName`,
no "Low Priority" (legacy, retiring) in `meterName`/`skuName`, unit "1 Hour", and not closed (`effectiveEndDate`).
A meter or SKU name ending in " Spot" is the Spot price of the same size and region. With
`api-version=2023-01-01-preview` ("Rates for savings plans are only available with" that version, the API's page
says) a pay-as-you-go item also carries `savingsPlan`: `[{"unitPrice", "retailPrice", "term": "1 Year" | "3 Years"}]`,
the hourly price of the same size under a 1- or 3-year Azure savings plan for compute: the offer's commitment prices,
dated by the run's day (the API states no date for them). Reservations (`type == "Reservation"`, whose `unitPrice` is
the whole term's price) are not read.

AKS (serviceName 'Azure Kubernetes Service', see kubernetes-apis.md section 9): the Standard tier is the
`Standard Uptime SLA` meter of product `Azure Kubernetes Service`, per cluster-hour (the filter infracost uses).
We read it in one reference region (eastus) and return it as the `control_plane_fee` capability; the other AKS
control-plane meters of that product (Long Term Support, Free-tier infrastructure) are returned as facts.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import httpx

from .base import ProviderClient, SchemaScrapeError, ScrapedCapability, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get
from .normalize import positive, to_decimal

logger = logging.getLogger(__name__)

RECORDED = Path(__file__).resolve().parent / "recorded" / "azure"
BASE_URL = "https://prices.azure.com/api/retail/prices"
DOCS_URL = "https://learn.microsoft.com/en-us/rest/api/cost-management/retail-prices/azure-retail-prices"

# gpuhunt's filter (dstackai/gpuhunt src/gpuhunt/providers/azure.py), minus its `Dedicated` clause: Linux
# pay-as-you-go VM meters. Spot stays in (it is a Consumption meter); Windows and Low Priority are also re-checked
# per row because a filter typo on Microsoft's side must not let them through.
VM_FILTER = (
    "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and contains(productName, 'Windows') eq false"
    " and contains(meterName, 'Low Priority') eq false"
)
AKS_REGION = "eastus"
# The exact query the recorded AKS page was captured with (see recorded/azure/README.md).
AKS_FILTER = (
    f"armRegionName eq '{AKS_REGION}' and serviceName eq 'Azure Kubernetes Service' and priceType eq 'Consumption'"
)
AKS_PRODUCT = "Azure Kubernetes Service"
AKS_STANDARD_METER = "Standard Uptime SLA"
MAX_PAGES = 5000  # the whole VM consumption list is a few hundred pages of 1000; more means a NextPageLink loop
ITEM_FIELDS = ("armSkuName", "armRegionName", "retailPrice", "currencyCode", "meterName", "skuName", "productName",
               "type", "unitOfMeasure")


def _url(odata_filter: str, **params: str) -> str:
    return str(httpx.URL(BASE_URL, params={**params, "$filter": odata_filter}))


SAVINGS_PLAN_VERSION = "2023-01-01-preview"
VM_URL = _url(VM_FILTER, **{"api-version": SAVINGS_PLAN_VERSION})
SAVINGS_PLAN_TERMS = {"1 Year": "1y", "3 Years": "3y"}
AKS_URL = _url(AKS_FILTER)


@dataclass(frozen=True, slots=True)
class Size:
    gpu_name: str  # a spelling scrapers/data/gpus.toml resolves (the GPU Microsoft's page names)
    gpu_count: int | Decimal  # a share of one GPU for the fractional sizes (NVv4)
    gpu_memory_gb: int  # per GPU (of the slice, for a fractional size), as the size page states
    vcpus: int
    ram_gb: int | None  # None where Microsoft's pages disagree
    source_url: str
    gpu_fraction: Decimal | None = None  # share of one GPU when the size has less than one


_NCA100 = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/nca100v4-series"
_NCH100 = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ncadsh100v5-series"
_NCT4 = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ncast4v3-series"
_NDH100 = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series"
_NDA100 = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ndasra100v4-series"
_NDMA100 = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ndma100v4-series"
_NDMI300X = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ndmi300xv5-series"
_NVV4 = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/nvv4-series"

# armSkuName -> what the size is. Only sizes whose GPU model, count and memory the cited Microsoft page states
# (checked 2026-11-29 against the MicrosoftDocs/azure-docs sources of these pages). The GPU spelling is the
# model the page names, mapped through gpus.toml; where the page does not say SXM or PCIe we use the
# form-factor-neutral entry. Not listed (left unknown on purpose): NVadsA10 v5 (fractional GPUs), NCv3/NDv2
# (retired 2025), ND H200 v5 and ND GB200/GB300 v6 (no per-size table read for them yet).
SIZES: dict[str, Size] = {
    # NC A100 v4: NVIDIA A100 PCIe 80 GiB, 1-4 GPUs.
    "Standard_NC24ads_A100_v4": Size("A100-80G-PCIe", 1, 80, 24, 220, _NCA100),
    "Standard_NC48ads_A100_v4": Size("A100-80G-PCIe", 2, 80, 48, 440, _NCA100),
    "Standard_NC96ads_A100_v4": Size("A100-80G-PCIe", 4, 80, 96, 880, _NCA100),
    # NCads H100 v5: NVIDIA H100 NVL 94 GB per GPU.
    "Standard_NC40ads_H100_v5": Size("H100-NVL", 1, 94, 40, 320, _NCH100),
    "Standard_NC80adis_H100_v5": Size("H100-NVL", 2, 94, 80, 640, _NCH100),
    # NCasT4_v3: NVIDIA Tesla T4 16 GB.
    "Standard_NC4as_T4_v3": Size("T4", 1, 16, 4, 28, _NCT4),
    "Standard_NC8as_T4_v3": Size("T4", 1, 16, 8, 56, _NCT4),
    "Standard_NC16as_T4_v3": Size("T4", 1, 16, 16, 110, _NCT4),
    "Standard_NC64as_T4_v3": Size("T4", 4, 16, 64, 440, _NCT4),
    # ND H100 v5: 8x NVIDIA H100 (NVLink) 80 GiB.
    "Standard_ND96isr_H100_v5": Size("H100", 8, 80, 96, 1900, _NDH100),
    # ND A100 v4: 8x NVIDIA A100 (NVLink) 40 GiB.
    "Standard_ND96asr_v4": Size("A100", 8, 40, 96, 900, _NDA100),
    # NDm A100 v4: 8x NVIDIA A100 (NVLink) 80 GiB. RAM: the spec include says 900 GiB, Microsoft's Aspire size
    # list 1800 GB, so it stays unknown.
    "Standard_ND96amsr_A100_v4": Size("A100-80GB", 8, 80, 96, None, _NDMA100),
    # ND MI300X v5: 8x AMD Instinct MI300X 192 GB.
    "Standard_ND96isr_MI300X_v5": Size("MI300X", 8, 192, 96, 1850, _NDMI300X),
    # NVv4: partitions of an AMD Radeon Instinct MI25; the Accelerators tab gives 1/8, 1/4, 1/2 and 1 GPU with 2, 4,
    # 8 and 16 GB (read 2026-12-01 in MicrosoftDocs/azure-docs, the nvv4-series page's sizes include).
    "Standard_NV4as_v4": Size("Radeon MI25", Decimal("0.125"), 2, 4, 14, _NVV4, Decimal("0.125")),
    "Standard_NV8as_v4": Size("Radeon MI25", Decimal("0.25"), 4, 8, 28, _NVV4, Decimal("0.25")),
    "Standard_NV16as_v4": Size("Radeon MI25", Decimal("0.5"), 8, 16, 56, _NVV4, Decimal("0.5")),
    "Standard_NV32as_v4": Size("Radeon MI25", 1, 16, 32, 112, _NVV4),
}


class AzureRetailPricesClient(ProviderClient):
    info = SourceInfo(slug="azure", provider="azure", name="Azure Retail Prices API", kind="api", url=DOCS_URL)

    provides_kubernetes_facts = True  # read by scrapers.registry.snapshot_sources

    recordings = {VM_URL: RECORDED / "vm_prices_page1.json", AKS_URL: RECORDED / "aks_eastus_consumption.json"}

    def fetch(self) -> ScrapeResult:
        vm_items = list(_items(self.http, VM_URL))
        result = ScrapeResult(offers=[])
        result.offers = parse_vm_items(vm_items, result.rejected)
        if not result.offers:
            logger.warning("azure: none of %s price items is a GPU size in the curated table", len(vm_items))
        aks_items = list(_items(self.http, AKS_URL))
        capability, facts = parse_aks_items(aks_items)
        if capability is not None:
            result.capabilities.append(capability)
        result.kubernetes_facts.update(facts)
        return result


def _page(http: httpx.Client, url: str) -> dict:
    response = get(http, url)
    try:
        # Decimal keeps 3.673 exactly 3.673.
        payload = json.loads(response.content, parse_float=Decimal)
    except ValueError as exc:
        raise SchemaScrapeError(f"{url} did not return JSON ({len(response.content)} bytes)") from exc
    if not isinstance(payload, dict) or not isinstance(payload.get("Items"), list):
        raise SchemaScrapeError(f"{url}: response has no 'Items' list")
    return payload


def _items(http: httpx.Client, url: str):
    """Every item of every page from `url` on, following NextPageLink; any failed page fails the whole read."""
    seen: set[str] = set()
    total = 0
    next_url: str | None = url
    while next_url:
        if next_url in seen or len(seen) >= MAX_PAGES:
            raise SchemaScrapeError(f"NextPageLink loops or never ends after {len(seen)} pages ({next_url})")
        seen.add(next_url)
        payload = _page(http, next_url)
        total += len(payload["Items"])
        yield from payload["Items"]
        link = payload.get("NextPageLink")
        if link is not None and not isinstance(link, str):
            raise SchemaScrapeError(f"{next_url}: NextPageLink is not a URL: {link!r}")
        next_url = str(httpx.URL(link)) if link else None
    if total == 0:
        raise SchemaScrapeError(f"{url}: the price list is empty")


def _field(item: dict, name: str, index: int):
    if not isinstance(item, dict) or name not in item:
        raise SchemaScrapeError(f"price item #{index} has no '{name}' field")
    return item[name]


def _is_open(item: dict, now: datetime) -> bool:
    """False for a closed meter: an effectiveEndDate in the past or before its own start (the AKS page has one)."""
    end = item.get("effectiveEndDate")
    if not end:
        return True
    try:
        end_at = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
        start = item.get("effectiveStartDate")
        start_at = datetime.fromisoformat(str(start).replace("Z", "+00:00")) if start else None
    except ValueError as exc:
        raise SchemaScrapeError(f"unparsable effective dates {item.get('effectiveStartDate')!r}/{end!r}") from exc
    return end_at > now and (start_at is None or end_at > start_at)


def _is_spot(item: dict) -> bool:
    return str(item["meterName"]).endswith(" Spot") or str(item["skuName"]).endswith(" Spot")


def parse_vm_items(items: list[dict], rejected: list[str], now: datetime | None = None) -> list[ScrapedOffer]:
    """Pay-as-you-go Linux GPU offers, one per (size, region), with the Spot price of the same size beside it."""
    now = now or datetime.now(UTC)
    prices: dict[tuple[str, str], dict[str, Decimal]] = {}
    currencies: dict[tuple[str, str], str] = {}
    unknown: dict[str, int] = {}
    for index, item in enumerate(items, start=1):
        for name in ITEM_FIELDS:
            _field(item, name, index)
        name_text = f"{item['meterName']} {item['skuName']}"
        if (
            item["type"] != "Consumption"
            or "Windows" in str(item["productName"])
            or "Low Priority" in name_text
            or item["unitOfMeasure"] != "1 Hour"
            or not _is_open(item, now)
        ):
            continue
        sku = str(item["armSkuName"])
        if sku not in SIZES:
            unknown[sku] = unknown.get(sku, 0) + 1
            continue
        where = f"{sku} in {item['armRegionName']} ({item['meterName']})"
        try:
            price = positive(item["retailPrice"], "price")
        except ValueError as exc:
            rejected.append(f"{where}: {exc}")
            continue
        key = (sku, str(item["armRegionName"]))
        kind = "spot" if _is_spot(item) else "on_demand"
        known = prices.setdefault(key, {})
        if kind in known and known[kind] != price:
            rejected.append(f"{where}: second {kind} price {price} (kept {known[kind]})")
            continue
        known[kind] = price
        currencies[key] = str(item["currencyCode"])
        if kind == "on_demand":
            try:
                known.update(savings_plan_prices(item))
            except ValueError as exc:
                rejected.append(f"{where}: savings plan: {exc}")
    for sku, count in sorted(unknown.items()):
        if sku.startswith("Standard_N"):
            # N-series are the GPU families; anything else is a CPU size and not an offer for this product.
            rejected.append(f"{sku}: GPU size not in the curated size table ({count} price rows), left unknown")
    if unknown:
        logger.info("azure: %s sizes not in the curated table (%s rows)", len(unknown), sum(unknown.values()))
    offers = []
    for (sku, region), price in sorted(prices.items()):
        size = SIZES[sku]
        offers.append(
            ScrapedOffer(
                instance_type=sku,
                region=region,
                gpu_name=size.gpu_name,
                gpu_count=Decimal(size.gpu_count),
                gpu_fraction=size.gpu_fraction,
                gpu_memory_gb=Decimal(size.gpu_memory_gb),
                vcpus=Decimal(size.vcpus),
                ram_gb=Decimal(size.ram_gb) if size.ram_gb is not None else None,
                currency=currencies[(sku, region)],
                price_hour=price.get("on_demand"),
                spot_price_hour=price.get("spot"),
                commit_1y_price_hour=price.get("1y"),
                commit_3y_price_hour=price.get("3y"),
                commitment_as_of=now.date() if "1y" in price or "3y" in price else None,
                commitment_source_url=VM_URL if "1y" in price or "3y" in price else "",
            )
        )
    return offers


def savings_plan_prices(item: dict) -> dict[str, Decimal]:
    """{"1y": hourly price, "3y": ...} from a pay-as-you-go item's `savingsPlan` (api-version 2023-01-01-preview);
    empty without one. Raises ValueError for an entry that is not a term and a positive price."""
    plans = item.get("savingsPlan") or []
    if not isinstance(plans, list):
        raise ValueError(f"savingsPlan is not a list: {plans!r:.80}")
    found: dict[str, Decimal] = {}
    for plan in plans:
        term = SAVINGS_PLAN_TERMS.get(plan.get("term")) if isinstance(plan, dict) else None
        if term is None:
            raise ValueError(f"savingsPlan entry without a 1 Year / 3 Years term: {plan!r:.80}")
        found[term] = positive(plan.get("retailPrice"), f"savingsPlan {plan.get('term')} price")
    return found


def parse_aks_items(
    items: list[dict], now: datetime | None = None
) -> tuple[ScrapedCapability | None, dict[str, object]]:
    """The Standard-tier fee as a capability (None when the meter is absent) and the open AKS meters as facts."""
    now = now or datetime.now(UTC)
    meters: dict[str, dict[str, str]] = {}
    for index, item in enumerate(items, start=1):
        for name in ("productName", "meterName", "retailPrice", "currencyCode", "unitOfMeasure", "type"):
            _field(item, name, index)
        if (
            item["productName"] != AKS_PRODUCT
            or item["type"] != "Consumption"
            or item["unitOfMeasure"] != "1 Hour"
            or not _is_open(item, now)
        ):
            continue
        try:
            price = to_decimal(item["retailPrice"])
        except ValueError as exc:
            raise SchemaScrapeError(f"AKS meter {item['meterName']!r}: {exc}") from exc
        if price is None or price < 0:
            raise SchemaScrapeError(f"AKS meter {item['meterName']!r}: price {item['retailPrice']!r}")
        meters[str(item["meterName"])] = {"amount": str(price), "currency": str(item["currencyCode"]),
                                          "unit": "cluster-hour"}
    facts: dict[str, object] = {"aks_control_plane_meters": {"region": AKS_REGION, "meters": meters}} if meters else {}
    standard = meters.get(AKS_STANDARD_METER)
    if standard is None:
        logger.warning("azure: no open '%s' meter among %s AKS items; fee left unknown", AKS_STANDARD_METER, len(items))
        return None, facts
    amount = Decimal(standard["amount"])
    others = "; ".join(f"{name}: {m['amount']} {m['currency']}/h" for name, m in sorted(meters.items())
                       if name != AKS_STANDARD_METER)
    capability = ScrapedCapability(
        key="control_plane_fee",
        value="paid" if amount > 0 else "free",
        amount=amount,
        currency=standard["currency"],
        label=f"{amount} {standard['currency']} per cluster-hour (Standard tier)",
        detail=(f"Retail Prices API, {AKS_REGION}: '{AKS_STANDARD_METER}' (Standard tier) {amount} "
                f"{standard['currency']} per cluster-hour."
                + (f" Other control-plane meters: {others}." if others else "")),
        source_url=AKS_URL,
    )
    return capability, facts


CLIENTS = {"azure": AzureRetailPricesClient}
