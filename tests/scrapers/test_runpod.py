"""RunPod GraphQL gpuTypes: recorded replay, stock -> availability, GraphQL errors and HTTP failures."""

import json
from decimal import Decimal

import httpx
import pytest

from scrapers import runpod
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client

RECORDED = runpod.RunPodClient.recorded()[runpod.URL]


def client(handler=None):
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == runpod.URL and request.method == "POST", f"unexpected {request.method} {request.url}"
        assert "gpuTypes" in json.loads(request.content)["query"]
        if handler is None:
            return httpx.Response(200, content=RECORDED.read_bytes())
        return handler(request)

    return runpod.RunPodClient(build_client(transport=httpx.MockTransport(route)))


def serve(payload=None, status=200, body=None, headers=None):
    if body is not None:
        return lambda request: httpx.Response(status, content=body, headers=headers or {})
    return lambda request: httpx.Response(status, json=payload, headers=headers or {})


def gpu(**changes):
    base = {"id": "NVIDIA H100 80GB HBM3", "memoryInGb": 80, "secureCloud": True, "communityCloud": True,
            "securePrice": 2.99, "communityPrice": 2.69, "secureSpotPrice": 1.75, "communitySpotPrice": None,
            "lowestPrice": {"minimumBidPrice": 1.75, "uninterruptablePrice": 2.69, "stockStatus": "High"}}
    return {**base, **changes}


def answer(*gpus):
    return {"data": {"gpuTypes": list(gpus)}}


def test_recorded_gpu_type_gives_one_offer_per_cloud():
    offers = {o.instance_type: o for o in client().fetch().offers}
    secure = offers["NVIDIA A100 80GB PCIe (secure cloud)"]
    community = offers["NVIDIA A100 80GB PCIe (community cloud)"]
    assert (secure.price_hour, secure.spot_price_hour) == (Decimal("1.89"), None)
    assert (community.price_hour, community.spot_price_hour) == (Decimal("1.59"), Decimal("0.89"))
    assert community.gpu_memory_gb == 80 and community.gpu_count == 1
    # The recorded documentation example did not select stockStatus: availability stays unknown.
    assert secure.availability == community.availability == "unknown"


@pytest.mark.parametrize("status, expected", [("High", "available"), ("Medium", "limited"), ("Low", "limited"),
                                              (None, "unavailable")])
def test_stock_status_maps_to_availability(status, expected):
    lowest = {"minimumBidPrice": 1, "uninterruptablePrice": 2, "stockStatus": status}
    offers = client(serve(answer(gpu(lowestPrice=lowest)))).fetch().offers
    assert {o.availability for o in offers} == {expected}


def test_cloud_not_offered_or_without_price_is_skipped():
    offers = client(serve(answer(gpu(secureCloud=False), gpu(id="B", communityPrice=None)))).fetch().offers
    assert sorted(o.instance_type for o in offers) == [
        "B (secure cloud)", "NVIDIA H100 80GB HBM3 (community cloud)"]


def test_absurd_prices_are_rejected():
    result = client(serve(answer(gpu(), gpu(id="free", securePrice=0), gpu(id="bad", communityPrice="x")))).fetch()
    assert sorted(r.split(":")[0] for r in result.rejected) == ["bad", "free"]
    assert all(o.gpu_name == "NVIDIA H100 80GB HBM3" for o in result.offers)


def test_graphql_errors_with_http_200_raise():
    with pytest.raises(SchemaScrapeError, match="Cannot query field"):
        client(serve({"errors": [{"message": "Cannot query field 'stockStatus'"}], "data": None})).fetch()


@pytest.mark.parametrize("payload, match", [
    (answer(), "missing or empty"),
    ({"data": {"gpus": []}}, "gpuTypes"),
    (answer({k: v for k, v in gpu().items() if k != "securePrice"}), "securePrice"),
    (answer(gpu(securePrice=None, communityPrice=None, secureSpotPrice=None)), "has a price"),
])
def test_missing_renamed_or_empty_is_a_schema_error(payload, match):
    with pytest.raises(SchemaScrapeError, match=match):
        client(serve(payload)).fetch()


@pytest.mark.parametrize("body", [b"", b"<html>bad gateway</html>", b'{"data": {"gpuTypes": [{"id"'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client(serve(body=body)).fetch()
