"""Vultr plans + VKE facts: replay of the recorded API answers, and every way the API can fail."""

import json
from decimal import Decimal

import httpx
import pytest

from scrapers import vultr
from scrapers.base import SchemaScrapeError, TransientScrapeError
from scrapers.http import build_client
from tests.scrapers.replay import answer

ROUTES = vultr.VultrClient.recorded()


def recorded(url):
    return json.loads(ROUTES[url].read_text())


def client(overrides=None):
    """Recorded answers by exact URL; `overrides` maps a URL to a payload, an httpx.Response or an exception."""
    overrides = overrides or {}

    def route(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        return answer(ROUTES, overrides, url)

    return vultr.VultrClient(build_client(transport=httpx.MockTransport(route)))


def plan(**changes):
    base = {"id": "vcg-a100-12c-120g-80vram", "vcpu_count": 12, "ram": 122880, "hourly_cost": 2.397,
            "type": "vcg", "locations": ["ewr"], "gpu_vram_gb": 80, "gpu_type": "NVIDIA_A100"}
    return {**base, **changes}


def test_recorded_plans_give_cloud_gpu_fractions_and_bare_metal():
    result = client().fetch()
    offers = {o.instance_type: o for o in result.offers}
    assert not result.rejected
    assert set(offers) == {"vcg-a100-1c-6g-4vram", "vcg-a100-12c-120g-80vram", "vcg-a100-6c-60g-40vram",
                           "vbm-256c-2048gb-8-mi300x-gpu", "vbm-112c-2048gb-8-h100-gpu"}
    assert offers["vcg-a100-1c-6g-4vram"].gpu_count == Decimal("0.05")  # 4 GB of an 80 GB A100
    assert offers["vcg-a100-6c-60g-40vram"].ram_gb == Decimal("60")
    h100 = offers["vbm-112c-2048gb-8-h100-gpu"]
    assert (h100.gpu_name, h100.gpu_count, h100.region) == ("H100", 8, "sea")
    assert h100.price_hour == Decimal("23.92") and h100.spot_price_hour == Decimal("18.4")


def test_recorded_kubernetes_facts():
    facts = client().fetch().kubernetes_facts
    assert facts == {"kubernetes_versions": ["v1.20.0+1"], "regions_with_managed_kubernetes": ["ams"]}


def test_cpu_plans_are_skipped_and_one_offer_per_location():
    payload = {"plans": [plan(locations=["ewr", "fra"]), {**plan(id="vc2-1c-1gb", type="vc2")}]}
    offers = client({vultr.PLANS_URL: payload}).fetch().offers
    assert sorted(o.region for o in offers if o.instance_type.startswith("vcg")) == ["ewr", "fra"]
    assert not any(o.instance_type == "vc2-1c-1gb" for o in offers)


def test_cursor_pagination_follows_next_until_empty():
    first = {"plans": [plan()], "meta": {"links": {"next": "abc=", "prev": ""}}}
    second = {"plans": [plan(id="vcg-a100-6c-60g-40vram", gpu_vram_gb=40)], "meta": {"links": {"next": ""}}}
    offers = client({vultr.PLANS_URL: first, vultr.PLANS_URL + "&cursor=abc%3D": second}).fetch().offers
    assert {"vcg-a100-12c-120g-80vram", "vcg-a100-6c-60g-40vram"} <= {o.instance_type for o in offers}


def test_a_page_failing_midway_fails_the_whole_run():
    first = {"plans": [plan()], "meta": {"links": {"next": "abc"}}}
    with pytest.raises(TransientScrapeError):
        client({vultr.PLANS_URL: first, vultr.PLANS_URL + "&cursor=abc": httpx.Response(502)}).fetch()


def test_absurd_rows_are_rejected_with_reasons():
    payload = {"plans": [plan(), plan(id="free", hourly_cost=0), plan(id="novram", gpu_vram_gb=0),
                         plan(id="mystery", gpu_type="NVIDIA_UNKNOWN"), plan(id="nan", hourly_cost="abc")]}
    result = client({vultr.PLANS_URL: payload}).fetch()
    assert sorted(reason.split(":")[0] for reason in result.rejected) == ["free", "mystery", "nan", "novram"]
    assert any("cannot be derived" in reason for reason in result.rejected)


def test_metal_plan_without_a_gpu_count_in_its_id_is_rejected_not_guessed():
    metal = recorded(vultr.METAL_URL)
    metal["plans_metal"].append({**metal["plans_metal"][0], "id": "vbm-64c-2048gb-l40-gpu"})
    result = client({vultr.METAL_URL: metal}).fetch()
    assert any(r.startswith("vbm-64c-2048gb-l40-gpu") and "count" in r for r in result.rejected)


@pytest.mark.parametrize("missing", ["hourly_cost", "gpu_vram_gb", "locations"])
def test_missing_field_is_a_schema_error_naming_it(missing):
    row = plan()
    del row[missing]
    with pytest.raises(SchemaScrapeError, match=missing):
        client({vultr.PLANS_URL: {"plans": [row]}}).fetch()


@pytest.mark.parametrize("url, payload", [
    (vultr.PLANS_URL, {"plans": []}),
    (vultr.PLANS_URL, {"plan": [plan()]}),
    (vultr.VERSIONS_URL, {"versions": []}),
    (vultr.REGIONS_URL, {"regions": [{"id": "ams"}]}),
])
def test_empty_or_renamed_lists_raise(url, payload):
    with pytest.raises(SchemaScrapeError):
        client({url: payload}).fetch()


def test_no_gpu_plan_at_all_raises():
    with pytest.raises(SchemaScrapeError, match="no GPU plans"):
        client({vultr.PLANS_URL: {"plans": [plan(type="vc2")]},
                vultr.METAL_URL: {"plans_metal": [{"id": "vbm-4c-32gb", "locations": []}]}}).fetch()


@pytest.mark.parametrize("body", [b"", b"<html>maintenance</html>", b'{"plans": [{"id": "vcg'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client({vultr.PLANS_URL: httpx.Response(200, content=body)}).fetch()
