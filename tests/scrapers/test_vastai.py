"""Vast.ai live offers aggregated per GPU configuration and location: replay, aggregation rules, failures."""

from decimal import Decimal

import httpx
import pytest

from scrapers import vastai
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client

RECORDED = vastai.VastAiClient.recorded()[vastai.URL]


def client(handler=None):
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == vastai.URL, f"unexpected request {request.url}"
        return handler(request) if handler else httpx.Response(200, content=RECORDED.read_bytes())

    return vastai.VastAiClient(build_client(transport=httpx.MockTransport(route)))


def serve(payload=None, status=200, body=None, headers=None):
    if body is not None:
        return lambda request: httpx.Response(status, content=body, headers=headers or {})
    return lambda request: httpx.Response(status, json=payload, headers=headers or {})


def offer(id_=1, gpu="RTX 4090", n=1, price=0.4, bid=0.2, where="Texas, US", rentable=True, cores=16):
    return {"id": id_, "gpu_name": gpu, "num_gpus": n, "gpu_ram": 24564, "dph_base": price, "min_bid": bid,
            "geolocation": where, "rentable": rentable, "cpu_cores": 32, "cpu_cores_effective": cores,
            "cpu_ram": 65536}


def test_recorded_offer_is_one_configuration_marked_by_its_rentable_flag():
    [item] = client().fetch().offers
    assert (item.instance_type, item.region, item.gpu_name) == ("1x RTX 5090", "Ontario, CA, NA", "RTX 5090")
    assert item.gpu_memory_gb == Decimal("31.8")  # 32607 MB per GPU
    # The recorded slot has rentable=false: listed, but nothing to rent right now.
    assert (item.availability, item.available_count) == ("unavailable", 0)
    assert item.price_hour == Decimal("0.10533333333333333")


def test_slots_of_one_configuration_aggregate_to_the_cheapest_rentable():
    payload = {"offers": [offer(1, price=0.5, bid=0.3), offer(2, price=0.4, bid=0.25, cores=8),
                          offer(3, price=0.1, bid=0.05, rentable=False), offer(4, n=2, price=0.9),
                          offer(5, where="Bavaria, DE")]}
    offers = {(o.instance_type, o.region): o for o in client(serve(payload)).fetch().offers}
    assert set(offers) == {("1x RTX 4090", "Texas, US, NA"), ("2x RTX 4090", "Texas, US, NA"),
                           ("1x RTX 4090", "Bavaria, DE, EU")}
    texas = offers[("1x RTX 4090", "Texas, US, NA")]
    assert (texas.price_hour, texas.spot_price_hour, texas.available_count) == (Decimal("0.4"), Decimal("0.25"), 2)
    assert texas.vcpus == 8 and texas.ram_gb == Decimal("16")  # the cheapest slot's share: 64 GB x 8/32 cores
    assert texas.availability == "available"


def test_location_without_a_known_country_is_kept_as_given():
    [item] = client(serve({"offers": [offer(where="Somewhere")]})).fetch().offers
    assert item.region == "Somewhere"


def test_absurd_slots_are_rejected_with_reasons():
    payload = {"offers": [offer(1), offer(2, price=0), offer(3, n=0), offer(4, gpu=""), offer(5, price="cheap")]}
    result = client(serve(payload)).fetch()
    assert len(result.offers) == 1 and result.offers[0].available_count == 1
    assert sorted(r.split(":")[0] for r in result.rejected) == ["offer 2", "offer 3", "offer 4", "offer 5"]


@pytest.mark.parametrize("payload, match", [
    ({"offers": []}, "offers"),
    ({"bundles": [offer()]}, "offers"),
    ({"offers": [{k: v for k, v in offer().items() if k != "dph_base"}]}, "dph_base"),
    ({"offers": [{k: v for k, v in offer().items() if k != "rentable"}]}, "rentable"),
    ({"offers": [offer(price=-1)]}, "rejected"),
])
def test_missing_renamed_or_empty_is_a_schema_error(payload, match):
    with pytest.raises(SchemaScrapeError, match=match):
        client(serve(payload)).fetch()


@pytest.mark.parametrize("body", [b"", b"<html>cloudflare</html>", b'{"offers": [{"id": 1'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client(serve(body=body)).fetch()
