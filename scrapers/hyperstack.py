"""Hyperstack (NexGen Cloud) on-demand GPU prices from the Infrahub API pricebook.

Contract: `GET https://infrahub-api.nexgencloud.com/v1/pricebook` with header `api_key: <HYPERSTACK_API_KEY>`
("Get the pricebook", https://docs.hyperstack.cloud/docs/api-reference/get-pricebook; authentication
https://docs.hyperstack.cloud/docs/api-reference/authentication). Unlike the rest of the API it answers a bare JSON
array, no `{status, message}` envelope: `[{id, name ("RTX-A4000"), value, original_value, discount_applied,
start_time, end_time}]`, "hourly running costs for all resources offered by Hyperstack". No pagination.

- `value` is the price per GPU-hour of the resource `name` (what is charged now; `original_value` is the price before
  a discount), in USD: Hyperstack publishes its rate card in USD (https://www.hyperstack.cloud/gpu-pricing).
- The pricebook prices every resource, not only GPUs, and names no region, flavor, vCPU or RAM (those live in
  `GET /v1/core/flavors`, for which no real answer has been recorded yet). So each entry whose name the GPU catalog
  knows becomes one single-GPU offer with region "" and availability unknown; any other name is not guessed to be a
  GPU: it is listed in `rejected` with the reason, so a new GPU spelling shows up on the run.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from pathlib import Path

from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get_records
from .normalize import default_gpu_resolver, positive

logger = logging.getLogger(__name__)

URL = "https://infrahub-api.nexgencloud.com/v1/pricebook"
RECORDED = Path(__file__).resolve().parent / "recorded" / "hyperstack"
FIELDS = ("name", "value")


class HyperstackClient(ProviderClient):
    info = SourceInfo(slug="hyperstack", provider="hyperstack", name="Hyperstack Infrahub API (pricebook)", kind="api",
                      url="https://docs.hyperstack.cloud/docs/api-reference/get-pricebook",
                      api_key_env="HYPERSTACK_API_KEY")

    @property
    def headers(self) -> dict[str, str]:
        return {"api_key": self.api_key or ""}

    recordings = {URL: RECORDED / "pricebook.json"}

    def fetch(self) -> ScrapeResult:
        entries = get_records(self.http, URL, FIELDS, headers=self.headers)
        result = ScrapeResult(offers=[])
        resolver = default_gpu_resolver()
        for entry in entries:
            name = str(entry["name"]).strip()
            if resolver.resolve(name) is None:
                result.rejected.append(f"{name}: not a GPU the catalog knows (the pricebook prices every resource)")
                continue
            try:
                price = positive(entry["value"], "value")
            except ValueError as exc:
                result.rejected.append(f"{name}: {exc}")
                continue
            result.offers.append(ScrapedOffer(
                instance_type=f"{name} (1 GPU)", region="", gpu_name=name, gpu_count=Decimal(1), currency="USD",
                price_hour=price,
            ))
        if not result.offers:
            raise SchemaScrapeError(f"{URL}: no GPU among {len(entries)} pricebook entries")
        return result
