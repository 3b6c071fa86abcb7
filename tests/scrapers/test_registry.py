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
    assert result.offers, f"{slug}: the recorded payload yields no offers"


@pytest.mark.parametrize("slug", sorted(registry.SOURCES))
def test_every_source_is_named_in_a_test(slug):
    module = registry.SOURCES[slug].__module__.rsplit(".", 1)[-1]
    assert (TESTS / "scrapers" / f"test_{module}.py").is_file(), f"no tests/scrapers/test_{module}.py for {slug}"


def test_sources_have_provider_and_kind():
    for slug, client in registry.SOURCES.items():
        assert client.info.slug == slug
        assert client.info.kind in {"api", "catalog", "curated"}
        assert client.info.url.startswith("https://")
