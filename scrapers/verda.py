"""Verda (ex-DataCrunch) instance types, prices and spot stock per location from Verda's public API v1.

Contract: https://api.verda.com/v1/docs (Verda Public API; the official SDK github.com/verda-cloud/sdk-python and
SkyPilot's `fetch_verda.py` send the same requests). Authentication is OAuth 2.0 client credentials:
`POST /v1/oauth2/token` with JSON `{grant_type: "client_credentials", client_id, client_secret}` answers
`{access_token, refresh_token, scope, token_type, expires_in}`, then `Authorization: Bearer <access_token>`. The token
call goes through the same injected httpx client, so it fails (and is tested) like every other request. The secret
comes from VERDA_CLIENT_SECRET (the source's `api_key_env`), the id from VERDA_CLIENT_ID. An offline replay skips the
exchange: no token answer was ever recorded, and the recorded transport checks no credentials.

- `GET /instance-types?currency=usd` (what the SDK sends) is a bare array; `price_per_hour` and `spot_price` are USD
  decimal *strings* per instance-hour, and each row repeats its `currency` ("usd"), which we check.
  `gpu.description` is "<count>x <GPU>" ("1x H100 SXM5 80GB"): the count prefix is stripped and the rest is the
  GPU name; `gpu.number_of_gpus` is the count and `gpu_memory.size_in_gigabytes` the *total* GPU memory. Types
  with no GPU (CPU nodes) are skipped. No pagination.
- Prices do not vary by location, and the types list does not say where a type is sold: the on-demand price is one
  offer per type with region "" and availability unknown in the price run (the availability poll below reads
  on-demand stock).
- Spot stock: `GET /instance-availability?is_spot=true` lists per `location_code` the instance types that can be
  deployed as spot right now. Each spot-priced type gets a separate "<type> (spot)" offer (spot price only) in every
  location listing it, as available; a type listed nowhere is kept once with region "" as unavailable (its price is
  still real). `GET /locations` names the locations; a stock entry for a location it does not name is logged.
- Availability (`fetch_availability`, polled every 15 minutes): the token exchange and the two stock lists,
  `/instance-availability?is_spot=false` (on-demand) and `?is_spot=true` (spot), same shape, nothing else. An
  on-demand offer (region "") is available when any location lists its type, unavailable when none does; a spot
  offer "<type> (spot)" in a location is available when that location lists the type, unavailable otherwise, and
  its region-less "sold out" row is available when any location lists it. Both lists empty is refused.
"""

from __future__ import annotations

import logging
import os
import re
from decimal import Decimal
from pathlib import Path

import httpx

from .availability import AvailabilityResult, ScrapedAvailability
from .base import NotConfiguredError, ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import OFFLINE_API_KEY, get_records, post_json
from .normalize import to_decimal

logger = logging.getLogger(__name__)

API = "https://api.verda.com/v1"
TOKEN_URL = f"{API}/oauth2/token"
TYPES_URL = f"{API}/instance-types?currency=usd"
LOCATIONS_URL = f"{API}/locations"
SPOT_AVAILABILITY_URL = f"{API}/instance-availability?is_spot=true"
ON_DEMAND_AVAILABILITY_URL = f"{API}/instance-availability?is_spot=false"
SPOT_SUFFIX = " (spot)"
RECORDED = Path(__file__).resolve().parent / "recorded" / "verda"
CLIENT_ID_ENV = "VERDA_CLIENT_ID"

TYPE_FIELDS = ("instance_type", "price_per_hour", "spot_price", "currency", "cpu", "gpu", "gpu_memory", "memory")
COUNT_PREFIX = re.compile(r"^\s*(?P<count>\d+)\s*x\s+(?P<name>\S.*?)\s*$", re.IGNORECASE)


class VerdaClient(ProviderClient):
    info = SourceInfo(slug="verda", provider="verda",
                      name="Verda Public API v1 (instance types, spot availability, locations)", kind="api",
                      url="https://api.verda.com/v1/docs", api_key_env="VERDA_CLIENT_SECRET")

    def __init__(self, http: httpx.Client, api_key: str | None = None, client_id: str | None = None):
        super().__init__(http, api_key)
        self.client_id = client_id if client_id is not None else os.environ.get(CLIENT_ID_ENV, "").strip()

    @property
    def client_secret(self) -> str | None:
        """Verda's name for the API key: the OAuth client secret."""
        return self.api_key

    recordings = {
        TYPES_URL: RECORDED / "instance-types.json",
        LOCATIONS_URL: RECORDED / "locations.json",
        SPOT_AVAILABILITY_URL: RECORDED / "instance-availability-spot.json",
    }

    @classmethod
    def recorded_availability(cls) -> dict[str, Path]:
        # Only the spot list was ever recorded; the on-demand one has the same documented shape (provider-apis.md):
        # tests build it from the recorded spot answer, and the snapshot replays the spot half alone.
        return {SPOT_AVAILABILITY_URL: RECORDED / "instance-availability-spot.json"}

    def fetch_availability(self, known) -> AvailabilityResult:
        headers = {"Authorization": f"Bearer {self.access_token()}"}
        spot = self.stock(SPOT_AVAILABILITY_URL, headers)
        # An offline replay has only the recorded spot list: on-demand offers are then not stated (left as they are).
        offline = self.client_secret == OFFLINE_API_KEY
        on_demand = None if offline else self.stock(ON_DEMAND_AVAILABILITY_URL, headers)
        if not spot and not on_demand:
            raise SchemaScrapeError("both Verda stock lists are empty; refusing the answer")
        result = AvailabilityResult(states=[])
        for instance_type, region in sorted(known):
            is_spot = instance_type.endswith(SPOT_SUFFIX)
            stock = spot if is_spot else on_demand
            if stock is None:
                continue
            where = stock.get(instance_type.removesuffix(SPOT_SUFFIX), set())
            listed = region in where if region else bool(where)
            result.states.append(ScrapedAvailability(instance_type, region, "available" if listed else "unavailable"))
        return result

    def stock(self, url: str, headers: dict, non_empty: bool = False) -> dict[str, set[str]]:
        """Instance type -> locations where it can be deployed now, from one /instance-availability list."""
        entries = get_records(self.http, url, ("location_code", "availabilities"), named_by="location_code",
                              non_empty=non_empty, headers=headers)
        stock: dict[str, set[str]] = {}
        for entry in entries:
            if not isinstance(entry["availabilities"], list):
                raise SchemaScrapeError(f"{url}: availabilities of {entry['location_code']!r} is not a list")
            for instance_type in entry["availabilities"]:
                stock.setdefault(str(instance_type), set()).add(str(entry["location_code"]))
        return stock

    def fetch(self) -> ScrapeResult:
        headers = {"Authorization": f"Bearer {self.access_token()}"}
        types = get_records(self.http, TYPES_URL, TYPE_FIELDS, named_by="instance_type", headers=headers)
        locations = self.location_codes(headers)
        spot_stock = self.spot_stock(headers, locations)
        result = ScrapeResult(offers=[])
        for kind in types:
            try:
                result.offers.extend(offers_for(kind, spot_stock.get(str(kind["instance_type"]), [])))
            except ValueError as exc:
                result.rejected.append(f"{kind['instance_type']}: {exc}")
        if not result.offers:
            raise SchemaScrapeError(f"{TYPES_URL}: no GPU instance types among {len(types)}")
        return result

    def access_token(self) -> str:
        """Exchange the client credentials for a bearer token (OAuth 2.0 client credentials grant)."""
        if self.client_secret == OFFLINE_API_KEY:
            return OFFLINE_API_KEY
        if not self.client_id or not self.client_secret:
            raise NotConfiguredError(f"{CLIENT_ID_ENV} and {self.info.api_key_env} are both needed for Verda")
        payload = post_json(self.http, TOKEN_URL, json={
            "grant_type": "client_credentials", "client_id": self.client_id, "client_secret": self.client_secret,
        })
        token = payload.get("access_token") if isinstance(payload, dict) else None
        if not isinstance(token, str) or not token:
            raise SchemaScrapeError(f"{TOKEN_URL}: no 'access_token' in the answer")
        return token

    def location_codes(self, headers: dict) -> set[str]:
        locations = get_records(self.http, LOCATIONS_URL, ("code",), named_by="name", headers=headers)
        return {str(location["code"]) for location in locations}

    def spot_stock(self, headers: dict, locations: set[str]) -> dict[str, list[str]]:
        """Instance type -> locations where it can be deployed as spot now."""
        stock = self.stock(SPOT_AVAILABILITY_URL, headers, non_empty=True)
        for code in sorted(set().union(*stock.values()) - locations):
            logger.warning("Verda spot stock names location %r that /locations does not list", code)
        return {instance_type: sorted(codes) for instance_type, codes in stock.items()}


def _price(value, what: str) -> Decimal | None:
    price = to_decimal(value)
    if price is not None and price <= 0:
        raise ValueError(f"{what} {value!r}")
    return price


def offers_for(kind: dict, spot_locations: list[str]) -> list[ScrapedOffer]:
    gpu = kind["gpu"] or {}
    count = to_decimal(gpu.get("number_of_gpus"))
    if not count:
        return []  # CPU node
    if count < 0:
        raise ValueError(f"number_of_gpus {gpu.get('number_of_gpus')!r}")
    if str(kind["currency"]).upper() != "USD":
        raise SchemaScrapeError(f"{TYPES_URL}: {kind['instance_type']!r} is priced in {kind['currency']!r}, not usd")
    match = COUNT_PREFIX.match(str(gpu.get("description") or ""))
    if match is None:
        raise ValueError(f"gpu.description {gpu.get('description')!r} is not '<count>x <GPU>'")
    if Decimal(match["count"]) != count:
        raise ValueError(f"gpu.description says {match['count']} GPUs, number_of_gpus {count}")
    price = _price(kind["price_per_hour"], "price_per_hour")
    spot = _price(kind["spot_price"], "spot_price")
    if price is None and spot is None:
        raise ValueError("no price")
    total_memory = to_decimal((kind["gpu_memory"] or {}).get("size_in_gigabytes"))
    if total_memory is not None and total_memory <= 0:
        raise ValueError(f"gpu_memory.size_in_gigabytes {total_memory}")
    common = {
        "gpu_name": match["name"],
        "gpu_count": count,
        "gpu_memory_gb": None if total_memory is None else (total_memory / count).quantize(Decimal("0.1")),
        "vcpus": to_decimal((kind["cpu"] or {}).get("number_of_cores")),
        "ram_gb": to_decimal((kind["memory"] or {}).get("size_in_gigabytes")),
        "currency": "USD",
    }
    instance_type = str(kind["instance_type"])
    offers = []
    if price is not None:
        offers.append(ScrapedOffer(instance_type=instance_type, region="", price_hour=price, **common))
    if spot is not None:
        spot_type = f"{instance_type} (spot)"
        if spot_locations:
            offers.extend(
                ScrapedOffer(instance_type=spot_type, region=location, price_hour=None, spot_price_hour=spot,
                             availability="available", **common)
                for location in sorted(set(spot_locations))
            )
        else:
            offers.append(ScrapedOffer(instance_type=spot_type, region="", price_hour=None, spot_price_hour=spot,
                                       availability="unavailable", available_count=0, **common))
    return offers
