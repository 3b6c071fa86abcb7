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


def test_recorded_price_list_gives_one_gpu_offers_and_fences_out_non_rentals():
    result = registry.make_client("oci", offline=True).fetch()
    names = {o.instance_type: o for o in result.offers}
    # 29 'GPU Per Hour' rows - 8 AI Enterprise licences - 3 Cloud@Customer rows = 18 rentals, of which 7 carry a
    # label the GPU table does not know (X7 twice, V2, E3, E4, H100T, "A100 - v2").
    assert len(names) == 11 and len(result.rejected) == 7
    h100 = names["Oracle Cloud Infrastructure - Compute - GPU - H100"]
    assert (h100.gpu_name, h100.gpu_count, h100.price_hour, h100.region) == ("H100", 1, Decimal("10"), "global")
    assert names["Compute - GPU - A10"].gpu_name == "A10"  # Oracle's double space collapsed
    assert not any("AI Enterprise" in name or "Cloud@Customer" in name or "VMware" in name for name in names)
    assert result.capabilities == []  # the trimmed recording has no OKE part


def test_gpu_labels_are_oracles_own_and_unknown_ones_are_reported_not_guessed():
    from scrapers.normalize import default_gpu_resolver

    result = registry.make_client("oci", offline=True).fetch()
    resolved = {o.gpu_name: default_gpu_resolver().resolve(o.gpu_name) for o in result.offers}
    assert resolved["MI300X"] == "mi300x" and resolved["H200"] == "h200" and resolved["L40S"] == "l40s"
    assert None not in resolved.values()
    for label in ("'H100T'", "'X7'", "'A100 - v2'", "'E4'"):
        assert any(label in reason for reason in result.rejected), label


def test_oke_enhanced_cluster_part_becomes_the_control_plane_fee():
    oke = product("B96545", "OCI Kubernetes Engine - Enhanced Cluster", "Cluster Per Hour",
                  "Container Engine for Kubernetes", 0.1)
    result = client_for(serve_json(body(product(), oke))).fetch()
    (fee,) = result.capabilities
    assert (fee.key, fee.value, fee.amount, fee.currency) == ("control_plane_fee", "paid", Decimal("0.1"), "USD")
    assert fee.source_url.endswith("partNumber=B96545")
    assert len(result.offers) == 1


@pytest.mark.parametrize("bad", [
    product(value=0), product(value=-3), product(value="10"), product(value=None), product(currency="EUR"),
    product(model="ANNUAL_COMMIT"),
])
def test_absurd_or_ambiguous_prices_are_rejected_with_a_reason(bad):
    good = product("B109485", "OCI - Compute - GPU - MI300X", value=6)
    result = client_for(serve_json(body(bad, good))).fetch()
    assert [o.gpu_name for o in result.offers] == ["MI300X"]
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
