"""Limits that hold (issue 16, items 1 and 4): the client address comes from REMOTE_ADDR unless a proxy count is
configured, advise is throttled, unpaged CSV exports are bounded site-wide, and the throttle counts atomically under
concurrent clients (against the real Redis cache in that test)."""

import threading

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import Client

pytestmark = pytest.mark.django_db

SOURCES = "/api/v1/sources/"


def statuses(client, count, **headers):
    return [client.get(SOURCES, **headers).status_code for _ in range(count)]


def test_an_invented_x_forwarded_for_does_not_make_a_new_client(api, settings):
    settings.API_ANON_RATE = "5/minute"
    codes = [api.get(SOURCES, HTTP_X_FORWARDED_FOR=f"203.0.113.{n}").status_code for n in range(20)]
    assert codes.count(200) == 5 and codes.count(429) == 15


def test_behind_a_configured_proxy_each_client_is_counted_alone(api, settings):
    settings.API_ANON_RATE, settings.NUM_PROXIES = "3/minute", 1
    # The proxy appends the address it saw; whatever the client wrote before it is ignored.
    first = statuses(api, 4, HTTP_X_FORWARDED_FOR="1.1.1.1, 198.51.100.1")
    forged = statuses(api, 1, HTTP_X_FORWARDED_FOR="9.9.9.9, 198.51.100.1")
    second = statuses(api, 3, HTTP_X_FORWARDED_FOR="198.51.100.2")
    assert first == [200, 200, 200, 429] and forged == [429] and second == [200, 200, 200]


def test_a_throttled_answer_says_how_long_to_wait(api, settings):
    settings.API_ANON_RATE = "1/hour"
    api.get(SOURCES)
    refused = api.get(SOURCES)
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 3600
    assert "detail" in refused.json()


def test_advise_is_rate_limited(api, settings):
    settings.API_ADVISE_RATE = "2/minute"
    body = {"kind": "inference", "models": [{"parameters_billions": 7}]}
    codes = [api.post("/api/v1/advise/", body, format="json").status_code for _ in range(3)]
    assert codes[:2] != [429, 429] and codes[2] == 429


def test_unpaged_csv_exports_are_bounded_site_wide_and_paged_csv_is_not(api, settings, world):
    settings.API_CSV_EXPORTS_MAX = 1
    streaming = api.get("/api/v1/offers/?format=csv")
    assert streaming.status_code == 200 and streaming.streaming
    busy = api.get("/api/v1/offers/?format=csv")
    assert busy.status_code == 503 and busy["Content-Type"].startswith("application/json")
    assert int(busy["Retry-After"]) > 0 and "page" in busy.json()["detail"]
    assert api.get("/api/v1/offers/?format=csv&page_size=10").status_code == 200
    b"".join(streaming.streaming_content)  # the first export finishes and frees its slot
    again = api.get("/api/v1/offers/?format=csv")
    assert again.status_code == 200
    b"".join(again.streaming_content)


def test_an_export_abandoned_by_its_client_frees_its_slot(settings):
    from providers.limits import ReleasingStream, export_slot

    settings.API_CSV_EXPORTS_MAX = 1
    slot = export_slot()
    assert slot is not None and export_slot() is None
    ReleasingStream(iter([b"a", b"b"]), slot).close()  # what Django does when the client goes away
    assert export_slot() is not None


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_throttle_counts_atomically_under_concurrent_clients(settings):
    import os

    settings.API_ANON_RATE = "20/minute"
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")}}
    caches["default"].clear()
    codes: list[int] = []
    start = threading.Barrier(32)

    def client_run():
        client = Client()
        start.wait()
        try:
            for _ in range(4):
                codes.append(client.get(SOURCES).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=client_run) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    caches["default"].clear()
    assert len(codes) == 128 and codes.count(200) == 20, codes.count(200)
