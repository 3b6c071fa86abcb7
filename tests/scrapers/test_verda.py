"""Verda instance types + spot stock: OAuth token exchange, recorded replay, and every way the API can fail."""

import json
import re
from decimal import Decimal

import httpx
import pytest

from scrapers import verda
from scrapers.base import AuthScrapeError, NotConfiguredError, SchemaScrapeError, TransientScrapeError
from scrapers.http import OFFLINE_API_KEY, build_client
from scrapers.normalize import default_gpu_resolver
from tests.scrapers.replay import overridden, replayed

ROUTES = verda.VerdaClient.recorded()
TOKEN = {"access_token": "at-1", "refresh_token": "rt-1", "scope": "cloud-api-v1", "token_type": "Bearer",
         "expires_in": 3600}


def client(overrides=None, seen=None, secret="secret", client_id="id"):
    """Token builder + recorded answers by exact URL; `overrides` maps a URL to a payload, Response or exception."""
    overrides = overrides or {}

    def route(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if seen is not None:
            seen.append(request)
        override = overridden(overrides, url)
        if override is not None:
            return override
        if url == verda.TOKEN_URL:
            assert request.method == "POST"
            return httpx.Response(200, json=TOKEN)
        assert request.method == "GET", f"unexpected {request.method} {url}"
        assert request.headers["Authorization"] == "Bearer at-1"
        return replayed(ROUTES, url)

    return verda.VerdaClient(build_client(transport=httpx.MockTransport(route)), api_key=secret, client_id=client_id)


def kind(**changes):
    base = json.loads(ROUTES[verda.TYPES_URL].read_text())[0]
    return {**base, **changes}


def test_recorded_types_give_on_demand_offers_and_spot_offers_where_stocked():
    result = client().fetch()
    offers = {(o.instance_type, o.region): o for o in result.offers}
    assert not result.rejected
    assert set(offers) == {
        ("1H100.80S.30V", ""), ("1H100.80S.30V (spot)", ""),
        ("2A6000.20V", ""), ("2A6000.20V (spot)", "FIN-01"),
        ("1V100.6V", ""), ("1V100.6V (spot)", "FIN-01"),
    }  # the CPU node is skipped
    h100 = offers[("1H100.80S.30V", "")]
    assert (h100.gpu_name, h100.gpu_count, h100.gpu_memory_gb) == ("H100 SXM5 80GB", 1, Decimal("80"))
    assert (h100.price_hour, h100.spot_price_hour, h100.availability) == (Decimal("3.95"), None, "unknown")
    assert (h100.vcpus, h100.ram_gb, h100.currency) == (30, 120, "USD")
    # H100 is not in the recorded spot stock: its spot offer is kept, unavailable, without a region.
    h100_spot = offers[("1H100.80S.30V (spot)", "")]
    assert (h100_spot.price_hour, h100_spot.spot_price_hour, h100_spot.availability) == (
        None, Decimal("1.70"), "unavailable")
    a6000 = offers[("2A6000.20V (spot)", "FIN-01")]
    assert (a6000.gpu_name, a6000.gpu_count, a6000.gpu_memory_gb) == ("RTX A6000 48GB", 2, Decimal("48"))
    assert (a6000.availability, a6000.spot_price_hour) == ("available", Decimal("0.70"))


def test_recorded_gpu_names_resolve_to_the_catalog():
    resolver = default_gpu_resolver()
    for offer in client().fetch().offers:
        assert resolver.resolve(offer.gpu_name, offer.gpu_memory_gb) is not None, offer.gpu_name


def test_token_is_exchanged_once_with_client_credentials_through_the_same_client():
    seen = []
    client(seen=seen).fetch()
    assert seen[0].method == "POST" and str(seen[0].url) == verda.TOKEN_URL
    assert json.loads(seen[0].content) == {"grant_type": "client_credentials", "client_id": "id",
                                           "client_secret": "secret"}
    assert [r.method for r in seen[1:]] == ["GET"] * 3


def test_offline_replay_skips_the_token_exchange():
    seen = []
    verda.VerdaClient(build_client(transport=httpx.MockTransport(
        lambda request: seen.append(request) or httpx.Response(200, content=ROUTES[str(request.url)].read_bytes())
    )), api_key=OFFLINE_API_KEY).fetch()
    assert verda.TOKEN_URL not in {str(r.url) for r in seen}


def test_missing_client_id_is_not_configured():
    with pytest.raises(NotConfiguredError, match="VERDA_CLIENT_ID"):
        client(client_id="").fetch()


@pytest.mark.parametrize("status", [401, 403])
def test_refused_client_credentials_fail_fast(status):
    with pytest.raises(AuthScrapeError):
        client({verda.TOKEN_URL: httpx.Response(status)}).fetch()


@pytest.mark.parametrize("answer", [{"token": "x"}, {"access_token": ""}, []])
def test_token_answer_without_access_token_is_a_schema_error(answer):
    with pytest.raises(SchemaScrapeError, match="access_token"):
        client({verda.TOKEN_URL: answer}).fetch()


def test_token_endpoint_outage_is_transient():
    with pytest.raises(TransientScrapeError):
        client({verda.TOKEN_URL: httpx.Response(503)}).fetch()


def test_spot_stock_in_several_locations_gives_one_offer_each():
    stock = [{"location_code": "FIN-01", "availabilities": ["1H100.80S.30V"]},
             {"location_code": "FIN-02", "availabilities": ["1H100.80S.30V"]}]
    offers = client({verda.SPOT_AVAILABILITY_URL: stock, verda.TYPES_URL: [kind()]}).fetch().offers
    assert sorted((o.instance_type, o.region, o.availability) for o in offers) == [
        ("1H100.80S.30V", "", "unknown"), ("1H100.80S.30V (spot)", "FIN-01", "available"),
        ("1H100.80S.30V (spot)", "FIN-02", "available")]


def test_absurd_rows_are_rejected_with_reasons():
    types = [kind(), kind(instance_type="free", price_per_hour="0"),
             kind(instance_type="nan", spot_price="abc"),
             kind(instance_type="bad-desc", gpu={"description": "H100 SXM5 80GB", "number_of_gpus": 1}),
             kind(instance_type="mismatch", gpu={"description": "2x H100 SXM5 80GB", "number_of_gpus": 1}),
             kind(instance_type="nomem", gpu_memory={"description": "", "size_in_gigabytes": 0})]
    result = client({verda.TYPES_URL: types}).fetch()
    assert sorted(r.split(":")[0] for r in result.rejected) == ["bad-desc", "free", "mismatch", "nan", "nomem"]
    assert {o.instance_type for o in result.offers} == {"1H100.80S.30V", "1H100.80S.30V (spot)"}


def test_a_price_in_another_currency_is_a_schema_error():
    with pytest.raises(SchemaScrapeError, match="eur"):
        client({verda.TYPES_URL: [kind(currency="eur")]}).fetch()


@pytest.mark.parametrize("missing", ["price_per_hour", "spot_price", "gpu", "currency"])
def test_missing_field_is_a_schema_error_naming_it(missing):
    row = kind()
    del row[missing]
    with pytest.raises(SchemaScrapeError, match=missing):
        client({verda.TYPES_URL: [row]}).fetch()


@pytest.mark.parametrize("url, payload, says", [
    (verda.TYPES_URL, [], "not a list, or empty"),
    (verda.TYPES_URL, {"instance_types": []}, "not a list, or empty"),
    (verda.TYPES_URL, ["1H100.80S.30V"], "an entry is not an object"),
    (verda.TYPES_URL, [kind(gpu={"description": "", "number_of_gpus": 0})], "no GPU instance types"),
    (verda.LOCATIONS_URL, [], "not a list, or empty"),
    (verda.LOCATIONS_URL, [{"location": "FIN-01"}], "lacks code"),
    (verda.SPOT_AVAILABILITY_URL, [], "not a list, or empty"),
    (verda.SPOT_AVAILABILITY_URL, [{"location": "FIN-01", "availabilities": []}], "lacks location_code"),
    (verda.SPOT_AVAILABILITY_URL, [{"location_code": "FIN-01", "availabilities": "1H100.80S.30V"}],
     "availabilities of 'FIN-01' is not a list"),
])
def test_empty_or_renamed_lists_raise_saying_what_is_wrong(url, payload, says):
    with pytest.raises(SchemaScrapeError, match=re.escape(says)):
        client({url: payload}).fetch()


@pytest.mark.parametrize("body", [b"", b"<html>maintenance</html>", b'[{"instance_type": "1H1'])
def test_truncated_or_non_json_body_raises(body):
    with pytest.raises(SchemaScrapeError):
        client({verda.TYPES_URL: httpx.Response(200, content=body)}).fetch()


@pytest.mark.parametrize("status", [401, 403])
def test_refused_token_on_a_list_fails_fast(status):
    with pytest.raises(AuthScrapeError):
        client({verda.LOCATIONS_URL: httpx.Response(status)}).fetch()
