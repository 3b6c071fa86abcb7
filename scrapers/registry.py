"""The explicit list of data sources: slug -> client class. Adding a source means adding it here (and its recorded
payloads and tests: tests/scrapers/test_registry.py checks that every source has both)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from . import (
    azure,
    cncf_ai_conformance,
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
    **azure.CLIENTS,
    # CNCF Kubernetes AI Conformance self-assessments: capability cells only, one source per provider (issue 13).
    **cncf_ai_conformance.CLIENTS,
    # GPU and regional clouds' own APIs (issue 3).
    **{client.info.slug: client for client in (
        vultr.VultrClient, linode.LinodeClient, runpod.RunPodClient, vastai.VastAiClient, lambdalabs.LambdaClient,
        digitalocean.DigitalOceanClient, verda.VerdaClient, hyperstack.HyperstackClient,
    )},
}


def has_api_source(provider: str, environ=os.environ) -> bool:
    """Whether a provider's own API is read live: an API source that needs no key, or whose key is set."""
    return any(
        client.info.kind == "api" and client.info.provider == provider
        and (not client.info.api_key_env or environ.get(client.info.api_key_env, "").strip())
        for client in SOURCES.values()
    )


def scheduled_sources(kind: str, environ=os.environ) -> list[str]:
    """The sources of one kind that the beat schedule runs.

    A public catalog is the fallback for providers whose API we do not read: a catalog source is left out when its
    provider's own API source runs (no key needed, or its key is set), so one provider's offers do not appear
    twice, once live and once from a catalog copy of the same API. A capability dataset (CNCF AI conformance)
    carries no offers, so it always runs.
    """
    return [
        slug for slug, client in SOURCES.items()
        if client.info.kind == kind and not (
            kind == "catalog" and not getattr(client, "capability_dataset", False)
            and has_api_source(client.info.provider, environ))
    ]


def snapshot_sources() -> list[str]:
    """What the embedded default replays offline: every catalog and curated source, and the API sources of
    providers that have no catalog recording (plus API sources that carry Kubernetes facts).

    Recorded API payloads are small real samples (a few records each), while the catalog recordings list every
    configuration, so for a provider with both the richer catalog is the better offline picture; the API client's
    Kubernetes facts are still loaded when it has some.
    """
    catalog_providers = {client.info.provider for client in SOURCES.values() if client.info.kind == "catalog"}
    return [
        slug for slug, client in SOURCES.items()
        if client.info.kind != "api" or client.info.provider not in catalog_providers
        or getattr(client, "provides_kubernetes_facts", False)
    ]


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
