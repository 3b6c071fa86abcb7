"""The explicit list of data sources: slug -> client class. Adding a source means adding it here (and its recorded
payloads and tests: tests/scrapers/test_registry.py checks that every source has both)."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import httpx

from . import (
    aws,
    aws_catalog,
    azure,
    cncf_ai_conformance,
    coreweave,
    curated_prices,
    digitalocean,
    gcp_catalog,
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
    **aws_catalog.CLIENTS,
    **gcp_catalog.CLIENTS,
    **coreweave.CLIENTS,
    # AWS's own bulk price list, for live runs: its recording is a real but partial sample (the header, no GPU row;
    # recorded/aws/README.md), so the bundled snapshot shows AWS from aws-catalog instead.
    aws.AwsEc2PriceListClient.info.slug: aws.AwsEc2PriceListClient,
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


def make_client(slug: str, *, offline: bool = False, transport: httpx.BaseTransport | None = None,
                edition: str | None = None) -> ProviderClient:
    """Build a source's client. A source that needs an API key gets it from the environment variable its `info`
    names, and raises NotConfiguredError when it is unset (offline replays need no key). `edition` picks one dated
    edition of a source published in editions (base.EditionedClient)."""
    client = SOURCES[slug]
    api_key = None
    if client.info.api_key_env:
        api_key = OFFLINE_API_KEY if offline else os.environ.get(client.info.api_key_env, "").strip()
        if not api_key:
            raise NotConfiguredError(f"{client.info.api_key_env} is not set; {slug} needs an API key")
    if offline and transport is None:
        transport = RecordedTransport(recorded_routes(slug))
    options = {"edition": edition} if edition is not None else {}
    return client(build_client(transport=transport), api_key=api_key, **options)


def editions(slug: str) -> list[str]:
    """The recorded editions of a source published in dated editions, oldest first; [] for other sources."""
    listed = getattr(SOURCES[slug], "editions", None)
    return list(listed()) if listed else []


# Sources whose stock is polled on its own, more often than prices (providers.tasks.availability_poll): their
# clients have `fetch_availability(known)` and `recorded_availability()` (scrapers/availability.py says what they
# return). Hyperstack's stock (`stock_available` in `GET /v1/core/flavors`) is not read: no real answer of that
# endpoint has been recorded to build the client on.
AVAILABILITY_SOURCES: tuple[str, ...] = (
    "linode", "vultr", "verda", "lambdalabs", "runpod", "vastai", "digitalocean",
)
# What the bundled snapshot replays for availability, with the recording's date (shown with every state it gives):
# only recordings whose stock rows are complete for the offers they cover (README of each recorded folder). The
# fixtures state no capture time, so the date is the day the fixture first entered dstackai/gpuhunt's history
# (`git log -S` on the fixture's rows): the answer is at least that old.
SNAPSHOT_AVAILABILITY: dict[str, str] = {
    "verda": "2023-11-16",  # 3f0c56a "Add tests for datacrunch" (the spot list, then in test_datacrunch.py)
    "digitalocean": "2025-08-29",  # 0178e9b "Add digital ocean provider (#172)"
}


# The day each replayed API recording of prices was captured, as far as its public source shows it: every offer a
# replay stores carries it as its "price as of" (a live run's offers carry the fetch time instead, through
# last_seen). A go-vcr cassette keeps the live API's `Date` header, the moment the answer was given; a unit-test
# fixture or a documentation example states no capture time, so its date is the day its rows first entered the
# repository's history (`git log -S` on them): the answer is at least that old. recorded/<slug>/README.md says which.
RECORDED_ON: dict[str, str] = {
    "linode": "2024-07-11",  # TestTypes_List.yaml, `Date: Thu, 11 Jul 2024 18:32:53 GMT` (linode/linodego 676b9db)
    "vultr": "2025-01-08",  # dstackai/gpuhunt 91eca44 "Add Vultr support (#110)": test_vultr.py's plans
    "digitalocean": SNAPSHOT_AVAILABILITY["digitalocean"],  # the same sizes.json
    "runpod": "2024-02-06",  # runpod/docs 007dd224: the get_gpu output's prices first appear in apis.md
}


def recorded_on(slug: str) -> date | None:
    """The capture day of a source's recorded price answer (RECORDED_ON), or None where it is not known."""
    return date.fromisoformat(RECORDED_ON[slug]) if slug in RECORDED_ON else None


def availability_sources(environ=os.environ) -> list[str]:
    """The polled sources the beat schedule runs: every one that needs no key or whose key is set."""
    return [
        slug for slug in AVAILABILITY_SOURCES
        if not SOURCES[slug].info.api_key_env or environ.get(SOURCES[slug].info.api_key_env, "").strip()
    ]


def make_availability_client(slug: str, *, offline: bool = False,
                             transport: httpx.BaseTransport | None = None) -> ProviderClient:
    """The client of a polled source, replaying its recorded stock answers when offline."""
    if offline and transport is None:
        transport = RecordedTransport(SOURCES[slug].recorded_availability())
    return make_client(slug, offline=offline, transport=transport)
