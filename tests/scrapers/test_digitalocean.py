"""DigitalOcean GPU Droplet sizes + DOKS options: recorded replay, pagination, and every way the API can fail."""

import json
from decimal import Decimal

import httpx
import pytest

from scrapers import digitalocean
from scrapers.base import SchemaScrapeError, TransientScrapeError
from scrapers.http import build_client
from scrapers.normalize import default_gpu_resolver
from tests.scrapers.replay import answer

ROUTES = digitalocean.DigitalOceanClient.recorded()
PAGE_2 = f"{digitalocean.API}/sizes?page=2&per_page=200"


def client(overrides=None, seen=None):
    """Recorded answers by exact URL; `overrides` maps a URL to a payload, an httpx.Response or an exception."""
    overrides = overrides or {}

    def route(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if seen is not None:
            seen.append(request)
        return answer(ROUTES, overrides, url)

    return digitalocean.DigitalOceanClient(build_client(transport=httpx.MockTransport(route)), api_key="tok")


def size(**changes):
    base = {"slug": "gpu-h100x1-80gb", "memory": 245760, "vcpus": 20, "price_hourly": 3.39, "regions": ["nyc2"],
            "available": True, "description": "H100 GPU - 1X",
            "gpu_info": {"count": 1, "vram": {"amount": 80, "unit": "gib"}, "model": "nvidia_h100"}}
    return {**base, **changes}


def sizes(*items, next_url=None):
    return {"sizes": list(items), "links": {"pages": {"next": next_url}} if next_url else {}, "meta": {"total": 1}}


def test_recorded_sizes_give_gpu_droplets_per_region_with_memory_per_gpu():
    result = client().fetch()
    offers = {o.instance_type: o for o in result.offers}
    assert not result.rejected
    assert set(offers) == {"gpu-h100x8-640gb", "gpu-mi300x8-1536gb"}  # the CPU Droplet is skipped
    h100 = offers["gpu-h100x8-640gb"]
    assert (h100.gpu_name, h100.gpu_count, h100.gpu_memory_gb) == ("nvidia_h100", 8, Decimal("80"))
    assert (h100.region, h100.availability, h100.currency) == ("nyc1", "available", "USD")
    assert h100.price_hour == Decimal("23.92") and h100.spot_price_hour is None
    assert h100.ram_gb == Decimal("1920") and h100.vcpus == 160
    assert offers["gpu-mi300x8-1536gb"].gpu_memory_gb == Decimal("192")


def test_recorded_gpu_models_resolve_to_the_catalog():
    resolver = default_gpu_resolver()
    for offer in client().fetch().offers:
        assert resolver.resolve(offer.gpu_name, offer.gpu_memory_gb) is not None, offer.gpu_name


def test_every_request_carries_the_token():
    seen = []
    client(seen=seen).fetch()
    assert seen and all(request.headers["Authorization"] == "Bearer tok" for request in seen)


def test_recorded_kubernetes_facts():
    facts = client().fetch().kubernetes_facts
    assert facts["kubernetes_versions"] == ["1.18.8-do.0", "1.17.11-do.0", "1.16.14-do.0"]
    assert facts["regions_with_managed_kubernetes"] == ["lon1", "nyc1", "sgp1"]
    # The documentation example lists only CPU node sizes.
    assert facts["kubernetes_gpu_node_sizes"] == []


def test_gpu_node_sizes_are_joined_on_the_slug():
    options = json.loads(ROUTES[digitalocean.OPTIONS_URL].read_text())
    options["options"]["sizes"].append({"name": "gpu-h100x1-80gb", "slug": "gpu-h100x1-80gb"})
    facts = client({digitalocean.SIZES_URL: sizes(size()), digitalocean.OPTIONS_URL: options}).fetch().kubernetes_facts
    assert facts["kubernetes_gpu_node_sizes"] == ["gpu-h100x1-80gb"]


@pytest.mark.parametrize("status", [401, 403])
def test_token_without_kubernetes_scope_keeps_offers_and_leaves_facts_unknown(status):
    result = client({digitalocean.OPTIONS_URL: httpx.Response(status)}).fetch()
    assert result.offers and result.kubernetes_facts == {}


def test_unavailable_size_and_size_without_regions_stay_with_their_price():
    payload = sizes(size(available=False, regions=["nyc2", "tor1"]), size(slug="gpu-l40sx1-48gb", regions=[]))
    offers = client({digitalocean.SIZES_URL: payload}).fetch().offers
    assert sorted((o.instance_type, o.region, o.availability) for o in offers) == [
        ("gpu-h100x1-80gb", "nyc2", "unavailable"), ("gpu-h100x1-80gb", "tor1", "unavailable"),
        ("gpu-l40sx1-48gb", "", "unavailable")]


def test_pagination_follows_links_next():
    first = sizes(size(), next_url=PAGE_2)
    second = sizes(size(slug="gpu-h100x8-640gb"))
    offers = client({digitalocean.SIZES_URL: first, PAGE_2: second}).fetch().offers
    assert {o.instance_type for o in offers} == {"gpu-h100x1-80gb", "gpu-h100x8-640gb"}


def test_a_page_failing_midway_fails_the_whole_run():
    with pytest.raises(TransientScrapeError):
        client({digitalocean.SIZES_URL: sizes(size(), next_url=PAGE_2), PAGE_2: httpx.Response(503)}).fetch()


def test_next_link_off_the_api_host_is_refused():
    with pytest.raises(SchemaScrapeError, match="not on"):
        client({digitalocean.SIZES_URL: sizes(size(), next_url="https://evil.example/v2/sizes?page=2")}).fetch()


def test_repeating_next_link_is_refused():
    with pytest.raises(SchemaScrapeError, match="repeats"):
        client({digitalocean.SIZES_URL: sizes(size(), next_url=digitalocean.SIZES_URL)}).fetch()


def test_absurd_rows_are_rejected_with_reasons():
    payload = sizes(size(), size(slug="free", price_hourly=0), size(slug="nogpu", gpu_info={
        "count": 0, "vram": {"amount": 80, "unit": "gib"}, "model": "nvidia_h100"}),
        size(slug="novram", gpu_info={"count": 1, "vram": {"amount": 0, "unit": "gib"}, "model": "nvidia_h100"}),
        size(slug="oddunit", gpu_info={"count": 1, "vram": {"amount": 80, "unit": "furlongs"}, "model": "x"}),
        size(slug="nan", price_hourly="abc"))
    result = client({digitalocean.SIZES_URL: payload}).fetch()
    assert sorted(reason.split(":")[0] for reason in result.rejected) == ["free", "nan", "nogpu", "novram", "oddunit"]
    # Named, so the offers stored for them are left as they are (providers.ingest.offers_sync).
    assert result.rejected_instance_types == {"free", "nan", "nogpu", "novram", "oddunit"}
    assert [o.instance_type for o in result.offers] == ["gpu-h100x1-80gb"]


@pytest.mark.parametrize("missing", ["price_hourly", "regions", "available"])
def test_missing_field_is_a_schema_error_naming_it(missing):
    row = size()
    del row[missing]
    with pytest.raises(SchemaScrapeError, match=missing):
        client({digitalocean.SIZES_URL: sizes(row)}).fetch()


def test_renamed_gpu_info_field_is_a_schema_error():
    row = size(gpu_info={"count": 1, "memory": {"amount": 80, "unit": "gib"}, "model": "nvidia_h100"})
    with pytest.raises(SchemaScrapeError, match="vram"):
        client({digitalocean.SIZES_URL: sizes(row)}).fetch()


@pytest.mark.parametrize("url, payload", [
    (digitalocean.SIZES_URL, {"sizes": []}),
    (digitalocean.SIZES_URL, {"droplet_sizes": [size()]}),
    (digitalocean.SIZES_URL, sizes({k: v for k, v in size().items() if k != "gpu_info"})),
    (digitalocean.OPTIONS_URL, {"options": {"versions": [], "regions": [{"slug": "nyc1"}], "sizes": [{"slug": "a"}]}}),
    (digitalocean.OPTIONS_URL, {"kubernetes_options": {}}),
])
def test_empty_or_renamed_lists_raise(url, payload):
    with pytest.raises(SchemaScrapeError):
        client({url: payload}).fetch()


@pytest.mark.parametrize("body", [b"", b"<html>maintenance</html>", b'{"sizes": [{"slug": "gpu'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client({digitalocean.SIZES_URL: httpx.Response(200, content=body)}).fetch()
