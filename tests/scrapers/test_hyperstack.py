"""Hyperstack pricebook: recorded replay, non-GPU resources, and every way the API can fail."""

from decimal import Decimal

import httpx
import pytest

from scrapers import hyperstack
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client
from scrapers.normalize import default_gpu_resolver

RECORDED = hyperstack.HyperstackClient.recorded()[hyperstack.URL]


def client(handler=None, seen=None):
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == hyperstack.URL and request.method == "GET", f"unexpected {request.url}"
        if seen is not None:
            seen.append(request)
        return httpx.Response(200, content=RECORDED.read_bytes()) if handler is None else handler(request)

    return hyperstack.HyperstackClient(build_client(transport=httpx.MockTransport(route)), api_key="key")


def serve(payload=None, status=200, body=None, headers=None):
    if body is not None:
        return lambda request: httpx.Response(status, content=body, headers=headers or {})
    return lambda request: httpx.Response(status, json=payload, headers=headers or {})


def entry(**changes):
    base = {"id": 10, "name": "RTX-A4000", "value": 0.58, "original_value": 0.58, "discount_applied": False,
            "start_time": None, "end_time": None}
    return {**base, **changes}


def test_recorded_pricebook_gives_one_gpu_offer_per_gpu_entry():
    seen = []
    result = client(seen=seen).fetch()
    assert seen[0].headers["api_key"] == "key"
    [offer] = result.offers
    assert (offer.instance_type, offer.gpu_name, offer.gpu_count, offer.region) == (
        "RTX-A4000 (1 GPU)", "RTX-A4000", 1, "")
    assert (offer.price_hour, offer.currency, offer.availability) == (Decimal("0.58"), "USD", "unknown")
    assert default_gpu_resolver().resolve(offer.gpu_name) == "rtx-a4000"


def test_non_gpu_resources_are_listed_as_rejected_not_guessed():
    result = client(serve([entry(), entry(id=11, name="Cloud-Storage", value=0.0001)])).fetch()
    assert [o.gpu_name for o in result.offers] == ["RTX-A4000"]
    assert result.rejected == ["Cloud-Storage: not a GPU the catalog knows (the pricebook prices every resource)"]


def test_discounted_value_is_the_price_charged():
    [offer] = client(serve([entry(value=0.5, original_value=0.58, discount_applied=True)])).fetch().offers
    assert offer.price_hour == Decimal("0.5")


def test_absurd_prices_are_rejected():
    result = client(serve([entry(), entry(name="H100-80G-PCIe", value=0),
                           entry(name="A100-80G-PCIe", value="x")])).fetch()
    assert sorted(r.split(":")[0] for r in result.rejected) == ["A100-80G-PCIe", "H100-80G-PCIe"]


@pytest.mark.parametrize("payload, match", [
    ([], "empty"),
    ({"status": True, "data": [entry()]}, "not a list"),
    ([{k: v for k, v in entry().items() if k != "value"}], "value"),
    ([{"id": 1, "resource": "RTX-A4000", "value": 1}], "name"),
    ([entry(name="Cloud-Storage")], "no GPU"),
])
def test_missing_renamed_or_empty_is_a_schema_error(payload, match):
    with pytest.raises(SchemaScrapeError, match=match):
        client(serve(payload)).fetch()


@pytest.mark.parametrize("body", [b"", b"<html>bad gateway</html>", b'[{"id": 10, "name": "RTX'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client(serve(body=body)).fetch()
