"""DigitalOcean GPU Droplets (prices, regions, GPUs) and DOKS (DigitalOcean Kubernetes) facts from the API v2.

Contract: `GET https://api.digitalocean.com/v2/sizes` ("List All Droplet Sizes",
https://docs.digitalocean.com/reference/api/reference/sizes/) and `GET /v2/kubernetes/options` ("List Available
Regions, Node Sizes, and Versions of Kubernetes", https://docs.digitalocean.com/reference/api/digitalocean/#tag/Kubernetes/operation/kubernetes_list_options).
Every DO endpoint needs `Authorization: Bearer <DIGITALOCEAN_TOKEN>` (scopes `sizes:read regions:read`, and
`kubernetes:read` for the options). Lists paginate with `page` / `per_page` (at most 200, DO OpenAPI
`shared/parameters.yml`) and a full URL in `links.pages.next`, absent on the last page.

- A size is a GPU Droplet when it carries `gpu_info {count, vram {amount, unit}, model}`; CPU sizes are skipped.
  `vram` is the Droplet's *total* GPU memory (`gpu-h100x8-640gb`: 8 x H100 with `vram.amount` 640 gib), so the
  memory per GPU is amount / count. `model` ("nvidia_h100", "amd_mi300x") is passed as the GPU name.
- `price_hourly` is USD per Droplet-hour (the API reference: "measured in US dollars"); `memory` is MB. No spot.
- `regions` lists "the region slugs where this size is available for Droplet creates" and `available` says
  whether new Droplets can be created with the size at all: one offer per listed region, available when
  `available` is true, unavailable otherwise; a size listing no region is kept once with region "" as unavailable
  (its price is still real).
- Availability (`fetch_availability`, polled every 15 minutes): the same `/v2/sizes` pages and nothing else
  (scrapers.availability.from_listing): a stored region of a size that `regions` no longer lists is sold out there.
- Kubernetes facts: DOKS versions (`slug`, what a cluster is created with), the regions offering DOKS, and which
  node sizes DOKS accepts that are GPU sizes (joined on the slug with /v2/sizes). A token without
  `kubernetes:read` gets 401/403 there: the facts are then left unknown and the offers still count. No DO API states
  the control-plane price.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from pathlib import Path

from .availability import AvailabilityResult, from_listing
from .base import AuthScrapeError, ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get_json
from .normalize import positive, to_decimal

logger = logging.getLogger(__name__)

API = "https://api.digitalocean.com/v2"
SIZES_URL = f"{API}/sizes?per_page=200"
OPTIONS_URL = f"{API}/kubernetes/options"
RECORDED = Path(__file__).resolve().parent / "recorded" / "digitalocean"
MAX_PAGES = 50
SIZE_FIELDS = ("slug", "memory", "vcpus", "price_hourly", "regions", "available")
# GPU memory units DO states in `gpu_info.vram.unit`, as GB per unit (GPU memory is marketed in GiB: 80 GiB = "80GB").
VRAM_UNITS = {"gib": Decimal(1), "mib": Decimal(1) / 1024}


class DigitalOceanClient(ProviderClient):
    info = SourceInfo(slug="digitalocean", provider="digitalocean",
                      name="DigitalOcean API v2 (sizes, Kubernetes options)", kind="api",
                      url="https://docs.digitalocean.com/reference/api/reference/sizes/",
                      api_key_env="DIGITALOCEAN_TOKEN")

    provides_kubernetes_facts = True  # read by scrapers.registry.snapshot_sources

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    recordings = {SIZES_URL: RECORDED / "sizes.json", OPTIONS_URL: RECORDED / "kubernetes-options.json"}

    @classmethod
    def recorded_availability(cls) -> dict[str, Path]:
        return {SIZES_URL: RECORDED / "sizes.json"}

    def fetch_availability(self, known) -> AvailabilityResult:
        result, _ = self.gpu_sizes()
        states = from_listing(result.offers, known)
        states.rejected = result.rejected
        return states

    def fetch(self) -> ScrapeResult:
        result, sizes = self.gpu_sizes()
        gpu_slugs = {size["slug"] for size in sizes if size.get("gpu_info")}
        result.kubernetes_facts = self.kubernetes_facts(gpu_slugs)
        return result

    def gpu_sizes(self) -> tuple[ScrapeResult, list[dict]]:
        sizes = self.paginate(SIZES_URL, "sizes")
        result = ScrapeResult(offers=[])
        for size in sizes:
            missing = [name for name in SIZE_FIELDS if name not in size]
            if missing:
                raise SchemaScrapeError(f"{SIZES_URL}: size {size.get('slug')!r} lacks {', '.join(missing)}")
            if not size.get("gpu_info"):
                continue  # CPU Droplet
            try:
                result.offers.extend(offers_for(size))
            except ValueError as exc:
                result.rejected.append(f"{size['slug']}: {exc}")
                result.rejected_instance_types.add(str(size["slug"]))
        if not result.offers:
            raise SchemaScrapeError(f"{SIZES_URL}: no GPU sizes among {len(sizes)} sizes")
        return result, sizes

    def paginate(self, url: str, key: str) -> list[dict]:
        """Every item of a paged DO list, following `links.pages.next`; a failing page fails the whole list."""
        items: list[dict] = []
        page_url: str | None = url
        seen: set[str] = set()
        while page_url:
            if len(seen) >= MAX_PAGES:
                raise SchemaScrapeError(f"{url}: more than {MAX_PAGES} pages")
            seen.add(page_url)
            payload = get_json(self.http, page_url, headers=self.headers)
            if not isinstance(payload, dict) or not isinstance(payload.get(key), list):
                raise SchemaScrapeError(f"{page_url}: '{key}' missing or not a list")
            items.extend(item for item in payload[key] if isinstance(item, dict))
            page_url = (((payload.get("links") or {}).get("pages") or {}).get("next")) or None
            # The token goes with every request: never follow a link off DigitalOcean's API host.
            if page_url and not page_url.startswith(f"{API}/"):
                raise SchemaScrapeError(f"{url}: next page {page_url!r} is not on {API}")
            if page_url in seen:
                raise SchemaScrapeError(f"{url}: next page {page_url!r} repeats")
        if not items:
            raise SchemaScrapeError(f"{url}: '{key}' is empty")
        return items

    def kubernetes_facts(self, gpu_slugs: set[str]) -> dict[str, object]:
        try:
            payload = get_json(self.http, OPTIONS_URL, headers=self.headers)
        except AuthScrapeError as exc:
            logger.info("DOKS options need a token with kubernetes:read; leaving them unknown (%s)", exc)
            return {}
        options = payload.get("options") if isinstance(payload, dict) else None
        if not isinstance(options, dict):
            raise SchemaScrapeError(f"{OPTIONS_URL}: 'options' missing")
        lists = {}
        for key in ("versions", "regions", "sizes"):
            entries = options.get(key)
            if not isinstance(entries, list) or not entries or any("slug" not in entry for entry in entries):
                raise SchemaScrapeError(f"{OPTIONS_URL}: options.{key} missing, empty or without 'slug'")
            lists[key] = [str(entry["slug"]) for entry in entries]
        return {
            "kubernetes_versions": lists["versions"],
            "regions_with_managed_kubernetes": sorted(lists["regions"]),
            "kubernetes_gpu_node_sizes": sorted(slug for slug in lists["sizes"] if slug in gpu_slugs),
        }


def offers_for(size: dict) -> list[ScrapedOffer]:
    gpu = size["gpu_info"]
    if not isinstance(gpu, dict) or not all(key in gpu for key in ("count", "model", "vram")):
        raise SchemaScrapeError(f"{SIZES_URL}: size {size['slug']!r}: gpu_info lacks count, model or vram")
    count = positive(gpu["count"], "gpu_info.count")
    price = positive(size["price_hourly"], "price_hourly")
    vram = gpu["vram"] or {}
    unit = str(vram.get("unit", "")).lower()
    total = to_decimal(vram.get("amount"))
    if unit not in VRAM_UNITS or total is None or total <= 0:
        raise ValueError(f"gpu_info.vram {vram!r}")
    memory = to_decimal(size["memory"])
    common = {
        "instance_type": str(size["slug"]),
        "gpu_name": str(gpu["model"]),
        "gpu_count": count,
        "gpu_memory_gb": (total * VRAM_UNITS[unit] / count).quantize(Decimal("0.1")),
        "vcpus": to_decimal(size["vcpus"]),
        "ram_gb": None if memory is None else (memory / 1024).quantize(Decimal("0.01")),
        "currency": "USD",
        "price_hour": price,
    }
    regions = [str(region) for region in size["regions"] or []]
    if not regions:
        return [ScrapedOffer(region="", availability="unavailable", **common)]
    stock = "available" if size["available"] is True else "unavailable"
    return [ScrapedOffer(region=region, availability=stock, **common) for region in regions]
