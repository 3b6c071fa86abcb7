"""Vast.ai marketplace: live GPU offers from the bundles search, aggregated per GPU configuration and location.

Contract: `GET https://console.vast.ai/api/v0/bundles/?q=<URL-encoded JSON query>` (the search behind
`vastai search offers`, https://docs.vast.ai/cli-commands and https://docs.vast.ai/sdk/python/reference/search-offers;
dstackai/gpuhunt calls it without a key). The answer is `{"offers": [...]}`, one object per machine slot:
`gpu_name` ("RTX 5090"), `num_gpus`, `gpu_ram` (MB per GPU), `cpu_cores_effective`, `cpu_ram` (MB for the whole
machine), `dph_base` (USD/hour for the GPUs and CPU share, storage and bandwidth excluded), `min_bid` (lowest
interruptible bid), `geolocation` ("Ontario, CA") and `rentable`.

Aggregation: an offer id is one host's slot that appears and disappears within minutes, so storing offers by id would
churn the table, trip the ingestion service's shrink guard and make price history meaningless. We keep one offer per
(GPU model, GPU count, location): instance type "<n>x <gpu_name>", region = the geolocation plus its continent
("Ontario, CA, NA", the form SkyPilot's Vast.ai catalog uses, which the normaliser reads country and continent from).
Its price is the cheapest `dph_base` among rentable slots (what you could rent now), spot the cheapest `min_bid`,
`available_count` the number of rentable slots and availability available / unavailable from it; when no slot is
rentable the cheapest listed price is kept and marked unavailable. The availability poll (`fetch_availability`, every
15 minutes) sends the same single search: a stored GPU x count group with no slot left in a region is sold out there
(0 slots). vCPUs and RAM are those of the cheapest slot.
We use `dph_base` rather than `dph_total` because the total adds storage priced for the disk size a query assumes.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote

from .availability import StockFromPriceListing
from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get_json
from .normalize import CONTINENT_OF_COUNTRY, mib_to_gb, positive, to_decimal

logger = logging.getLogger(__name__)

# On-demand listings, no default filters (rented / unverified slots included so availability can say "unavailable").
QUERY = {"type": "on-demand", "limit": 10000}
URL = "https://console.vast.ai/api/v0/bundles/?q=" + quote(json.dumps(QUERY, separators=(",", ":")), safe="")
RECORDED = Path(__file__).resolve().parent / "recorded" / "vastai"
REQUIRED = ("id", "gpu_name", "num_gpus", "dph_base", "geolocation", "rentable")


@dataclass
class _Group:
    rentable: list[dict] = field(default_factory=list)
    listed: list[dict] = field(default_factory=list)


class VastAiClient(StockFromPriceListing, ProviderClient):
    info = SourceInfo(slug="vastai", provider="vastai", name="Vast.ai bundles search (live offers)", kind="api",
                      url="https://docs.vast.ai/cli-commands")

    recordings = {URL: RECORDED / "bundles.json"}

    def fetch(self) -> ScrapeResult:
        payload = get_json(self.http, URL)
        offers = payload.get("offers") if isinstance(payload, dict) else None
        if not isinstance(offers, list) or not offers:
            raise SchemaScrapeError("Vast.ai bundles: 'offers' missing or empty")
        result = ScrapeResult(offers=[])
        groups: dict[tuple[str, Decimal, str], _Group] = {}
        for offer in offers:
            missing = [name for name in REQUIRED if name not in offer]
            if missing:
                raise SchemaScrapeError(f"Vast.ai offer {offer.get('id')!r} lacks {', '.join(missing)}")
            try:
                key = group_key(offer)
            except ValueError as exc:
                result.rejected.append(f"offer {offer['id']}: {exc}")
                continue
            group = groups.setdefault(key, _Group())
            group.listed.append(offer)
            if offer["rentable"] is True:
                group.rentable.append(offer)
        result.offers = [aggregate(key, group) for key, group in sorted(groups.items())]
        if not result.offers:
            raise SchemaScrapeError(f"Vast.ai bundles: all {len(offers)} offers were rejected")
        return result


def region_of(geolocation: str) -> str:
    """'Ontario, CA' -> 'Ontario, CA, NA'; a location whose country we cannot place is kept as given."""
    parts = [part.strip() for part in geolocation.split(",")]
    country = parts[-1] if len(parts) >= 2 else ""
    continent = CONTINENT_OF_COUNTRY.get(country)
    return f"{geolocation.strip()}, {continent}" if continent and len(parts) == 2 else geolocation.strip()


def group_key(offer: dict) -> tuple[str, Decimal, str]:
    count = positive(offer["num_gpus"], "num_gpus")
    price = to_decimal(offer["dph_base"])
    if price is None or price <= 0:
        raise ValueError(f"dph_base {offer['dph_base']!r}")
    name = str(offer["gpu_name"] or "").strip()
    if not name:
        raise ValueError("no gpu_name")
    return name, count, region_of(str(offer["geolocation"] or ""))


def aggregate(key: tuple[str, Decimal, str], group: _Group) -> ScrapedOffer:
    name, count, region = key
    pool = group.rentable or group.listed
    cheapest = min(pool, key=lambda offer: to_decimal(offer["dph_base"]))
    bids = [bid for bid in (to_decimal(offer.get("min_bid")) for offer in pool) if bid is not None and bid > 0]
    return ScrapedOffer(
        instance_type=f"{count}x {name}",
        region=region,
        gpu_name=name,
        gpu_count=count,
        gpu_memory_gb=mib_to_gb(cheapest.get("gpu_ram")),
        vcpus=to_decimal(cheapest.get("cpu_cores_effective")),
        ram_gb=ram_gb(cheapest),
        currency="USD",
        price_hour=to_decimal(cheapest["dph_base"]),
        spot_price_hour=min(bids) if bids else None,
        availability="available" if group.rentable else "unavailable",
        available_count=len(group.rentable),
    )


def ram_gb(offer: dict) -> Decimal | None:
    """The slot's share of machine RAM: cpu_ram x cpu_cores_effective / cpu_cores (as gpuhunt computes it)."""
    ram = to_decimal(offer.get("cpu_ram"))
    effective, cores = to_decimal(offer.get("cpu_cores_effective")), to_decimal(offer.get("cpu_cores"))
    if ram is None:
        return None
    if effective and cores:
        ram = ram * effective / cores
    return (ram / 1024).quantize(Decimal("0.01"))
