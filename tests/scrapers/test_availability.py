"""The availability polls of every polled source: recorded real shapes replayed, what each stock answer means, and
the same failure matrix as the price clients (timeouts, 429 with Retry-After, 5xx, refused keys, truncated bodies,
renamed fields, empty answers, a failing later page). A failure always raises before any state is returned, so a
broken answer can never become "sold out"."""

import copy
import functools
import json

import httpx
import pytest

from scrapers import digitalocean, lambdalabs, linode, registry, runpod, vastai, verda, vultr
from scrapers.availability import ScrapedAvailability
from scrapers.base import AuthScrapeError, SchemaScrapeError, ScrapeError, TransientScrapeError
from scrapers.http import OFFLINE_API_KEY, build_client
from tests.scrapers.replay import answer


@pytest.fixture(autouse=True)
def verda_client_id(monkeypatch):
    monkeypatch.setenv("VERDA_CLIENT_ID", "test-client")


def recorded_json(routes, url):
    return json.loads(routes[url].read_bytes())


LINODE_ROUTES = linode.LinodeClient.recorded_availability()
LINODE_URL = linode.page_url(linode.AVAILABILITY_URL, 1)
VULTR_ROUTES = vultr.VultrClient.recorded_availability()
VULTR_AMS = vultr.availability_url("ams", "vcg")
VERDA_SPOT = recorded_json(verda.VerdaClient.recorded_availability(), verda.SPOT_AVAILABILITY_URL)
RUNPOD_RECORDED = recorded_json(runpod.RunPodClient.recorded(), runpod.URL)
VERDA_TOKEN = {verda.TOKEN_URL: {"access_token": "t", "token_type": "Bearer", "expires_in": 3600}}

# What each source is asked about: keys of offers the service would store for it.
KNOWN = {
    "linode": {("g1-gpu-rtx6000-1", ""), ("g1-gpu-rtx6000-2", "")},
    "vultr": {("vcg-a100-1c-6g-4vram", "ams"), ("vc2-1c-1gb", "ams")},
    "verda": {("1A100.22V", ""), ("1A100.22V (spot)", "FIN-01"), ("1A100.22V (spot)", "ICE-01")},
    "lambdalabs": {("gpu_1x_a100", "us-west-1"), ("gpu_1x_a100", "us-east-1")},
    "runpod": {("NVIDIA A100 80GB PCIe (secure cloud)", "")},
    "vastai": {("1x RTX 5090", "Ontario, CA, NA"), ("1x RTX 5090", "Texas, US, NA")},
    "digitalocean": {("gpu-h100x8-640gb", "nyc2"), ("gpu-h100x8-640gb", "ams3")},
}


def runpod_with_stock(status):
    payload = copy.deepcopy(RUNPOD_RECORDED)
    payload["data"]["gpuTypes"][0]["lowestPrice"]["stockStatus"] = status
    return payload


# Answers each source's poll replays in the matrix below: its recordings, plus what no recording has (Verda's token
# exchange and on-demand list, built from the recorded spot list's shape; RunPod's recording lacks stockStatus).
def overrides_for(slug):
    if slug == "verda":
        return {**VERDA_TOKEN, verda.ON_DEMAND_AVAILABILITY_URL: VERDA_SPOT}
    if slug == "runpod":
        return {runpod.URL: runpod_with_stock("Low")}
    return {}


def poll(slug, overrides=None, known=None, api_key="test-key"):
    routes = registry.SOURCES[slug].recorded_availability()
    extra = {**overrides_for(slug), **(overrides or {})}
    client = registry.SOURCES[slug](
        build_client(transport=httpx.MockTransport(lambda request: answer(routes, extra, str(request.url)))),
        api_key=api_key)
    return client.fetch_availability(KNOWN[slug] if known is None else known)


def states(result):
    return {(s.instance_type, s.region): (s.availability, s.available_count) for s in result.states}


def test_every_polled_source_is_registered_scheduled_and_recorded():
    from comparator.celery import AVAILABILITY_SOURCES, BEAT_SCHEDULE

    assert set(registry.AVAILABILITY_SOURCES) == set(KNOWN) == set(AVAILABILITY_SOURCES)
    for slug in registry.AVAILABILITY_SOURCES:
        assert BEAT_SCHEDULE[f"poll-availability-{slug}"]["args"] == [slug]
        for path in registry.SOURCES[slug].recorded_availability().values():
            assert path.is_file()


# --- what each recorded shape says ----------------------------------------------------------------------------

def test_linode_recorded_rows_sold_out_in_every_listed_region():
    assert states(poll("linode")) == {("g1-gpu-rtx6000-1", ""): ("unavailable", None),
                                      ("g1-gpu-rtx6000-2", ""): ("unavailable", None),
                                      ("g1-gpu-rtx6000-3", ""): ("unavailable", None)}


def test_linode_plan_available_when_any_region_has_it():
    page = recorded_json(LINODE_ROUTES, LINODE_URL)
    page["data"].append({"region": "us-east", "plan": "g1-gpu-rtx6000-1", "available": True})
    assert states(poll("linode", {LINODE_URL: page}))[("g1-gpu-rtx6000-1", "")] == ("available", None)


def test_linode_reads_every_page_and_a_failing_later_page_fails_the_poll():
    first = recorded_json(LINODE_ROUTES, LINODE_URL)
    first["pages"] = 2
    second = {"data": [{"region": "us-east", "plan": "g1-gpu-rtx6000-2", "available": True}], "page": 2, "pages": 2}
    page2 = linode.page_url(linode.AVAILABILITY_URL, 2)
    assert states(poll("linode", {LINODE_URL: first, page2: second}))[("g1-gpu-rtx6000-2", "")][0] == "available"
    with pytest.raises(TransientScrapeError):
        poll("linode", {LINODE_URL: first, page2: httpx.Response(503)})


def test_vultr_plan_missing_from_its_regions_list_is_sold_out_there():
    # The recorded documentation example lists CPU plans only: the stored A100 fraction is not deployable in ams.
    # (A CPU plan id among the keys, as below, is not a GPU offer and is not asked about.)
    # CPU plans (vc2-) are never asked about: we store GPU offers only.
    assert states(poll("vultr")) == {("vcg-a100-1c-6g-4vram", "ams"): ("unavailable", None)}


def test_vultr_asks_only_the_regions_and_plan_types_we_store():
    asked = []

    def handler(request):
        asked.append(str(request.url))
        return httpx.Response(200, json={"available_plans": ["vbm-112c-2048gb-8-h100-gpu"]})

    client = vultr.VultrClient(build_client(transport=httpx.MockTransport(handler)))
    result = client.fetch_availability({("vbm-112c-2048gb-8-h100-gpu", "ewr"), ("vcg-x", "ewr"), ("vcg-y", "")})
    assert sorted(asked) == [vultr.availability_url("ewr", "vbm"), vultr.availability_url("ewr", "vcg")]
    assert states(result) == {("vbm-112c-2048gb-8-h100-gpu", "ewr"): ("available", None),
                              ("vcg-x", "ewr"): ("unavailable", None)}


def test_verda_on_demand_and_spot_per_location():
    on_demand = [{"location_code": "FIN-02", "availabilities": ["1A100.22V"]}]
    result = poll("verda", {verda.ON_DEMAND_AVAILABILITY_URL: on_demand})
    assert states(result) == {("1A100.22V", ""): ("available", None),
                              ("1A100.22V (spot)", "FIN-01"): ("available", None),  # recorded spot list
                              ("1A100.22V (spot)", "ICE-01"): ("unavailable", None)}
    sold_out = poll("verda", {verda.ON_DEMAND_AVAILABILITY_URL: [{"location_code": "FIN-02", "availabilities": []}]})
    assert states(sold_out)[("1A100.22V", "")] == ("unavailable", None)


def test_verda_offline_replay_states_spot_stock_only():
    result = poll("verda", api_key=OFFLINE_API_KEY)
    assert set(states(result)) == {("1A100.22V (spot)", "FIN-01"), ("1A100.22V (spot)", "ICE-01")}


def test_lambda_region_without_capacity_is_sold_out_and_a_sold_out_type_everywhere():
    assert states(poll("lambdalabs")) == {("gpu_1x_a100", "us-west-1"): ("available", None),
                                          ("gpu_1x_a100", "us-east-1"): ("unavailable", None)}
    routes = lambdalabs.LambdaClient.recorded_availability()
    payload = recorded_json(routes, lambdalabs.URL)
    payload["data"]["gpu_1x_a100"]["regions_with_capacity_available"] = []
    assert {state for state, _ in states(poll("lambdalabs", {lambdalabs.URL: payload})).values()} == {"unavailable"}


@pytest.mark.parametrize("status, expected", [("High", "available"), ("Medium", "limited"), ("Low", "limited"),
                                              (None, "unavailable")])
def test_runpod_stock_status(status, expected):
    result = poll("runpod", {runpod.URL: runpod_with_stock(status)})
    assert states(result)[("NVIDIA A100 80GB PCIe (secure cloud)", "")][0] == expected


def test_runpod_recording_without_stock_status_states_nothing_and_is_refused():
    with pytest.raises(SchemaScrapeError, match="states no stock"):
        poll("runpod", {runpod.URL: RUNPOD_RECORDED})


def test_vastai_counts_rentable_slots_and_a_region_with_none_left_is_sold_out():
    routes = vastai.VastAiClient.recorded_availability()
    payload = recorded_json(routes, vastai.URL)
    slot = payload["offers"][0]
    payload["offers"] = [slot, {**slot, "id": 2, "rentable": True}, {**slot, "id": 3, "rentable": True}]
    result = states(poll("vastai", {vastai.URL: payload}))
    assert result[("1x RTX 5090", "Ontario, CA, NA")] == ("available", 2)
    assert result[("1x RTX 5090", "Texas, US, NA")] == ("unavailable", None)


def test_digitalocean_region_no_longer_listed_is_sold_out():
    result = states(poll("digitalocean"))
    assert result[("gpu-h100x8-640gb", "nyc2")][0] in {"available", "unavailable"}
    listed = {s for s in result if s[0] == "gpu-h100x8-640gb"}
    assert ("gpu-h100x8-640gb", "ams3") in listed  # stored but not in `regions`: stated, as sold out
    assert result[("gpu-h100x8-640gb", "ams3")] == ("unavailable", None)


def test_states_never_say_unknown():
    for slug in registry.AVAILABILITY_SOURCES:
        assert all(isinstance(s, ScrapedAvailability) and s.availability in {"available", "limited", "unavailable"}
                   for s in poll(slug).states), slug


# --- the failure matrix ----------------------------------------------------------------------------------------

POLLED = sorted(registry.AVAILABILITY_SOURCES)


def failing(slug, handler):
    client = functools.partial(registry.SOURCES[slug], api_key="test-key")(
        build_client(transport=httpx.MockTransport(handler)))
    return lambda: client.fetch_availability(KNOWN[slug])


def status_answer(status, body=b"", headers=None):
    return lambda request: httpx.Response(status, content=body, headers=headers or {})


@pytest.mark.parametrize("slug", POLLED)
@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_transient(slug, status):
    with pytest.raises(TransientScrapeError):
        failing(slug, status_answer(status, b"oops"))()


@pytest.mark.parametrize("slug", POLLED)
def test_429_carries_retry_after(slug):
    with pytest.raises(TransientScrapeError) as caught:
        failing(slug, status_answer(429, b"slow down", {"Retry-After": "9"}))()
    assert caught.value.retry_after == 9


@pytest.mark.parametrize("slug", POLLED)
@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_fail_fast(slug, status):
    with pytest.raises(AuthScrapeError):
        failing(slug, status_answer(status, b"no"))()


@pytest.mark.parametrize("slug", POLLED)
@pytest.mark.parametrize("error", [httpx.ReadTimeout, httpx.ConnectError])
def test_timeouts_and_refused_connections_are_transient(slug, error):
    def fail(request):
        raise error("down", request=request)

    with pytest.raises(TransientScrapeError):
        failing(slug, fail)()


def _every_stock_url_answers(slug, body):
    """Token exchanges succeed (so the stock request itself is what fails); every other URL answers `body`."""
    def handler(request):
        if str(request.url) == verda.TOKEN_URL:
            return httpx.Response(200, json=VERDA_TOKEN[verda.TOKEN_URL])
        return httpx.Response(200, content=body)
    return handler


@pytest.mark.parametrize("slug", POLLED)
def test_truncated_answer_is_refused(slug):
    routes = registry.SOURCES[slug].recorded_availability()
    body = next(iter(routes.values())).read_bytes()
    with pytest.raises(SchemaScrapeError):
        failing(slug, _every_stock_url_answers(slug, body[: len(body) // 2]))()


@pytest.mark.parametrize("slug", POLLED)
@pytest.mark.parametrize("body", [b"{}", b"[]", b'{"data": [], "page": 1, "pages": 1}', b'{"available_plans": []}',
                                  b'{"offers": []}', b'{"data": {"gpuTypes": []}}', b'{"sizes": [], "links": {}}'])
def test_empty_answer_is_refused(slug, body):
    with pytest.raises(SchemaScrapeError):
        failing(slug, _every_stock_url_answers(slug, body))()


RENAMED = {
    "linode": (LINODE_URL, lambda p: {**p, "data": [{"region": r["region"], "plan_id": r["plan"],
                                                      "available": r["available"]} for r in p["data"]]}),
    "vultr": (VULTR_AMS, lambda p: {"plans": p["available_plans"]}),
    "verda": (verda.SPOT_AVAILABILITY_URL, lambda p: [{"location": e["location_code"],
                                                        "availabilities": e["availabilities"]} for e in p]),
    "lambdalabs": (lambdalabs.URL, lambda p: {"instance_types": p["data"]}),
    "runpod": (runpod.URL, lambda p: {"data": {"gpu_types": p["data"]["gpuTypes"]}}),
    "vastai": (vastai.URL, lambda p: {"bundles": p["offers"]}),
    "digitalocean": (digitalocean.SIZES_URL, lambda p: {"droplet_sizes": p["sizes"], "links": {}}),
}


@pytest.mark.parametrize("slug", POLLED)
def test_renamed_fields_are_refused(slug):
    url, rename = RENAMED[slug]
    routes = registry.SOURCES[slug].recorded_availability()
    base = overrides_for(slug).get(url)
    payload = base if base is not None else recorded_json(routes, url)
    with pytest.raises(SchemaScrapeError):
        poll(slug, {url: rename(payload)})


@pytest.mark.parametrize("slug", POLLED)
def test_a_failure_raises_a_scrape_error_never_returns_states(slug):
    # Whatever the failure, nothing is returned: the service only ever sees states from a whole, valid answer.
    with pytest.raises(ScrapeError):
        failing(slug, status_answer(200, b"<html>maintenance</html>"))()
