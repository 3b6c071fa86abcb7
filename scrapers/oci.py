"""Oracle Cloud GPU prices and the OKE enhanced-cluster fee, from Oracle's public price list API (no key).

API: `GET https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD`, the data behind Oracle's
public price list (https://www.oracle.com/cloud/price-list/), used unauthenticated by several public clients
(provider-apis.md section 4; the shape below is the one in the recorded answer).
Response `{lastUpdated, items: [{partNumber, displayName, metricName, serviceCategory,
currencyCodeLocalizations: [{currencyCode, prices: [{model, value}]}]}]}`; no paging fields were seen in the
recorded answer, so a `hasMore: true` answer is refused rather than half-read.

GPU compute is priced per GPU-hour (`metricName == "GPU Per Hour"`) under one part number per GPU generation, with
no shape and no region. A per-GPU price is not a machine: OCI rents these GPUs only in whole shapes (BM.GPU.H100.8
and so on), so each part becomes one offer per shape it prices (SHAPES), at the part's price times the shape's GPUs
(the last number of its name), region "global" (the list names none). A GPU part SHAPES does not name ("X7", "E4",
"H100T") is never guessed: the row goes to `result.rejected` with its part number.
Rows that are not public rentals are left out: NVIDIA AI Enterprise
(a software licence with the same metric and category), Cloud@Customer and VMware (other service categories).
Preemptible prices are not in the list and stay unknown.

OKE: the enhanced cluster is part B96545, displayName "OCI Kubernetes Engine - Enhanced Cluster", metric
"Cluster Per Hour" (kubernetes-apis.md section 10); when the list carries it, it becomes `control_plane_fee`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from .base import ProviderClient, SchemaScrapeError, ScrapedCapability, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get
from .normalize import positive, to_decimal

logger = logging.getLogger(__name__)

RECORDED = Path(__file__).resolve().parent / "recorded" / "oci"
PRODUCTS_URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"
DOCS_URL = "https://www.oracle.com/cloud/price-list/"
CURRENCY = "USD"
GPU_METRIC = "GPU Per Hour"
GPU_CATEGORIES = ("Compute - GPU", "Compute - GPU - Other")
LICENCE_MARKER = "AI Enterprise"
OKE_PART = "B96545"
OKE_METRIC = "Cluster Per Hour"
REGION = "global"
ITEM_FIELDS = ("partNumber", "displayName", "metricName", "serviceCategory", "currencyCodeLocalizations")

# Price-list part -> (the GPU as the part names it, the shapes it prices). Which shapes
# rent each GPU: Oracle's OKE quickstart lists its GPU worker shapes by name (oracle-quickstart/oci-hpc-oke,
# docs/worker-node-images.md @ 61d210a, 2026-08-20: VM.GPU.A10.1, VM.GPU.A10.2, BM.GPU.A10.4, BM.GPU.L40S.4,
# BM.GPU.H100.8, BM.GPU.H200.8, BM.GPU.B200.8, BM.GPU.B300.8, BM.GPU.GB200.4, BM.GPU.GB300.4, BM.GPU.MI300X.8,
# BM.GPU.MI355X.8) and gives NCCL settings for BM.GPU.RTXPRO.8 (docs/recommended-nccl-rccl-parameters-by-shape.md);
# a shape's GPU count is its name's last number, as Oracle's Compute Shapes page lists it
# (https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm). That the part prices the shape:
# SkyPilot's OCI catalog (skypilot-org/skypilot-catalog, catalogs/v8/oci/vms.csv, built from this price list) prices
# every one of these shapes at exactly its GPU count times the part's pay-as-you-go price of 2026-08-14. Shapes the
# quickstart lists under another part, or none (BM.GPU4.8 "E3", BM.GPU.A100-v2.8 "A100 - v2", BM.GPU3.x "V2",
# BM.GPU2.2 "X7"), are left to the catalog rows: no part here is matched to them by price alone.
SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "B95909": ("A10", ("VM.GPU.A10.1", "VM.GPU.A10.2", "BM.GPU.A10.4")),
    "B109479": ("L40S", ("BM.GPU.L40S.4",)),
    "B98415": ("H100", ("BM.GPU.H100.8",)),
    "B110519": ("H200", ("BM.GPU.H200.8",)),
    "B110978": ("B200", ("BM.GPU.B200.8",)),
    "B112237": ("B300", ("BM.GPU.B300.8",)),
    "B110979": ("GB200", ("BM.GPU.GB200.4",)),
    "B112140": ("GB300", ("BM.GPU.GB300.4",)),
    "B109485": ("MI300X", ("BM.GPU.MI300X.8",)),
    "B111758": ("MI355X", ("BM.GPU.MI355X.8",)),
    "B112613": ("RTX PRO 6000", ("BM.GPU.RTXPRO.8",)),
}


def shape_gpus(shape: str) -> int:
    """The GPU count an OCI GPU shape's name ends with: BM.GPU.H100.8 -> 8."""
    return int(shape.rsplit(".", 1)[1])


class OciPriceListClient(ProviderClient):
    info = SourceInfo(slug="oci", provider="oci", name="Oracle Cloud price list API", kind="api", url=DOCS_URL)

    provides_kubernetes_facts = True  # read by scrapers.registry.snapshot_sources

    recordings = {PRODUCTS_URL: RECORDED / "products_usd.json"}

    def fetch(self) -> ScrapeResult:
        response = get(self.http, PRODUCTS_URL)
        try:
            payload = json.loads(response.content, parse_float=Decimal)
        except ValueError as exc:
            raise SchemaScrapeError(f"{PRODUCTS_URL} did not return JSON ({len(response.content)} bytes)") from exc
        return parse_products(payload)


def _gpu_label(display_name: str) -> str:
    """'Oracle Cloud Infrastructure - Compute - GPU - H100' -> 'H100'; 'Compute - GPU - A100 - v2' -> 'A100 - v2'."""
    text = re.sub(r"\s+", " ", display_name).strip()
    _, marker, rest = text.partition("GPU - ")
    return rest.strip() if marker else text.rsplit(" - ", 1)[-1].strip()


def _payg_price(item: dict) -> Decimal | None:
    """The USD pay-as-you-go value; ValueError when it is missing, ambiguous or not a number."""
    localizations = [loc for loc in item["currencyCodeLocalizations"] or [] if loc.get("currencyCode") == CURRENCY]
    if len(localizations) != 1:
        raise ValueError(f"{len(localizations)} {CURRENCY} price localizations")
    prices = [price for price in localizations[0].get("prices") or [] if price.get("model") == "PAY_AS_YOU_GO"]
    if len(prices) != 1:
        raise ValueError(f"{len(prices)} PAY_AS_YOU_GO prices")
    value = prices[0].get("value")
    if isinstance(value, bool) or not isinstance(value, int | Decimal | float):
        raise ValueError(f"price {value!r} is not a number")
    return to_decimal(value)


def parse_products(payload: object) -> ScrapeResult:
    if not isinstance(payload, dict) or not isinstance(payload.get("items"), list):
        raise SchemaScrapeError(f"{PRODUCTS_URL}: response has no 'items' list")
    if payload.get("hasMore") is True:
        raise SchemaScrapeError(f"{PRODUCTS_URL}: the answer is paged (hasMore) and paging is not implemented")
    items = payload["items"]
    if not items:
        raise SchemaScrapeError(f"{PRODUCTS_URL}: the price list is empty")
    result = ScrapeResult(offers=[])
    parts: set[str] = set()
    for index, item in enumerate(items, start=1):
        for field in ITEM_FIELDS:
            if not isinstance(item, dict) or field not in item:
                raise SchemaScrapeError(f"{PRODUCTS_URL}: item #{index} has no '{field}' field")
        if item["partNumber"] == OKE_PART or (item["metricName"] == OKE_METRIC and "Enhanced Cluster" in
                                              str(item["displayName"])):
            result.capabilities.append(_oke_fee(item))
            continue
        if (
            item["metricName"] != GPU_METRIC
            or item["serviceCategory"] not in GPU_CATEGORIES
            or LICENCE_MARKER in str(item["displayName"])
        ):
            continue
        name = re.sub(r"\s+", " ", str(item["displayName"])).strip()
        where = f"{item['partNumber']} ({name})"
        try:
            price = positive(_payg_price(item), "price")
        except ValueError as exc:
            result.rejected.append(f"{where}: {exc}")
            continue
        part, named = str(item["partNumber"]), _gpu_label(name)
        if part not in SHAPES:
            # "X7", "E4", "H100T", "A100 - v2": parts nobody has tied to the shapes they price with a source. A
            # per-GPU price is no machine, so the row is counted, not stored.
            result.rejected.append(f"{where}: no shape is known to be priced by this part ({named!r})")
            continue
        if part in parts:
            result.rejected.append(f"{where}: second row of the same part")
            continue
        parts.add(part)
        label, shapes = SHAPES[part]
        if named != label:
            result.rejected.append(f"{where}: the part now names GPU {named!r}, not {label!r}")
            continue
        result.offers += [
            ScrapedOffer(instance_type=shape, region=REGION, gpu_name=label, gpu_count=Decimal(shape_gpus(shape)),
                         currency=CURRENCY, price_hour=price * shape_gpus(shape))
            for shape in shapes
        ]
    if not result.offers:
        raise SchemaScrapeError(f"{PRODUCTS_URL}: no '{GPU_METRIC}' rental rows among {len(items)} items")
    if not result.capabilities:
        logger.info("oci: the price list has no OKE enhanced-cluster part (%s); fee left unknown", OKE_PART)
    if payload.get("lastUpdated"):
        logger.info("oci: price list lastUpdated %s", payload["lastUpdated"])
        as_of = _last_updated(payload["lastUpdated"])
        if as_of is not None:
            # The price list's own date: the offers' "price as of" (a replayed recording keeps its day).
            result.offers = [replace(offer, price_as_of=as_of) for offer in result.offers]
    return result


def _last_updated(value: object) -> datetime | None:
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        logger.warning("oci: unreadable lastUpdated %r; offers stay undated", value)
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _oke_fee(item: dict) -> ScrapedCapability:
    try:
        amount = _payg_price(item)
    except ValueError as exc:
        raise SchemaScrapeError(f"OKE enhanced cluster ({item['partNumber']}): {exc}") from exc
    if amount is None or amount < 0:
        raise SchemaScrapeError(f"OKE enhanced cluster ({item['partNumber']}): price {amount}")
    return ScrapedCapability(
        key="control_plane_fee",
        value="paid" if amount > 0 else "free",
        amount=amount,
        currency=CURRENCY,
        label=f"{amount} {CURRENCY} per enhanced cluster-hour",
        detail=f"Oracle price list part {item['partNumber']} '{item['displayName']}' ({item['metricName']}).",
        source_url=f"{PRODUCTS_URL}&partNumber={item['partNumber']}",
    )


CLIENTS = {"oci": OciPriceListClient}
