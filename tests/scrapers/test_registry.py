"""Every registered source has recorded payloads and is exercised by the tests (datasette-style consistency)."""

import pathlib

import pytest

from scrapers import registry

TESTS = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("slug", sorted(registry.SOURCES))
def test_every_source_has_recorded_payloads_that_replay(slug):
    routes = registry.recorded_routes(slug)
    assert routes, f"{slug} declares no recorded payloads"
    for url, path in routes.items():
        assert path.is_file(), f"{slug}: recorded payload for {url} missing at {path}"
    result = registry.make_client(slug, offline=True).fetch()
    if getattr(registry.SOURCES[slug], "recording_has_no_offers", False):
        # A partial real sample (AWS's multi-GB price list): the replay must still parse, and is not in the snapshot.
        assert slug not in registry.snapshot_sources()
        return
    assert result.offers or result.capabilities or result.kubernetes_facts, f"{slug}: the recording yields nothing"


@pytest.mark.parametrize("slug", sorted(registry.SOURCES))
def test_every_source_is_named_in_a_test(slug):
    module = registry.SOURCES[slug].__module__.rsplit(".", 1)[-1]
    assert (TESTS / "scrapers" / f"test_{module}.py").is_file(), f"no tests/scrapers/test_{module}.py for {slug}"


def test_sources_have_provider_and_kind():
    for slug, client in registry.SOURCES.items():
        assert client.info.slug == slug
        assert client.info.kind in {"api", "catalog", "curated"}
        assert client.info.url.startswith("https://")


def test_a_catalog_is_scheduled_only_for_providers_whose_api_we_do_not_read():
    catalogs = registry.scheduled_sources("catalog", environ={})
    assert "skypilot-lambda" in catalogs  # Lambda's API needs LAMBDA_API_KEY, unset here
    assert "skypilot-oci" not in catalogs  # Oracle's price list needs no key
    assert "skypilot-paperspace" in catalogs  # no Paperspace client at all
    with_key = registry.scheduled_sources("catalog", environ={"LAMBDA_API_KEY": "k"})
    assert "skypilot-lambda" not in with_key
    assert registry.scheduled_sources("api", environ={}) == [
        slug for slug, client in registry.SOURCES.items() if client.info.kind == "api"]


def test_snapshot_replays_catalogs_and_only_the_api_recordings_that_add_something():
    snapshot = set(registry.snapshot_sources())
    assert {slug for slug, c in registry.SOURCES.items() if c.info.kind in {"catalog", "curated"}} <= snapshot
    assert {"runpod", "vultr", "linode"} <= snapshot  # providers with no catalog recording
    assert "lambdalabs" not in snapshot and "vastai" not in snapshot  # the catalog lists every configuration
    assert {"azure", "digitalocean", "oci"} <= snapshot  # their APIs state Kubernetes facts
