"""Conditional requests and the rate-limit headers: an unchanged answer is a 304 to a client that names its ETag,
a change of the data changes the ETag, and every answer of a throttled operation says what is left of the limit."""

from decimal import Decimal

import pytest

from providers.models import Offer

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/api/v1/offers/?gpu=h100-sxm", "/api/v1/offers/{offer}/", "/api/v1/providers/",
                                  "/api/v1/gpus/", "/api/v1/sources/", "/api/v1/compare/?providers=alpha,beta",
                                  "/api/v1/offers/?format=csv&page=1"])
def test_an_unchanged_answer_is_a_304_and_a_change_of_the_data_changes_its_etag(api, world, path):
    path = path.format(offer=world.offers["beta-h100"].id)
    first = api.get(path)
    assert first.status_code == 200
    assert first["Cache-Control"] == "public, max-age=300"
    assert "Accept" in first["Vary"] and first["Last-Modified"]
    etag = first["ETag"]
    again = api.get(path, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    assert api.head(path, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert api.get(path, HTTP_IF_NONE_MATCH='"0-other"').status_code == 200

    Offer.objects.filter(pk=world.offers["beta-h100"].pk).update(price_hour_usd=Decimal("2.11"),
                                                                   price_per_gpu_hour_usd=Decimal("2.11"))
    changed = api.get(path, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag


def test_json_and_csv_of_one_list_have_different_etags(api, world):
    json = api.get("/api/v1/offers/?page=1")
    csv = api.get("/api/v1/offers/?page=1&format=csv")
    assert json["ETag"] != csv["ETag"]
    assert api.get("/api/v1/offers/?page=1&format=csv", HTTP_IF_NONE_MATCH=json["ETag"]).status_code == 200


def test_errors_and_streamed_csv_carry_no_etag(api, world):
    assert not api.get("/api/v1/offers/?gpu=nope").has_header("ETag")
    streamed = api.get("/api/v1/offers/?format=csv")
    assert streamed.streaming and not streamed.has_header("ETag")
    b"".join(streamed.streaming_content)


def test_a_throttled_read_says_what_is_left_of_its_limit_before_the_429(api, world, settings):
    settings.API_ANON_RATE = "3/minute"
    answers = [api.get("/api/v1/gpus/") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert {answer["RateLimit-Policy"] for answer in answers} == {'"api";q=3;w=60'}
    left = [answer["RateLimit"].split(";")[1] for answer in answers]
    assert left == ["r=2", "r=1", "r=0", "r=0"]
    reset = int(answers[0]["RateLimit"].rsplit("t=", 1)[1])
    assert 0 < reset <= 60 and int(answers[3]["Retry-After"]) == reset


def test_advise_says_what_is_left_of_its_own_limit(api, settings):
    settings.API_ADVISE_RATE = "2/minute"
    body = {"kind": "inference", "models": [{"count": 1, "memory_gb": 9}]}
    answers = [api.post("/api/v1/advise/", body, format="json") for _ in range(3)]
    assert answers[2].status_code == 429 and answers[2]["Retry-After"]
    assert [answer["RateLimit"].split(";")[1] for answer in answers] == ["r=1", "r=0", "r=0"]
    assert answers[0]["RateLimit-Policy"] == '"advise";q=2;w=60'


def test_a_304_keeps_the_rate_limit_headers(api, world, settings):
    settings.API_ANON_RATE = "5/minute"
    first = api.get("/api/v1/gpus/")
    again = api.get("/api/v1/gpus/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again["RateLimit"].startswith('"api";r=3;')


def test_without_a_limit_no_rate_limit_headers_are_sent(api, world):
    assert not api.get("/api/v1/gpus/").has_header("RateLimit")
