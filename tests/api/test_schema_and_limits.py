"""The OpenAPI schema and its docs page (vendored assets, no CDN), CORS for GET, and the anonymous rate limit
(in memory, and in Redis as production counts it)."""

import re

import pytest
import yaml
from django.contrib.staticfiles import finders
from django.core.cache import caches

from providers.filters import OfferFilterSet

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(api):
    response = api.get("/api/schema/")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


@pytest.mark.parametrize(("asked", "found"), [("/api/v1/schema/", "/api/schema/"),
                                               ("/api/v1/schema/?format=json", "/api/schema/?format=json"),
                                               ("/api/v1/docs/", "/api/docs/")])
def test_the_schema_and_docs_are_found_under_v1_too(api, asked, found):
    response = api.get(asked)
    assert (response.status_code, response["Location"]) == (302, found)
    assert api.get(found).status_code == 200


def test_schema_is_openapi_3_and_documents_every_operation(schema):
    assert schema["openapi"].startswith("3.")
    for path in ("/api/v1/offers/", "/api/v1/offers/{offer_id}/", "/api/v1/offers/{offer_id}/history/",
                 "/api/v1/providers/", "/api/v1/providers/{slug}/", "/api/v1/gpus/", "/api/v1/gpus/{slug}/",
                 "/api/v1/sources/", "/api/v1/compare/"):
        operation = schema["paths"][path]["get"]
        assert "200" in operation["responses"] and "400" in operation["responses"]
        assert set(schema["paths"][path]) == {"get"}  # nothing else is offered


def test_schema_documents_exactly_the_offer_filters_the_api_reads(schema):
    for path in ("/api/v1/offers/", "/api/v1/offers.csv"):  # `format` is a legacy spelling of the .csv operation
        parameters = {p["name"] for p in schema["paths"][path]["get"]["parameters"]}
        assert parameters == set(OfferFilterSet.base_filters) | {"page", "page_size", "kubernetes_reasons"}


def test_docs_page_loads_swagger_ui_from_our_own_static_files(api):
    html = api.get("/api/docs/").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any("swagger-ui-bundle.js" in asset for asset in assets)
    # Swagger UI's start-up script comes from the docs view itself (no inline script: the CSP allows none).
    (script,) = [asset for asset in assets if asset.startswith("/api/docs/")]
    for asset in set(assets) - {script}:
        assert asset.startswith("/static/"), asset  # no CDN
        assert finders.find(asset.removeprefix("/static/")), asset
    start = api.get(script.replace("&amp;", "&"))
    assert start["Content-Type"].startswith("application/javascript") and "/api/schema/" in start.content.decode()
    assert "<script>" not in html and "<style>" not in html


def test_cors_lets_other_sites_read_the_api_but_not_write(api, world):
    response = api.get("/api/v1/gpus/", HTTP_ORIGIN="https://notebook.example")
    assert response["Access-Control-Allow-Origin"] == "*"
    preflight = api.options("/api/v1/offers/", HTTP_ORIGIN="https://notebook.example",
                            HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET")
    allowed = {method.strip() for method in preflight["Access-Control-Allow-Methods"].split(",")}
    assert "GET" in allowed and not allowed & {"POST", "PUT", "PATCH", "DELETE"}
    assert "Access-Control-Allow-Origin" not in api.get("/providers/", HTTP_ORIGIN="https://x.example")


def test_anonymous_clients_are_rate_limited_per_ip(api, world, settings):
    settings.API_ANON_RATE = "3/minute"
    statuses = [api.get("/api/v1/gpus/", REMOTE_ADDR="203.0.113.7").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = api.get("/api/v1/offers/", REMOTE_ADDR="203.0.113.7")
    assert limited.status_code == 429 and int(limited["Retry-After"]) > 0
    assert api.get("/api/v1/gpus/", REMOTE_ADDR="203.0.113.8").status_code == 200


@pytest.mark.services
def test_rate_limit_is_counted_in_redis_when_the_cache_is_redis(api, world, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:6379/10"}}
    settings.API_ANON_RATE = "2/minute"
    caches["default"].clear()
    statuses = [api.get("/api/v1/sources/", REMOTE_ADDR="198.51.100.9").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    # The per-client count of the current window (providers.limits.window_hit; tests/api/conftest.py holds the
    # clock at 1,800,000,030 s).
    assert caches["default"].get(f"throttle:api:198.51.100.9:{1_800_000_030 // 60}") == 3
    caches["default"].clear()


@pytest.mark.parametrize(("query", "limit"), [("price_per_gpu_hour_max=1e999", "1000000"),
                                               ("gpu_memory_min=1e999", "100000"),
                                               ("gpu_count_max=1e60", "10000")])
def test_a_number_over_a_filters_limit_is_one_error_naming_that_limit(api, query, limit):
    """Not two limits at once (the filter's and django-filter's 1e50 overflow guard)."""
    response = api.get(f"/api/v1/offers/?{query}")
    name = query.split("=")[0]
    assert response.status_code == 400
    assert response.json() == {name: [f"Ensure this value is less than or equal to {limit}."]}
