"""Lambda instance types: cents -> dollars, capacity -> availability, and every failure mode."""

from decimal import Decimal

import httpx
import pytest

from scrapers import lambdalabs, registry
from scrapers.base import AuthScrapeError, NotConfiguredError, SchemaScrapeError
from scrapers.http import build_client

RECORDED = lambdalabs.LambdaClient.recorded()[lambdalabs.URL]


def client(handler=None, seen=None):
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == lambdalabs.URL, f"unexpected request {request.url}"
        if seen is not None:
            seen.append(request.headers.get("Authorization"))
        return handler(request) if handler else httpx.Response(200, content=RECORDED.read_bytes())

    return lambdalabs.LambdaClient(build_client(transport=httpx.MockTransport(route)), api_key="k3y")


def serve(payload=None, status=200, body=None, headers=None):
    if body is not None:
        return lambda request: httpx.Response(status, content=body, headers=headers or {})
    return lambda request: httpx.Response(status, json=payload, headers=headers or {})


def entry(name="gpu_8x_h100_sxm5", cents=2392, gpus=8, regions=("us-east-1",), description="NVIDIA H100 (80 GB)"):
    return {"instance_type": {"name": name, "description": f"{gpus}x {description}", "gpu_description": description,
                              "price_cents_per_hour": cents,
                              "specs": {"vcpus": 208, "memory_gib": 1800, "storage_gib": 24780, "gpus": gpus}},
            "regions_with_capacity_available": [{"name": r, "description": r} for r in regions]}


def answer(*entries):
    return {"data": {e["instance_type"]["name"]: e for e in entries}}


def test_recorded_type_in_its_region_with_capacity():
    [offer] = client().fetch().offers
    assert (offer.instance_type, offer.region, offer.availability) == ("gpu_1x_a100", "us-west-1", "available")
    assert offer.price_hour == Decimal("1.99") and offer.currency == "USD"  # 199 cents
    assert (offer.gpu_name, offer.gpu_memory_gb, offer.vcpus, offer.ram_gb) == ("NVIDIA A100 (80 GB)", 80, 30, 200)


def test_bearer_key_is_sent():
    seen = []
    client(seen=seen).fetch()
    assert seen == ["Bearer k3y"]


def test_missing_key_is_not_configured(monkeypatch):
    monkeypatch.delenv("LAMBDA_API_KEY", raising=False)
    with pytest.raises(NotConfiguredError):
        registry.make_client("lambdalabs")


def test_one_offer_per_region_and_sold_out_type_kept_as_unavailable():
    sold_out_entry = entry("gpu_1x_a10", 75, 1, (), "NVIDIA A10 (24 GB PCIe)")
    offers = client(serve(answer(entry(regions=("us-east-1", "us-west-2")), sold_out_entry))).fetch().offers
    by_key = {(o.instance_type, o.region): o for o in offers}
    assert set(by_key) == {("gpu_8x_h100_sxm5", "us-east-1"), ("gpu_8x_h100_sxm5", "us-west-2"), ("gpu_1x_a10", "")}
    sold_out = by_key[("gpu_1x_a10", "")]
    assert (sold_out.availability, sold_out.available_count, sold_out.price_hour) == ("unavailable", 0,
                                                                                     Decimal("0.75"))


def test_absurd_rows_are_rejected():
    result = client(serve(answer(entry(), entry("free", cents=0), entry("cpu", gpus=0),
                                 entry("nan", cents="n/a")))).fetch()
    assert sorted(r.split(":")[0] for r in result.rejected) == ["cpu", "free", "nan"]
    assert result.rejected_instance_types == {"cpu", "free", "nan"}


@pytest.mark.parametrize("payload, match", [
    ({"data": {}}, "data"),
    ({"instance_types": {}}, "data"),
    ({"data": {"x": {"instance_type": {}}}}, "regions_with_capacity_available"),
    ({"data": {"x": {"instance_type": {"name": "x", "specs": {}}, "regions_with_capacity_available": []}}},
     "price_cents_per_hour"),
    (answer(entry(gpus=0)), "no GPU instance types"),
])
def test_missing_renamed_or_empty_is_a_schema_error(payload, match):
    with pytest.raises(SchemaScrapeError, match=match):
        client(serve(payload)).fetch()


@pytest.mark.parametrize("body", [b"", b"<html>login</html>", b'{"data": {"gpu_1x'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client(serve(body=body)).fetch()


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_fails_fast(status):
    with pytest.raises(AuthScrapeError):
        client(serve(body=b"no", status=status)).fetch()
