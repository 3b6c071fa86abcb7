"""The explicit list of data sources: slug -> client class. Adding a source means adding it here (and its recorded
payloads and tests: tests/scrapers/test_registry.py checks that every source has both)."""

from __future__ import annotations

from pathlib import Path

import httpx

from . import skypilot
from .base import ProviderClient
from .http import RecordedTransport, build_client

RECORDED = Path(__file__).resolve().parent / "recorded"

SOURCES: dict[str, type[ProviderClient]] = {
    **skypilot.CLIENTS,
}


def recorded_routes(slug: str) -> dict[str, Path]:
    """URL -> recorded payload file for one source (what `scrape --offline` and the tests replay)."""
    client = SOURCES[slug]
    if issubclass(client, skypilot.SkyPilotCatalogClient):
        return {client.url(): RECORDED / "skypilot" / client.path}
    raise KeyError(f"no recorded payloads declared for {slug}")


def make_client(slug: str, *, offline: bool = False, transport: httpx.BaseTransport | None = None) -> ProviderClient:
    if offline and transport is None:
        transport = RecordedTransport(recorded_routes(slug))
    return SOURCES[slug](build_client(transport=transport))
