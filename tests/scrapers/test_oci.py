"""Oracle price list client: the recorded (trimmed, real) answer replayed by exact URL; edge cases from builders."""

import json
from decimal import Decimal

import httpx
import pytest

from scrapers import oci, registry
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client


def product(part="B98415", name="Oracle Cloud Infrastructure - Compute - GPU - H100", metric="GPU Per Hour",
            category="Compute - GPU", value=10, currency="USD", model="PAY_AS_YOU_GO"):
    # The item shape of the recorded answer (recorded/oci/products_usd.json).
    return {"partNumber": part, "displayName": name, "metricName": metric, "serviceCategory": category,
            "currencyCodeLocalizations": [{"currencyCode": currency, "prices": [{"model": model, "value": value}]}]}


def body(*items, **extra):
    return {"lastUpdated": "2026-08-14T09:09:55.872Z", "items": list(items), **extra}


def client_for(handler):
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == oci.PRODUCTS_URL, f"unexpected request {request.url}"
        return handler(request)

    return oci.OciPriceListClient(build_client(transport=httpx.MockTransport(route)))


def serve_json(payload):
    return lambda request: httpx.Response(200, content=json.dumps(payload).encode())


def test_recorded_price_list_gives_the_shapes_each_part_prices_and_fences_out_non_rentals():
    result = registry.make_client("oci", offline=True).fetch()
    names = {o.instance_type: o for o in result.offers}
    # 29 'GPU Per Hour' rows - 8 AI Enterprise licences - 3 Cloud@Customer rows = 18 rentals, of which 7 are parts no
    # source ties to a shape (X7 twice, V2, E3, E4, H100T, "A100 - v2"); the other 11 price 13 shapes (A10: three).
    assert len(names) == 13 and len(result.rejected) == 7
    assert not any("Compute" in name for name in names)  # a per-GPU price is never stored as a machine
    h100 = names["BM.GPU.H100.8"]
    # Oracle's $10 per H100-hour (part B98415) times the shape's eight GPUs
    assert (h100.gpu_name, h100.gpu_count, h100.price_hour, h100.region) == ("H100", 8, Decimal("80"), "global")
    a10 = {name: (o.gpu_count, o.price_hour) for name, o in names.items() if o.gpu_name == "A10"}
    assert a10 == {"VM.GPU.A10.1": (1, Decimal("2")), "VM.GPU.A10.2": (2, Decimal("4")),
                   "BM.GPU.A10.4": (4, Decimal("8"))}  # "Compute  - GPU - A10": Oracle's double space read
    assert not any("AI Enterprise" in name or "Cloud@Customer" in name or "VMware" in name for name in names)
    assert result.capabilities == []  # the trimmed recording has no OKE part


def test_every_shape_the_client_stores_is_one_the_skypilot_catalog_prices_alike():
    """The part -> shape table (oci.SHAPES) agrees with SkyPilot's OCI catalog, built from the same price list: every
    shape is in the catalog with the same GPU count and the same price per GPU."""
    catalog = {(o.instance_type, o.gpu_count, o.price_hour / o.gpu_count)
               for o in registry.make_client("skypilot-oci", offline=True).fetch().offers}
    for offer in registry.make_client("oci", offline=True).fetch().offers:
        assert (offer.instance_type, offer.gpu_count, offer.price_hour / offer.gpu_count) in catalog, offer


def test_gpu_labels_are_oracles_own_and_parts_without_a_known_shape_are_reported_not_guessed():
    from scrapers.normalize import default_gpu_resolver

    result = registry.make_client("oci", offline=True).fetch()
    resolved = {o.gpu_name: default_gpu_resolver().resolve(o.gpu_name) for o in result.offers}
    assert resolved["MI300X"] == "mi300x" and resolved["H200"] == "h200" and resolved["L40S"] == "l40s"
    assert None not in resolved.values()
    for label in ("'H100T'", "'X7'", "'A100 - v2'", "'E4'"):
        assert any(label in reason and "no shape" in reason for reason in result.rejected), label


def test_a_part_that_names_another_gpu_than_its_shapes_is_refused_not_stored():
    renamed = product(name="Oracle Cloud Infrastructure - Compute - GPU - H200")  # part B98415 is the H100's
    result = client_for(serve_json(body(renamed, product("B109485", "OCI - Compute - GPU - MI300X", value=6)))).fetch()
    assert [o.instance_type for o in result.offers] == ["BM.GPU.MI300X.8"]
    assert len(result.rejected) == 1 and "B98415" in result.rejected[0] and "'H200'" in result.rejected[0]


def test_oke_enhanced_cluster_part_becomes_the_control_plane_fee():
    oke = product("B96545", "OCI Kubernetes Engine - Enhanced Cluster", "Cluster Per Hour",
                  "Container Engine for Kubernetes", 0.1)
    result = client_for(serve_json(body(product(), oke))).fetch()
    (fee,) = result.capabilities
    assert (fee.key, fee.value, fee.amount, fee.currency) == ("control_plane_fee", "paid", Decimal("0.1"), "USD")
    assert fee.source_url.endswith("partNumber=B96545")
    assert [o.instance_type for o in result.offers] == ["BM.GPU.H100.8"]


@pytest.mark.parametrize("bad", [
    product(value=0), product(value=-3), product(value="10"), product(value=None), product(currency="EUR"),
    product(model="ANNUAL_COMMIT"),
])
def test_absurd_or_ambiguous_prices_are_rejected_with_a_reason(bad):
    good = product("B109485", "OCI - Compute - GPU - MI300X", value=6)
    result = client_for(serve_json(body(bad, good))).fetch()
    assert [o.instance_type for o in result.offers] == ["BM.GPU.MI300X.8"]
    assert len(result.rejected) == 1 and "B98415" in result.rejected[0]


def test_missing_field_is_named():
    broken = product()
    del broken["metricName"]
    with pytest.raises(SchemaScrapeError, match="metricName"):
        client_for(serve_json(body(broken))).fetch()


@pytest.mark.parametrize("payload", [
    body(), {"products": []}, {"items": {}},
    body(product(metric="OCPU Per Hour")),  # items, but no GPU rental row at all
    body(product(), hasMore=True),  # a paged answer we cannot finish reading
])
def test_empty_renamed_gpu_less_or_paged_answer_raises(payload):
    with pytest.raises(SchemaScrapeError):
        client_for(serve_json(payload)).fetch()


@pytest.mark.parametrize("content", [b"", b"<html>maintenance</html>", b'{"items": [{"partNumber": "B9'])
def test_truncated_or_non_json_body_raises(content):
    with pytest.raises(SchemaScrapeError):
        client_for(lambda request: httpx.Response(200, content=content)).fetch()


def test_offers_carry_the_price_lists_own_date():
    from datetime import UTC, datetime

    from scrapers import registry

    offers = registry.make_client("oci", offline=True).fetch().offers
    assert offers and {offer.price_as_of for offer in offers} == {
        datetime(2026, 8, 14, 9, 9, 55, 872000, tzinfo=UTC)}
