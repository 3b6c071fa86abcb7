"""Offer counts (the API's `count`, the offers page's total) are cached briefly, keyed by the normalised filters
and the latest successful scrape run: a new run shows at once, and clock-dependent filters are never cached."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from providers.models import Offer
from tests.api.conftest import offer, succeeded

pytestmark = pytest.mark.django_db


@pytest.fixture
def cached(settings):
    settings.OFFER_COUNT_CACHE_SECONDS = 60


def count(api, query="") -> int:
    response = api.get(f"/api/v1/offers/?{query}")
    assert response.status_code == 200, response.content
    return response.json()["count"]


def new_offer(world, name):
    beta = world.offers["beta-h100"]
    return offer(name, beta.provider, beta.source, beta.gpu, price="1")


def test_a_cached_count_is_reused_until_a_run_succeeds(api, world, cached):
    assert count(api) == 5
    new_offer(world, "beta-new")  # written outside a run, like an admin edit: shows within the cache lifetime
    assert count(api) == 5
    assert len(api.get("/api/v1/offers/").json()["results"]) == 6  # the rows themselves are always read live
    succeeded(world.sources["beta"])  # a successful run commits its offers with its success
    assert count(api) == 6


def test_the_same_filters_written_differently_share_one_count(api, world, cached):
    assert count(api, "gpu=h100-sxm,l4&price_per_gpu_hour_max=4") == 2
    new_offer(world, "beta-new")
    assert count(api, "gpu=l4&gpu=h100-sxm&price_per_gpu_hour_max=4.000&ordering=-gpu_memory") == 2
    assert count(api, "gpu=l4&price_per_gpu_hour_max=4") == 1  # other filters: counted afresh


def test_a_cached_count_skips_the_count_query(api, world, cached):
    count(api, "continent=NA")
    with CaptureQueriesContext(connection) as context:
        assert count(api, "continent=NA") == 2
    assert not [query for query in context.captured_queries if "COUNT(" in query["sql"].upper()]


def test_counts_of_clock_dependent_filters_are_never_cached(api, world, cached):
    assert count(api, "seen_within_hours=50") == 4
    Offer.objects.filter(pk=world.offers["beta-h100"].pk).update(is_active=False)
    assert count(api, "seen_within_hours=50") == 3


def test_the_offers_page_shows_the_cached_count_too(client, world, cached):
    assert "2 offers match." in client.get("/?gpu_family=H100").content.decode()
    new_offer(world, "beta-new")
    assert "2 offers match." in client.get("/?gpu_family=H100").content.decode()
    succeeded(world.sources["beta"])
    assert "3 offers match." in client.get("/?gpu_family=H100").content.decode()
