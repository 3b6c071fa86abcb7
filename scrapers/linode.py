"""Akamai / Linode GPU plans and LKE (Linode Kubernetes Engine) facts from the public Linode API v4.

Contract: https://techdocs.akamai.com/linode-api/reference/api (list envelope `{data, page, pages, results}`,
1-based `page`). `GET /linode/types`, `/lke/types` and `/regions` are internet-facing (no token; responses carry
`X-Accepted-Oauth-Scopes: *`). `GET /lke/versions` needs a token with `lke:read_only`
(https://techdocs.akamai.com/linode-api/reference/get-lke-versions): without one it answers 401, and the versions are
then left unknown while the public facts are still reported.

- GPU plans are the types with `gpus > 0` (`class` "gpu"). The API has no GPU-model field: the model is read from
  the label ("Dedicated 32GB + RTX6000 GPU x1"), the count from `gpus`; memory is MB. Prices are USD, global in
  `price.hourly` with per-region overrides in `region_prices`.
- The types list does not say which regions sell which GPU plan (RTX 6000 and RTX 4000 Ada plans live in different
  regions, and "GPU Linodes" in a region's `capabilities` does not say which), so each GPU plan is one offer with
  region "" (not stated) at the global price; the GPU regions are reported as a fact instead of being crossed with
  every plan. Stock is not in these lists: the price run leaves availability to the availability poll.
- Availability (`fetch_availability`, polled every 15 minutes): `GET /regions/availability` (public, paged like every
  list) answers `{region, plan, available}` rows; Linode's API reference says it "currently returns availability of
  select premium and GPU plans for select regions" (operation `getRegionsAvailability` of Linode's OpenAPI file,
  https://github.com/linode/linode-api-docs/pull/833/files). Our GPU offers have no region (see
  above), so a plan is available when at least one listed region has it, unavailable when every listed row says
  false, and not stated when the plan is not listed.
- Kubernetes: regions with "Kubernetes" in `capabilities` run LKE. `/lke/types` prices the control plane: `lke-sa`
  (standard) and `lke-ha` (high availability, regional overrides in `region_prices`) -> `control_plane_fee`.
"""

from __future__ import annotations

import logging
import re
from decimal import Decimal
from pathlib import Path

import httpx

from .availability import AvailabilityResult, ScrapedAvailability
from .base import (
    AuthScrapeError,
    ProviderClient,
    SchemaScrapeError,
    ScrapedCapability,
    ScrapedOffer,
    ScrapeResult,
    SourceInfo,
)
from .http import get_json
from .normalize import positive, to_decimal

logger = logging.getLogger(__name__)

API = "https://api.linode.com/v4"
TYPES_URL = f"{API}/linode/types"
LKE_TYPES_URL = f"{API}/lke/types"
LKE_VERSIONS_URL = f"{API}/lke/versions"
REGIONS_URL = f"{API}/regions"
AVAILABILITY_URL = f"{API}/regions/availability"
RECORDED = Path(__file__).resolve().parent / "recorded" / "linode"
MAX_PAGES = 50

GPU_LABEL = re.compile(r"\+\s*(?P<gpu>.+?)\s+GPU\s+x\s*(?P<count>\d+)\s*$", re.IGNORECASE)


def page_url(url: str, page: int) -> str:
    return f"{url}?page={page}"


class LinodeClient(ProviderClient):
    info = SourceInfo(slug="linode", provider="linode", name="Linode API v4 (types, regions, LKE)", kind="api",
                      url="https://techdocs.akamai.com/linode-api/reference/api")

    provides_kubernetes_facts = True  # read by scrapers.registry.snapshot_sources

    recordings = {
        page_url(TYPES_URL, 1): RECORDED / "linode-types.json",
        page_url(LKE_TYPES_URL, 1): RECORDED / "lke-types.json",
        page_url(LKE_VERSIONS_URL, 1): RECORDED / "lke-versions.json",
        page_url(REGIONS_URL, 1): RECORDED / "regions.json",
    }

    @classmethod
    def recorded_availability(cls) -> dict[str, Path]:
        return {page_url(AVAILABILITY_URL, 1): RECORDED / "regions-availability.json"}

    def fetch_availability(self, known) -> AvailabilityResult:
        rows = paginate(self.http, AVAILABILITY_URL)
        by_plan: dict[str, list[bool]] = {}
        result = AvailabilityResult(states=[])
        for row in rows:
            if not {"region", "plan", "available"} <= row.keys():
                raise SchemaScrapeError(f"{AVAILABILITY_URL}: a row lacks region, plan or available")
            if not isinstance(row["available"], bool):
                result.rejected.append(f"{row['plan']} in {row['region']}: available {row['available']!r}")
                continue
            by_plan.setdefault(str(row["plan"]), []).append(row["available"])
        for plan, flags in sorted(by_plan.items()):
            result.states.append(ScrapedAvailability(plan, "", "available" if any(flags) else "unavailable"))
        return result

    def fetch(self) -> ScrapeResult:
        types = paginate(self.http, TYPES_URL)
        regions = paginate(self.http, REGIONS_URL)
        for region in regions:
            if "id" not in region or not isinstance(region.get("capabilities"), list):
                raise SchemaScrapeError(f"{REGIONS_URL}: a region lacks 'id' or 'capabilities'")
        result = ScrapeResult(offers=[])
        for plan in types:
            if "gpus" not in plan:
                raise SchemaScrapeError(f"Linode type {plan.get('id')!r} lacks 'gpus'")
            if not plan["gpus"]:
                continue
            try:
                result.offers.append(gpu_offer(plan))
            except ValueError as exc:
                result.rejected.append(f"{plan.get('id')}: {exc}")
                result.rejected_instance_types.add(str(plan.get("id")))
        if not result.offers:
            raise SchemaScrapeError(f"{TYPES_URL}: no GPU plans among {len(types)} types")
        result.capabilities = [control_plane_fee(paginate(self.http, LKE_TYPES_URL))]
        result.kubernetes_facts = {
            "regions_with_managed_kubernetes": sorted(r["id"] for r in regions if "Kubernetes" in r["capabilities"]),
            "regions_with_gpu_linodes": sorted(r["id"] for r in regions if "GPU Linodes" in r["capabilities"]),
            "regions_with_lke_enterprise": sorted(
                r["id"] for r in regions if "Kubernetes Enterprise" in r["capabilities"]
            ),
        }
        versions = self.lke_versions()
        if versions is not None:
            result.kubernetes_facts["kubernetes_versions"] = versions
        return result

    def lke_versions(self) -> list[str] | None:
        """LKE versions, or None when the API wants a token we do not have (the rest of the run stays valid)."""
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            items = paginate(self.http, LKE_VERSIONS_URL, headers=headers)
        except AuthScrapeError as exc:
            logger.info("LKE versions need a token with lke:read_only; leaving them unknown (%s)", exc)
            return None
        if any("id" not in item for item in items):
            raise SchemaScrapeError(f"{LKE_VERSIONS_URL}: a version lacks 'id'")
        return [str(item["id"]) for item in items]


def paginate(http: httpx.Client, url: str, headers: dict | None = None) -> list[dict]:
    """All `data` items of a paged Linode list; a page that fails fails the whole list (never partial)."""
    items: list[dict] = []
    page, pages = 1, 1
    while page <= pages:
        target = page_url(url, page)
        payload = get_json(http, target, headers=headers or {})
        if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
            raise SchemaScrapeError(f"{target}: 'data' missing or not a list")
        if not isinstance(payload.get("pages"), int) or payload["pages"] < 1:
            raise SchemaScrapeError(f"{target}: 'pages' missing or not a positive number")
        pages = min(payload["pages"], MAX_PAGES)
        items.extend(item for item in payload["data"] if isinstance(item, dict))
        page += 1
    if not items:
        raise SchemaScrapeError(f"{url}: 'data' is empty")
    return items


def gpu_offer(plan: dict) -> ScrapedOffer:
    for name in ("id", "label", "price", "vcpus", "memory"):
        if name not in plan:
            raise SchemaScrapeError(f"Linode type {plan.get('id')!r} lacks '{name}'")
    count = positive(plan["gpus"], "GPU count")
    match = GPU_LABEL.search(str(plan["label"]))
    if match is None:
        raise ValueError(f"GPU model not readable from label {plan['label']!r}")
    price = positive((plan["price"] or {}).get("hourly"), "hourly price")
    memory = to_decimal(plan["memory"])
    return ScrapedOffer(
        instance_type=str(plan["id"]),
        region="",
        gpu_name=match["gpu"].strip(),
        gpu_count=count,
        vcpus=to_decimal(plan["vcpus"]),
        ram_gb=None if memory is None else (memory / 1024).quantize(Decimal("0.01")),
        currency="USD",
        price_hour=price,
    )


def control_plane_fee(lke_types: list[dict]) -> ScrapedCapability:
    """The LKE control-plane fee: the standard control plane's price, with the HA option's price as the label."""
    by_id = {item.get("id"): item for item in lke_types}
    for needed in ("lke-sa", "lke-ha"):
        if needed not in by_id or "hourly" not in (by_id[needed].get("price") or {}):
            raise SchemaScrapeError(f"{LKE_TYPES_URL}: '{needed}' or its price.hourly is missing")
    standard = to_decimal(by_id["lke-sa"]["price"]["hourly"])
    ha = by_id["lke-ha"]
    ha_hourly = to_decimal(ha["price"]["hourly"])
    if standard is None or standard < 0 or ha_hourly is None or ha_hourly < 0:
        raise SchemaScrapeError(f"{LKE_TYPES_URL}: unreadable control-plane prices")
    regional = ", ".join(f"{row.get('id')} ${row.get('hourly')}/h" for row in ha.get("region_prices") or [])
    detail = (
        f"{ha.get('label', 'lke-ha')}: ${ha_hourly}/h (${ha['price'].get('monthly')}/month)"
        + (f"; regional prices: {regional}" if regional else "")
        + ". Worker nodes are billed as Linodes."
    )
    if standard == 0:
        return ScrapedCapability(
            key="control_plane_fee", value="free", source_url=page_url(LKE_TYPES_URL, 1),
            label=f"Free (HA ${ha_hourly}/h)", detail=detail,
        )
    return ScrapedCapability(
        key="control_plane_fee", value="paid", source_url=page_url(LKE_TYPES_URL, 1),
        label=f"${standard}/h (HA ${ha_hourly}/h)", detail=detail, amount=standard, currency="USD",
    )
