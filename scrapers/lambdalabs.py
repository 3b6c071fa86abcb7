"""Lambda Cloud on-demand instance types, prices and the regions with capacity right now.

Contract: `GET https://cloud.lambda.ai/api/v1/instance-types` with `Authorization: Bearer <LAMBDA_API_KEY>`
(Lambda Cloud API, https://docs.lambda.ai/api/cloud#listInstanceTypes; OpenAPI at
https://cloud.lambda.ai/api/v1/openapi.json). `data` is a map keyed by instance-type name:
`{instance_type: {name, description, gpu_description ("NVIDIA A100 (80 GB)"), price_cents_per_hour, specs: {vcpus,
memory_gib, storage_gib, gpus}}, regions_with_capacity_available: [{name, description}]}`. No pagination, no spot.

Prices are integer US cents per instance-hour (converted to dollars here). A type is offered in each region listed
under `regions_with_capacity_available` (availability "available"); a type listed with none is sold out everywhere
and the API does not say where it would run, so it is kept once with region "" and availability "unavailable"
(its price is still real). GPU name: `gpu_description` with the memory it states in parentheses.
The availability poll (`fetch_availability`, every 15 minutes) reads the same single request: a stored region of a
type that is no longer listed under its capacity is sold out there.
"""

from __future__ import annotations

import logging
import re
from decimal import Decimal
from pathlib import Path

from .availability import StockFromPriceListing
from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get_json
from .normalize import positive, to_decimal

logger = logging.getLogger(__name__)

URL = "https://cloud.lambda.ai/api/v1/instance-types"
RECORDED = Path(__file__).resolve().parent / "recorded" / "lambdalabs"
MEMORY = re.compile(r"\((\d+(?:\.\d+)?)\s*GB\)", re.IGNORECASE)


class LambdaClient(StockFromPriceListing, ProviderClient):
    info = SourceInfo(slug="lambdalabs", provider="lambda", name="Lambda Cloud API (instance types)", kind="api",
                      url="https://docs.lambda.ai/api/cloud#listInstanceTypes", api_key_env="LAMBDA_API_KEY")

    recordings = {URL: RECORDED / "instance-types.json"}

    @classmethod
    def url(cls) -> str:
        """Where the instance types are read (a test's loopback server moves it)."""
        return URL

    def fetch(self) -> ScrapeResult:
        payload = get_json(self.http, self.url(), headers={"Authorization": f"Bearer {self.api_key}"})
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, dict) or not data:
            raise SchemaScrapeError(f"{URL}: 'data' missing, not a map, or empty")
        result = ScrapeResult(offers=[])
        for name, entry in data.items():
            if not isinstance(entry, dict) or "instance_type" not in entry or \
                    "regions_with_capacity_available" not in entry:
                raise SchemaScrapeError(f"{URL}: {name} lacks instance_type or regions_with_capacity_available")
            try:
                result.offers.extend(offers_for(entry))
            except ValueError as exc:
                result.rejected.append(f"{name}: {exc}")
                kind = entry["instance_type"]
                result.rejected_instance_types.add(str(kind.get("name", name)) if isinstance(kind, dict) else name)
        if not result.offers:
            raise SchemaScrapeError(f"{URL}: no GPU instance types among {len(data)}")
        return result


def offers_for(entry: dict) -> list[ScrapedOffer]:
    kind = entry["instance_type"]
    for needed in ("name", "price_cents_per_hour", "specs"):
        if needed not in kind:
            raise SchemaScrapeError(f"{URL}: instance type {kind.get('name')!r} lacks '{needed}'")
    specs = kind["specs"] or {}
    if "gpus" not in specs:
        raise SchemaScrapeError(f"{URL}: instance type {kind['name']!r} lacks specs.gpus")
    count = positive(specs["gpus"], "GPU count")
    cents = positive(kind["price_cents_per_hour"], "price_cents_per_hour")
    gpu_name = str(kind.get("gpu_description") or "").strip()
    if not gpu_name:
        raise ValueError("no gpu_description")
    memory = MEMORY.search(gpu_name)
    regions = [str(region.get("name")) for region in entry["regions_with_capacity_available"] or []]
    common = {
        "instance_type": str(kind["name"]),
        "gpu_name": gpu_name,
        "gpu_count": count,
        "gpu_memory_gb": Decimal(memory.group(1)) if memory else None,
        "vcpus": to_decimal(specs.get("vcpus")),
        "ram_gb": to_decimal(specs.get("memory_gib")),
        "currency": "USD",
        "price_hour": cents / 100,
    }
    if not regions:
        return [ScrapedOffer(region="", availability="unavailable", available_count=0, **common)]
    return [ScrapedOffer(region=region, availability="available", **common) for region in regions]
