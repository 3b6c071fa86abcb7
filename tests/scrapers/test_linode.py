"""Linode GPU plans and LKE facts: recorded replay, control-plane fee, token-only versions, and failures."""

import json
from decimal import Decimal

import httpx
import pytest

from scrapers import linode
from scrapers.base import AuthScrapeError, SchemaScrapeError, TransientScrapeError
from scrapers.http import build_client
from tests.scrapers.replay import answer

ROUTES = linode.LinodeClient.recorded()
TYPES = linode.page_url(linode.TYPES_URL, 1)
LKE_TYPES = linode.page_url(linode.LKE_TYPES_URL, 1)
VERSIONS = linode.page_url(linode.LKE_VERSIONS_URL, 1)
REGIONS = linode.page_url(linode.REGIONS_URL, 1)


def recorded(url):
    return json.loads(ROUTES[url].read_text())


def client(overrides=None, api_key=None, seen=None):
    overrides = overrides or {}

    def route(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if seen is not None:
            seen.append((url, request.headers.get("Authorization")))
        return answer(ROUTES, overrides, url)

    return linode.LinodeClient(build_client(transport=httpx.MockTransport(route)), api_key=api_key)


def gpu_type(**changes):
    base = {"id": "g1-gpu-rtx6000-1", "label": "Dedicated 32GB + RTX6000 GPU x1",
            "price": {"hourly": 1.5, "monthly": 1000.0}, "region_prices": [], "memory": 32768, "vcpus": 8,
            "gpus": 1, "class": "gpu"}
    return {**base, **changes}


def page(items, page_no=1, pages=1):
    return {"data": items, "page": page_no, "pages": pages, "results": len(items)}


def test_recorded_types_give_gpu_plans_only():
    result = linode.LinodeClient(build_client(transport=httpx.MockTransport(
        lambda r: httpx.Response(200, content=ROUTES[str(r.url)].read_bytes())))).fetch()
    offers = {o.instance_type: o for o in result.offers}
    assert set(offers) == {"g1-gpu-rtx6000-1", "g1-gpu-rtx6000-2"}  # the nanode is not a GPU plan
    two = offers["g1-gpu-rtx6000-2"]
    assert (two.gpu_name, two.gpu_count, two.price_hour, two.ram_gb) == ("RTX6000", 2, Decimal("3.0"), 64)
    assert two.region == ""  # the types list does not say which regions sell which GPU plan


def test_recorded_lke_facts_and_control_plane_fee():
    result = client().fetch()
    assert result.kubernetes_facts == {
        "regions_with_managed_kubernetes": ["au-mel", "us-ord"],
        "regions_with_gpu_linodes": ["us-ord"],
        "regions_with_lke_enterprise": ["us-ord"],
        "kubernetes_versions": ["1.30", "1.29", "1.28"],
    }
    [fee] = result.capabilities
    assert (fee.key, fee.value, fee.amount) == ("control_plane_fee", "free", None)
    assert "0.09" in fee.label and "br-gru $0.126/h" in fee.detail and fee.source_url == LKE_TYPES


def test_paid_standard_control_plane_is_reported_with_amount():
    lke = recorded(LKE_TYPES)
    lke["data"][0]["price"] = {"hourly": 0.05, "monthly": 36}
    [fee] = client({LKE_TYPES: lke}).fetch().capabilities
    assert (fee.value, fee.amount, fee.currency) == ("paid", Decimal("0.05"), "USD")


def test_versions_without_a_token_are_left_unknown_not_failed():
    result = client({VERSIONS: httpx.Response(401)}).fetch()
    assert "kubernetes_versions" not in result.kubernetes_facts
    assert result.offers and result.capabilities


def test_token_is_sent_to_the_versions_endpoint_when_given():
    seen = []
    client(api_key="secret", seen=seen).fetch()
    assert (VERSIONS, "Bearer secret") in seen


def test_pages_are_followed():
    overrides = {TYPES: page([gpu_type()], 1, 2),
                 linode.page_url(linode.TYPES_URL, 2): page([gpu_type(id="g1-gpu-rtx6000-2", gpus=2)], 2, 2)}
    assert len(client(overrides).fetch().offers) == 2


def test_a_page_failing_midway_fails_the_whole_run():
    overrides = {TYPES: page([gpu_type()], 1, 2), linode.page_url(linode.TYPES_URL, 2): httpx.Response(503)}
    with pytest.raises(TransientScrapeError):
        client(overrides).fetch()


def test_absurd_rows_are_rejected_with_reasons():
    rows = [gpu_type(), gpu_type(id="free", price={"hourly": 0}), gpu_type(id="odd", label="Dedicated 32GB"),
            gpu_type(id="neg", gpus=-1)]
    result = client({TYPES: page(rows)}).fetch()
    assert [o.instance_type for o in result.offers] == ["g1-gpu-rtx6000-1"]
    assert sorted(r.split(":")[0] for r in result.rejected) == ["free", "neg", "odd"]
    assert result.rejected_instance_types == {"free", "neg", "odd"}


@pytest.mark.parametrize("url, payload, match", [
    (TYPES, page([]), "empty"),
    (TYPES, {"data": [gpu_type()]}, "pages"),
    (TYPES, page([{k: v for k, v in gpu_type().items() if k != "gpus"}]), "gpus"),
    (TYPES, page([{k: v for k, v in gpu_type().items() if k != "price"}]), "price"),
    (TYPES, page([gpu_type(gpus=0)]), "no GPU plans"),
    (LKE_TYPES, page([{"id": "lke-sa", "price": {"hourly": 0}}]), "lke-ha"),
    (REGIONS, page([{"id": "us-ord"}]), "capabilities"),
])
def test_missing_renamed_or_empty_is_a_schema_error(url, payload, match):
    with pytest.raises(SchemaScrapeError, match=match):
        client({url: payload}).fetch()


@pytest.mark.parametrize("body", [b"", b"<html>oops</html>", b'{"data": [{"id"'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client({TYPES: httpx.Response(200, content=body)}).fetch()


@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_on_public_endpoints_fail_fast(status):
    with pytest.raises(AuthScrapeError):
        client({TYPES: httpx.Response(status)}).fetch()
