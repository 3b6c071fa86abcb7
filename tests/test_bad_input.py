"""Bad input is a 400 (JSON on the API), never a 500 (issue 16, item 10): every endpoint and page, every parameter it
reads, with each class of hostile value: non-ASCII digits (which Python's int() reads), empty list items, huge
values, and for the one JSON body (advise) deep nesting. Every parameter list is derived from the code (the API
classes' query_parameters, the OfferFilterSet, the advisor's form), so a new parameter is covered by itself."""

import json

import pytest
from django.core.cache import cache
from django.test import Client

from advisor.forms import AdvisorForm
from providers import api
from providers.filters import OfferFilterSet
from tests.api.conftest import world  # noqa: F401 - the small world of offers the pages and the API show

pytestmark = pytest.mark.django_db

# One value per class: Unicode digits (Arabic-Indic one, superscript two, full-width one), empty list items, huge.
HOSTILE = {
    "arabic-indic-digit": "\u0661",
    "superscript-digit": "\u00b2",
    "fullwidth-digit": "\uff11",
    "empty-item": ",",
    "empty-items": ",,,",
    "trailing-empty-items": "price_per_gpu_hour,,",
    "huge": "a" * 60_000,
    "huge-digits": "9" * 5_000,
    "nul": "a\x00b",  # PostgreSQL refuses NUL in a string with an error: it must never reach a query
}
FILTERS = sorted(OfferFilterSet.base_filters)
PAGES = {  # page -> the parameters it reads besides the OfferFilterSet's
    "/": ["currency", "unit", "page"],
    "/charts/": ["currency", "unit"],
    "/gpus/h100-sxm/": ["currency", "unit"],
    "/gpus/": [],
    "/providers/": [],
    "/providers/alpha/": [],
    "/compare/": ["provider"],
    "/sources/": [],
    "/digest/subscribe/": ["email", "language", "always_send"],
}
API = {  # endpoint -> its class, whose query_parameters are what it reads
    "/api/v1/offers/": api.OfferListApi, "/api/v1/offers/{offer}/history/": api.OfferHistoryApi,
    "/api/v1/providers/": api.ProviderListApi, "/api/v1/gpus/": api.GpuListApi,
    "/api/v1/sources/": api.SourceListApi, "/api/v1/compare/": api.CompareApi,
}


@pytest.fixture(autouse=True)
def _no_limits(settings):
    settings.API_ANON_RATE = settings.API_ADVISE_RATE = "off"
    cache.clear()


@pytest.fixture
def get(world):  # noqa: F811
    client = Client(raise_request_exception=False)
    offer = next(iter(world.offers.values())).id

    def fetch(path, **params):
        return client.get(path.format(offer=offer), params)
    return fetch


def cases(parameters_of):
    return [(where, name) for where, names in parameters_of.items() for name in names]


# Every parameter of every API operation. The pages share one filter code path (the OfferFilterSet's form, then
# selectors): the offers page takes every filter, the other pages the filters of each kind of field (list, CSV
# ordering, text, number, boolean, country) besides their own parameters, which keeps the run to about a minute.
SAMPLE_FILTERS = ["gpu", "provider", "ordering", "region", "price_per_gpu_hour_max", "gpu_count_min", "spot",
                  "country"]
API_CASES = cases({path: sorted(cls.query_parameters | {"format"}) for path, cls in API.items()})
PAGE_CASES = cases({path: sorted({*(FILTERS if path == "/" else SAMPLE_FILTERS), *extra})
                    for path, extra in PAGES.items()} | {"/advisor/": sorted(AdvisorForm.base_fields)})


@pytest.mark.parametrize(("path", "name"), API_CASES, ids=[f"{p}?{n}" for p, n in API_CASES])
def test_every_api_parameter_answers_hostile_values_without_a_500(get, path, name):
    for kind, value in HOSTILE.items():
        response = get(path, **{name: value})
        assert response.status_code < 500, (kind, response.content[:300])
        assert response["Content-Type"].startswith(("application/json", "text/csv")), (kind, response["Content-Type"])
        if response.status_code == 400:
            assert response["Content-Type"] == "application/json" and name in response.json(), kind


@pytest.mark.parametrize(("path", "name"), PAGE_CASES, ids=[f"{p}?{n}" for p, n in PAGE_CASES])
def test_every_page_parameter_answers_hostile_values_without_a_500(get, path, name):
    for kind, value in HOSTILE.items():
        assert get(path, **{name: value}).status_code < 500, kind


@pytest.mark.parametrize("value", ["", ",", ",,,", "price_per_gpu_hour,,", ",price_per_gpu_hour", "provider,"])
@pytest.mark.parametrize("path", ["/api/v1/offers/", "/", "/charts/", "/gpus/h100-sxm/"])
def test_an_ordering_with_empty_items_is_a_400_naming_it(get, path, value):
    response = get(path, ordering=value)
    if not value:
        assert response.status_code in (200, 302)  # no ordering asked for: the default (the page drops the key)
    elif path.startswith("/gpus/"):
        assert response.status_code == 404  # the GPU page answers any invalid parameter with its 404
    elif path.startswith("/api/"):
        assert response.status_code == 400 and list(response.json()) == ["ordering"]
    else:
        assert response.status_code == 400 and "extra comma" in response.content.decode()


LISTS = sorted(name for name in OfferFilterSet.base_filters if name in
               {"gpu", "gpu_family", "provider", "continent", "mig", "rdma", "offering", "availability"})


@pytest.mark.parametrize("value", ["h100-sxm,", ",h100-sxm", ",", "h100-sxm,,l4"])
@pytest.mark.parametrize("name", LISTS)
def test_a_list_with_an_empty_item_is_a_400_naming_it_and_an_empty_parameter_is_no_filter(get, name, value):
    """As the ordering: `?gpu=h100-sxm,` was read as `?gpu=h100-sxm`, a typo kept silently."""
    response = get("/api/v1/offers/", **{name: value})
    assert response.status_code == 400 and list(response.json()) == [name]
    assert "extra comma" in response.json()[name][0]
    page = get("/", **{name: value})  # the page tidies its query string first: the empty item is dropped
    assert page.status_code == 302 and ",," not in page["Location"] and not page["Location"].endswith(",")
    assert get("/api/v1/offers/", **{name: ""}).status_code == 200


@pytest.mark.parametrize(("value", "status"), [("99.0", 400), ("10.2", 400), ("13.9", 200), ("11.0", 200)])
def test_a_cuda_release_outside_nvidias_table_is_a_400_not_unknown_for_every_offer(get, value, status):
    response = get("/api/v1/offers/", cuda=value)
    assert response.status_code == status
    if status == 400:
        assert "which covers CUDA 11.x to 13.x" in response.json()["cuda"][0]
        assert get("/", cuda=value).status_code == 400


@pytest.mark.parametrize("path", ["/api/v1/offers/", "/"])
def test_a_gpu_count_range_that_can_match_nothing_is_a_400_naming_both_ends(get, path):
    response = get(path, gpu_count_min="5", gpu_count_max="2")
    assert response.status_code == 400
    text = str(response.json()["gpu_count_max"]) if path.startswith("/api/") else response.content.decode()
    assert "2 is below gpu_count_min (5)" in text
    assert get(path, gpu_count_min="2", gpu_count_max="2").status_code == 200


@pytest.mark.parametrize("kind", ["arabic-indic-digit", "superscript-digit", "fullwidth-digit", "nul"])
@pytest.mark.parametrize("path", ["/api/v1/offers/{id}/", "/api/v1/offers/{id}/history/", "/offers/{id}/",
                                  "/api/v1/providers/{id}/", "/api/v1/gpus/{id}/", "/providers/{id}/", "/gpus/{id}/"])
def test_an_id_or_slug_in_non_ascii_digits_or_with_a_nul_is_a_404_never_another_object(get, world, path, kind):  # noqa: F811
    response = get(path.replace("{id}", HOSTILE[kind]))
    assert response.status_code == 404
    if path.startswith("/api/"):
        assert response["Content-Type"] == "application/json"


@pytest.mark.parametrize("kind", ["arabic-indic-digit", "fullwidth-digit", "huge-digits"])
@pytest.mark.parametrize("name", ["page", "page_size"])
def test_api_page_numbers_take_ascii_digits_only(get, name, kind):
    response = get("/api/v1/offers/", **{name: HOSTILE[kind]})
    assert response.status_code == 400 and list(response.json()) == [name]


@pytest.mark.parametrize("depth", [40, 5_000, 100_000])
@pytest.mark.parametrize("shape", ["list", "object"])
def test_deeply_nested_json_to_advise_is_a_400(world, shape, depth):  # noqa: F811
    body = "[" * depth + "]" * depth if shape == "list" else '{"a":' * depth + "1" + "}" * depth
    response = Client(raise_request_exception=False).post("/api/v1/advise/", body, content_type="application/json")
    assert response.status_code == 400 and "nested" in response.json()["non_field_errors"][0]


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_values_in_every_advise_field_are_a_400(world, kind):  # noqa: F811
    client = Client(raise_request_exception=False)
    for field in ["kind", "models", "gpu", "nodes", "hours_per_month", "must_haves", "continents"]:
        body = json.dumps({"kind": "inference", field: HOSTILE[kind]})
        response = client.post("/api/v1/advise/", body, content_type="application/json")
        assert response.status_code in (200, 400), (field, response.status_code)


def test_a_60000_character_region_is_a_400_on_sqlite_too():
    """SQLite refuses LIKE patterns over 50,000 bytes; the region filter stops at the column's 120 characters."""
    filterset = OfferFilterSet({"region": "a" * 60_000})
    assert not filterset.is_valid() and "region" in filterset.errors
