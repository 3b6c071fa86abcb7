"""RunPod GPU types, prices and stock from RunPod's GraphQL API.

Contract: `POST https://api.runpod.io/graphql` with `{"query": ...}` (https://docs.runpod.io/sdks/graphql/manage-pods
and the `gpuTypes` query the runpod-python SDK sends for `get_gpu()`, https://docs.runpod.io/sdks/python/apis).
The catalog query needs no key (dstackai/gpuhunt reads it anonymously). GraphQL reports failures as HTTP 200 with an
`errors` list, which we treat as a broken response.

- Prices are USD per GPU-hour and the same in every data center, so each GPU type gives one offer per cloud
  (`secure` / `community`) for one GPU, region "" (RunPod does not price by region): `securePrice` /
  `communityPrice` on demand, `secureSpotPrice` / `communitySpotPrice` interruptible. A cloud whose flag
  (`secureCloud` / `communityCloud`) is false or whose price is null is not offered.
- Stock: `lowestPrice(input: {gpuCount: 1}).stockStatus` is "High" / "Medium" / "Low" or null (nothing to rent),
  mapped to available / limited / unavailable for both clouds of the type (the query asks across clouds). A
  response without the field (the recorded documentation example did not select it) leaves availability unknown.
  The availability poll (`fetch_availability`, every 15 minutes) sends the same single query.
- `memoryInGb` is per GPU. GPU names: RunPod's `id` ("NVIDIA A100 80GB PCIe") is passed as the name.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from pathlib import Path

from .availability import StockFromPriceListing
from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import post_json
from .normalize import to_decimal

logger = logging.getLogger(__name__)

URL = "https://api.runpod.io/graphql"
RECORDED = Path(__file__).resolve().parent / "recorded" / "runpod"

QUERY = """
query GpuTypes {
  gpuTypes {
    maxGpuCount id displayName manufacturer memoryInGb cudaCores secureCloud communityCloud
    securePrice communityPrice oneMonthPrice threeMonthPrice oneWeekPrice communitySpotPrice secureSpotPrice
    lowestPrice(input: {gpuCount: 1}) { minimumBidPrice uninterruptablePrice stockStatus }
  }
}
"""

STOCK = {"High": "available", "Medium": "limited", "Low": "limited", None: "unavailable"}
CLOUDS = (("secure", "secureCloud", "securePrice", "secureSpotPrice"),
          ("community", "communityCloud", "communityPrice", "communitySpotPrice"))
REQUIRED = ("id", "memoryInGb", "secureCloud", "communityCloud", "securePrice", "communityPrice")


class RunPodClient(StockFromPriceListing, ProviderClient):
    info = SourceInfo(slug="runpod", provider="runpod", name="RunPod GraphQL API (gpuTypes)", kind="api",
                      url="https://docs.runpod.io/sdks/graphql/manage-pods")

    recordings = {URL: RECORDED / "graphql-gpu-types.json"}

    def fetch(self) -> ScrapeResult:
        payload = post_json(self.http, URL, json={"query": QUERY})
        if not isinstance(payload, dict):
            raise SchemaScrapeError(f"{URL}: not a JSON object")
        if payload.get("errors"):
            messages = "; ".join(str(error.get("message", error)) for error in payload["errors"][:3])
            raise SchemaScrapeError(f"{URL}: GraphQL errors: {messages}")
        gpu_types = (payload.get("data") or {}).get("gpuTypes")
        if not isinstance(gpu_types, list) or not gpu_types:
            raise SchemaScrapeError(f"{URL}: data.gpuTypes missing or empty")
        result = ScrapeResult(offers=[])
        for gpu in gpu_types:
            missing = [name for name in REQUIRED if name not in gpu]
            if missing:
                raise SchemaScrapeError(f"{URL}: gpuType {gpu.get('id')!r} lacks {', '.join(missing)}")
            try:
                result.offers.extend(offers_for(gpu))
            except ValueError as exc:
                result.rejected.append(f"{gpu.get('id')}: {exc}")
        if not result.offers:
            raise SchemaScrapeError(f"{URL}: none of {len(gpu_types)} GPU types has a price")
        return result


def availability(gpu: dict) -> str:
    lowest = gpu.get("lowestPrice")
    if not isinstance(lowest, dict) or "stockStatus" not in lowest:
        return "unknown"
    status = lowest["stockStatus"]
    if status not in STOCK:
        logger.warning("RunPod %s: unfamiliar stockStatus %r", gpu.get("id"), status)
        return "unknown"
    return STOCK[status]


def offers_for(gpu: dict) -> list[ScrapedOffer]:
    memory = to_decimal(gpu["memoryInGb"])
    if memory is not None and memory <= 0:
        raise ValueError(f"memoryInGb {gpu['memoryInGb']!r}")
    stock = availability(gpu)
    offers = []
    for cloud, flag, price_field, spot_field in CLOUDS:
        if not gpu[flag]:
            continue
        price = to_decimal(gpu[price_field])
        spot = to_decimal(gpu.get(spot_field))
        if price is None and spot is None:
            continue
        if (price is not None and price <= 0) or (spot is not None and spot <= 0):
            raise ValueError(f"{cloud} price {gpu[price_field]!r} / spot {gpu.get(spot_field)!r}")
        offers.append(
            ScrapedOffer(
                instance_type=f"{gpu['id']} ({cloud} cloud)",
                region="",
                gpu_name=str(gpu["id"]),
                gpu_count=Decimal(1),
                gpu_memory_gb=memory,
                currency="USD",
                price_hour=price,
                spot_price_hour=spot,
                availability=stock,
            )
        )
    return offers
