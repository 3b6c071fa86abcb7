"""The explicit list of data sources: slug -> client class. Adding a source means adding it here (and its recorded
payloads and tests: tests/scrapers/test_registry.py checks that every source has both)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from . import (
    curated_prices,
    digitalocean,
    hyperstack,
    lambdalabs,
    linode,
    oci,
    runpod,
    skypilot,
    vastai,
    verda,
    vultr,
)
from .base import NotConfiguredError, ProviderClient
from .http import OFFLINE_API_KEY, RecordedTransport, build_client

SOURCES: dict[str, type[ProviderClient]] = {
    **skypilot.CLIENTS,
    **curated_prices.CLIENTS,
    **oci.CLIENTS,
    # GPU and regional clouds' own APIs (issue 3).
    **{client.info.slug: client for client in (
        vultr.VultrClient, linode.LinodeClient, runpod.RunPodClient, vastai.VastAiClient, lambdalabs.LambdaClient,
        digitalocean.DigitalOceanClient, verda.VerdaClient, hyperstack.HyperstackClient,
    )},
}


def recorded_routes(slug: str) -> dict[str, Path]:
    """URL -> recorded payload file for one source (what `scrape --offline` and the tests replay)."""
    return SOURCES[slug].recorded()


def make_client(slug: str, *, offline: bool = False, transport: httpx.BaseTransport | None = None) -> ProviderClient:
    """Build a source's client. A source that needs an API key gets it from the environment variable its `info`
    names, and raises NotConfiguredError when it is unset (offline replays need no key)."""
    client = SOURCES[slug]
    api_key = None
    if client.info.api_key_env:
        api_key = OFFLINE_API_KEY if offline else os.environ.get(client.info.api_key_env, "").strip()
        if not api_key:
            raise NotConfiguredError(f"{client.info.api_key_env} is not set; {slug} needs an API key")
    if offline and transport is None:
        transport = RecordedTransport(recorded_routes(slug))
    return client(build_client(transport=transport), api_key=api_key)
