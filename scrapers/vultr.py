"""Vultr Cloud GPU and bare-metal GPU plans, plus the Kubernetes (VKE) facts Vultr's public API states.

Contract: Vultr API v2 (https://www.vultr.com/api/), whose OpenAPI spec marks `GET /plans`, `/plans-metal`,
`/regions` and `/kubernetes/versions` as `security: []` (no key). Lists paginate with `per_page` (max 500) and a
cursor in `meta.links.next` ("" on the last page). Units: `ram` in MB, prices in USD (`hourly_cost`).

- Cloud GPU plans (`type` "vcg") name the card in `gpu_type` ("NVIDIA_A100") and give the plan's *total* GPU memory
  in `gpu_vram_gb`; Vultr sells fractions of a card (4 GB of an 80 GB A100 = 1/20 GPU), so the GPU count is
  `gpu_vram_gb / card memory`, which can be below 1. The card memory comes from CARD_MEMORY_GB (sourced) and
  otherwise from the GPU catalog when the name is unambiguous; a card we cannot size is rejected, not guessed.
- Bare-metal plans state the GPUs only in the plan id (`vbm-112c-2048gb-8-h100-gpu` = 8x H100); their
  `hourly_cost_preemptible` is the spot price. Plans without a `-gpu` suffix are CPU machines and are skipped.
- `locations` lists where a plan can be deployed; the plan listing does not report stock, so the price run leaves
  availability to the availability poll.
- Availability (`fetch_availability`, polled every 15 minutes): `GET /regions/{id}/availability?type=vcg` (Cloud
  GPU) and `?type=vbm` (bare metal; the CLI documents `vc2, vdc, vhf, vbm`,
  https://docs.vultr.com/reference/vultr-cli/regions/availability) answer `{"available_plans": [plan id, ...]}`, the
  plans that can be deployed in that region now (no key: `security: []` in Vultr's OpenAPI spec). Only the regions
  and plan types of offers we store are asked, one request each; a stored plan missing from its region's list is
  sold out there. One region's empty list is a real answer (everything taken); all of them empty is refused.
- Kubernetes facts: VKE versions from `/kubernetes/versions`; regions offering VKE are those whose `options`
  include "kubernetes" (`/regions`). The API states no control-plane price.
"""

from __future__ import annotations

import logging
import re
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote

import httpx

from .availability import AvailabilityResult, ScrapedAvailability
from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get_json
from .normalize import default_gpu_resolver, gpu_catalog, to_decimal

logger = logging.getLogger(__name__)

API = "https://api.vultr.com/v2"
PLANS_URL = f"{API}/plans?type=all&per_page=500"
METAL_URL = f"{API}/plans-metal?per_page=500"
REGIONS_URL = f"{API}/regions?per_page=500"
VERSIONS_URL = f"{API}/kubernetes/versions"
PLAN_TYPES = {"vcg-": "vcg", "vbm-": "vbm"}  # plan id prefix -> the availability endpoint's `type`


def availability_url(region: str, plan_type: str) -> str:
    return f"{API}/regions/{quote(region, safe='')}/availability?type={plan_type}"
RECORDED = Path(__file__).resolve().parent / "recorded" / "vultr"

# Memory of one whole card behind a Cloud GPU `gpu_type`, where the catalog name alone is ambiguous.
# NVIDIA_A100: Vultr's A100 is the 80 GB card: its smallest plan is "1/20 of an A100" (4 GB) and a whole A100 is
# $1,750/month (The Next Platform, 2022-06-03, https://www.nextplatform.com/2022/06/03/fractional-gpus-empower-new-
# wave-of-accelerated-software-development/), which is the recorded `vcg-a100-12c-120g-80vram` plan.
CARD_MEMORY_GB = {"NVIDIA_A100": Decimal(80)}

METAL_GPU_ID = re.compile(r"^vbm-.*?-(?:(?P<count>\d+)-)?(?P<gpu>[a-z0-9]+)-gpu$")


class VultrClient(ProviderClient):
    info = SourceInfo(slug="vultr", provider="vultr", name="Vultr API v2 (plans, regions, VKE versions)", kind="api",
                      url="https://www.vultr.com/api/")

    provides_kubernetes_facts = True  # read by scrapers.registry.snapshot_sources

    recordings = {
        PLANS_URL: RECORDED / "plans.json",
        METAL_URL: RECORDED / "plans-metal.json",
        REGIONS_URL: RECORDED / "regions.json",
        VERSIONS_URL: RECORDED / "kubernetes-versions.json",
    }

    @classmethod
    def recorded_availability(cls) -> dict[str, Path]:
        return {availability_url("ams", "vcg"): RECORDED / "regions-ams-availability.json"}

    def fetch_availability(self, known) -> AvailabilityResult:
        wanted: dict[tuple[str, str], list[str]] = {}
        for plan, region in sorted(known):
            plan_type = next((kind for prefix, kind in PLAN_TYPES.items() if plan.startswith(prefix)), None)
            if plan_type and region:
                wanted.setdefault((region, plan_type), []).append(plan)
        if not wanted:
            raise SchemaScrapeError("no stored Vultr GPU offer has a region to ask about")
        result = AvailabilityResult(states=[])
        answered = 0
        for (region, plan_type), plans in wanted.items():
            url = availability_url(region, plan_type)
            payload = get_json(self.http, url)
            available = payload.get("available_plans") if isinstance(payload, dict) else None
            if not isinstance(available, list):
                raise SchemaScrapeError(f"{url}: 'available_plans' missing or not a list")
            answered += bool(available)
            deployable = {str(plan) for plan in available}
            result.states.extend(
                ScrapedAvailability(plan, region, "available" if plan in deployable else "unavailable")
                for plan in plans
            )
        if not answered:
            raise SchemaScrapeError(f"every one of {len(wanted)} availability lists is empty; refusing the answer")
        return result

    def fetch(self) -> ScrapeResult:
        plans = paginate(self.http, PLANS_URL, "plans")
        metal = paginate(self.http, METAL_URL, "plans_metal")
        result = ScrapeResult(offers=[])
        for plan in plans:
            if plan.get("type") != "vcg":
                continue  # vc2 / vhf / vhp / voc are CPU plans
            _collect(result, plan, cloud_gpu_offers)
        for plan in metal:
            if not str(plan.get("id", "")).endswith("-gpu"):
                continue
            _collect(result, plan, metal_offers)
        if not result.offers:
            raise SchemaScrapeError(f"no GPU plans in {len(plans)} plans and {len(metal)} bare-metal plans")
        result.kubernetes_facts = self.kubernetes_facts()
        return result

    def kubernetes_facts(self) -> dict[str, object]:
        payload = get_json(self.http, VERSIONS_URL)
        versions = payload.get("versions") if isinstance(payload, dict) else None
        if not isinstance(versions, list) or not versions:
            raise SchemaScrapeError(f"{VERSIONS_URL}: 'versions' missing or empty")
        regions = paginate(self.http, REGIONS_URL, "regions")
        for region in regions:
            if "id" not in region or not isinstance(region.get("options"), list):
                raise SchemaScrapeError(f"{REGIONS_URL}: a region lacks 'id' or 'options'")
        return {
            "kubernetes_versions": [str(version) for version in versions],
            "regions_with_managed_kubernetes": sorted(r["id"] for r in regions if "kubernetes" in r["options"]),
        }


def paginate(http: httpx.Client, url: str, key: str) -> list[dict]:
    """Every item of a cursor-paginated Vultr list; any failing page fails the whole list (never partial)."""
    items: list[dict] = []
    page_url: str | None = url
    seen: set[str] = set()
    while page_url:
        payload = get_json(http, page_url)
        if not isinstance(payload, dict) or not isinstance(payload.get(key), list):
            raise SchemaScrapeError(f"{page_url}: '{key}' missing or not a list")
        items.extend(item for item in payload[key] if isinstance(item, dict))
        # The gpuhunt recordings omit `meta`; a real answer carries it, with next "" on the last page.
        cursor = (((payload.get("meta") or {}).get("links") or {}).get("next")) or ""
        if cursor in seen:
            raise SchemaScrapeError(f"{url}: pagination cursor {cursor!r} repeats")
        seen.add(cursor)
        page_url = f"{url}&cursor={quote(cursor, safe='')}" if cursor else None
    if not items:
        raise SchemaScrapeError(f"{url}: '{key}' is empty")
    return items


def _collect(result: ScrapeResult, plan: dict, parse) -> None:
    try:
        result.offers.extend(parse(plan))
    except ValueError as exc:
        result.rejected.append(f"{plan.get('id')}: {exc}")


def _field(plan: dict, name: str):
    if name not in plan:
        raise SchemaScrapeError(f"Vultr plan {plan.get('id')!r} lacks '{name}'")
    return plan[name]


def _price(value, what: str) -> Decimal:
    price = to_decimal(value)
    if price is None or price <= 0:
        raise ValueError(f"{what} {value!r}")
    return price


def card_memory_gb(gpu_type: str) -> Decimal | None:
    """Memory of one whole card: the sourced table first, else the catalog when the name has one memory size."""
    if gpu_type in CARD_MEMORY_GB:
        return CARD_MEMORY_GB[gpu_type]
    slug = default_gpu_resolver().resolve(gpu_type)
    if slug is None:
        return None
    specs = {spec.slug: spec for spec in gpu_catalog()}
    family = specs[slug].family
    sizes = {spec.memory_gb for spec in specs.values() if spec.family == family}
    return sizes.pop() if len(sizes) == 1 else None


def cloud_gpu_offers(plan: dict) -> list[ScrapedOffer]:
    gpu_type = str(_field(plan, "gpu_type"))
    vram = to_decimal(_field(plan, "gpu_vram_gb"))
    price = _price(_field(plan, "hourly_cost"), "hourly_cost")
    locations = _field(plan, "locations")
    if vram is None or vram <= 0:
        raise ValueError(f"gpu_vram_gb {plan['gpu_vram_gb']!r}")
    card = card_memory_gb(gpu_type)
    if card is None:
        raise ValueError(f"memory of one {gpu_type} card is not known, so the GPU count cannot be derived")
    ram = to_decimal(_field(plan, "ram"))
    share = (vram / card).quantize(Decimal("0.001"))
    # A slice (4 GB of an 80 GB A100) is sold as a share of one GPU with the slice's memory.
    fraction = share if share < 1 else None
    return [
        ScrapedOffer(
            instance_type=str(plan["id"]),
            region=str(location),
            gpu_name=gpu_type,
            gpu_count=share,
            gpu_memory_gb=vram if fraction is not None else card,
            gpu_fraction=fraction,
            vcpus=to_decimal(_field(plan, "vcpu_count")),
            ram_gb=None if ram is None else (ram / 1024).quantize(Decimal("0.01")),
            currency="USD",
            price_hour=price,
        )
        for location in locations
    ]


def metal_offers(plan: dict) -> list[ScrapedOffer]:
    match = METAL_GPU_ID.match(str(plan["id"]))
    if match is None:
        raise ValueError("GPU model and count not readable from the plan id")
    # Ids without a count ("vbm-64c-2048gb-l40-gpu") state no count: we do not assume one.
    if match["count"] is None or int(match["count"]) <= 0:
        raise ValueError("GPU count not stated in the plan id")
    price = _price(_field(plan, "hourly_cost"), "hourly_cost")
    spot = to_decimal(plan.get("hourly_cost_preemptible"))
    ram = to_decimal(_field(plan, "ram"))
    return [
        ScrapedOffer(
            instance_type=str(plan["id"]),
            region=str(location),
            gpu_name=match["gpu"].upper(),
            gpu_count=Decimal(match["count"]),
            vcpus=to_decimal(plan.get("cpu_threads")),
            ram_gb=None if ram is None else (ram / 1024).quantize(Decimal("0.01")),
            currency="USD",
            price_hour=price,
            spot_price_hour=spot if spot and spot > 0 else None,
        )
        for location in _field(plan, "locations")
    ]
