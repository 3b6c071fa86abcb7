"""The offers list keeps its rendered JSON pages under the data version (providers.versions.kept_page): a repeated
request gets the same bytes without reading the page again, and anything that changes what the page shows gets a
new one: an offer's change, a source's (its last success), the clock turning a source stale, another URL or host,
another media type. CSV and clock-dependent filters are never kept."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from providers.models import DataSource, Offer
from tests.api.conftest import succeeded

pytestmark = pytest.mark.django_db

URL = "/api/v1/offers/?gpu=h100-sxm&ordering=price_hour"


def test_a_repeated_request_gets_the_same_bytes_reading_only_the_data_version(api, world):
    first = api.get(URL)
    with CaptureQueriesContext(connection) as repeat:
        again = api.get(URL)
    assert again.status_code == 200 and again.content == first.content
    assert again["Content-Type"] == first["Content-Type"] == "application/json"
    assert [query["sql"] for query in repeat.captured_queries] == [
        'SELECT version FROM "providers_dataversion" WHERE id = 1']


def test_a_change_of_an_offer_or_of_a_source_shows_at_once(api, world):
    beta = world.offers["beta-h100"]
    api.get(URL)
    Offer.objects.filter(pk=beta.pk).update(price_hour="1.11")
    row = next(row for row in api.get(URL).json()["results"] if row["id"] == beta.id)
    assert row["price_hour"] == 1.11
    # A source's last success is on every row (and decides is_stale): writing it raises the data version too.
    moment = timezone.now() - timedelta(minutes=5)
    DataSource.objects.filter(pk=beta.source_id).update(last_success_at=moment)
    row = next(row for row in api.get(URL).json()["results"] if row["id"] == beta.id)
    assert row["source"]["last_success_at"] == moment.isoformat().replace("+00:00", "Z")
    assert row["is_stale"] is False


def test_a_kept_page_is_written_again_when_a_source_turns_stale_with_the_clock(api, world, settings, monkeypatch):
    beta = world.offers["beta-h100"]
    succeeded(beta.source, hours_ago=settings.STALE_AFTER_HOURS - 0.5)  # stale in half an hour
    row = next(row for row in api.get(URL).json()["results"] if row["id"] == beta.id)
    assert row["is_stale"] is False
    later = timezone.now() + timedelta(hours=1)
    monkeypatch.setattr("django.utils.timezone.now", lambda: later)
    row = next(row for row in api.get(URL).json()["results"] if row["id"] == beta.id)
    assert row["is_stale"] is True


def test_each_url_host_and_media_type_has_its_own_page(api, world):
    plain = api.get(URL)
    assert api.get(URL, HTTP_HOST="other.example").content != plain.content  # links carry the host
    assert api.get(URL, HTTP_HOST="other.example").content == api.get(URL, HTTP_HOST="other.example").content
    reordered = api.get("/api/v1/offers/?ordering=price_hour&gpu=h100-sxm&page_size=1").json()
    assert "page_size=1" in reordered["next"]
    indented = api.get(URL, HTTP_ACCEPT="application/json; indent=2")
    assert indented.content != plain.content and indented.json() == plain.json()


def test_csv_and_clock_dependent_filters_are_never_kept(api, world):
    from providers import versions

    api.get(URL + "&format=csv&page=1")
    api.get("/api/v1/offers/?seen_within_hours=24")
    assert not versions._pages
    api.get(URL)
    assert len(versions._pages) == 1


def test_at_most_api_kept_pages_pages_are_kept_and_zero_keeps_none(api, world, settings):
    from providers import versions

    settings.API_KEPT_PAGES = 2
    for size in (1, 2, 3):
        api.get(f"{URL}&page_size={size}")
    assert len(versions._pages) == 2
    assert not any("page_size=1" in key for key in versions._pages)  # the oldest went first
    settings.API_KEPT_PAGES = 0
    versions.kept_pages_forget()
    api.get(URL)
    assert not versions._pages


def test_the_kept_pages_stay_within_their_byte_budget(api, world, settings, monkeypatch):
    from providers import versions

    first = len(api.get(URL).content)
    versions.kept_pages_forget()
    monkeypatch.setattr(versions, "KEPT_PAGES_BYTES", first * 2 + first // 2)  # room for two such pages
    for size in (50, 49, 48):
        api.get(f"{URL}&page_size={size}")
    assert len(versions._pages) == 2 and versions._pages_bytes <= versions.KEPT_PAGES_BYTES
    assert versions._pages_bytes == sum(len(kept[2]) for kept in versions._pages.values())
