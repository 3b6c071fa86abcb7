"""Offer counts (the API's `count`, the offers page's total) are kept under the normalised filters and the data
version the database raises with every write to offers and the tables filters read: exact until the data changes
(a scrape run, an admin edit, a curated sync), whoever wrote it, and never kept for clock-dependent filters."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from providers import versions
from providers.kubernetes_profiles import offer_kubernetes_refresh
from providers.models import Capability, DataVersion, Offer
from tests.api.conftest import offer, succeeded

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _data_version_row(db):
    """Migration 0009 writes the one DataVersion row; a transactional test that ran before (its flush truncates every
    table) removes it, and without it nothing is kept (versions.data_version: None), as in such a database."""
    DataVersion.objects.get_or_create(id=1)


@pytest.fixture
def cached(settings):
    settings.OFFER_COUNT_CACHE_SECONDS = 3600


def count(api, query="") -> int:
    response = api.get(f"/api/v1/offers/?{query}")
    assert response.status_code == 200, response.content
    return response.json()["count"]


def count_queries(api, query="") -> int:
    with CaptureQueriesContext(connection) as context:
        count(api, query)
    return len([q for q in context.captured_queries if "COUNT(" in q["sql"].upper()])


def new_offer(world, name):
    beta = world.offers["beta-h100"]
    return offer(name, beta.provider, beta.source, beta.gpu, price="1")


def test_a_kept_count_skips_the_count_query_until_the_data_changes(api, world, cached):
    assert count_queries(api, "gpu_count_min=1") == 1
    assert count_queries(api, "gpu_count_min=1") == 0
    new_offer(world, "beta-new")
    assert count_queries(api, "gpu_count_min=1") == 1


def test_an_offer_written_outside_a_run_shows_in_the_count_at_once(api, world, cached):
    assert count(api) == 5
    new_offer(world, "beta-new")  # like an admin edit: no run, no scrape
    assert count(api) == 6


def test_a_kept_page_statement_follows_a_change_of_its_lookups(api, world, cached):
    def names(query):
        return [row["instance_type"] for row in api.get(f"/api/v1/offers/?{query}").json()["results"]]

    assert names("mig=yes&gpu=h100-sxm,l4") == ["alpha-h100x8"]  # the L4 has no MIG profiles: not this machine
    Capability.objects.filter(key="mig", provider__slug="alpha").update(value="no")
    offer_kubernetes_refresh()  # what every service and the admin do after a capability edit
    assert names("mig=yes&gpu=h100-sxm,l4") == []
    assert count(api, "mig=yes&gpu=h100-sxm,l4") == 0


def test_a_run_that_deactivates_offers_shows_at_once(api, world, cached):
    assert count(api, "gpu_family=H100") == 2
    Offer.objects.filter(pk=world.offers["beta-h100"].pk).update(is_active=False)
    succeeded(world.sources["beta"])
    assert count(api, "gpu_family=H100") == 1


def test_a_capability_edit_changes_capability_filter_counts_at_once(api, world, cached):
    before = count(api, "mig=yes")
    Capability.objects.filter(key="mig", value="yes").update(value="no")
    offer_kubernetes_refresh()  # what every service and the admin do after a capability edit
    assert count(api, "mig=yes") == 0 < before
    assert count(api, "mig=no") >= before


def test_every_write_raises_the_data_version(world):
    version = versions.data_version()
    new_offer(world, "beta-new")
    after_insert = versions.data_version()
    Offer.objects.filter(instance_type="beta-new").update(price_hour=2)
    after_update = versions.data_version()
    Offer.objects.filter(instance_type="beta-new").delete()
    assert version < after_insert < after_update < versions.data_version()


def test_without_a_version_row_counts_are_not_kept(api, world, cached):
    DataVersion.objects.all().delete()
    assert count_queries(api, "gpu_count_min=1") == 1
    assert count_queries(api, "gpu_count_min=1") == 1


def test_the_same_filters_written_differently_share_one_count(api, world, cached):
    assert count(api, "gpu=h100-sxm,l4&price_per_gpu_hour_max=4") == 2
    assert count_queries(api, "gpu=l4&gpu=h100-sxm&price_per_gpu_hour_max=4.000&ordering=-gpu_memory") == 0
    assert count_queries(api, "gpu=l4&price_per_gpu_hour_max=4") == 1  # other filters: counted afresh


def test_counts_of_clock_dependent_filters_are_never_kept(api, world, cached):
    # alpha's and gamma's offers, read live; not beta's, a file pinned at a commit that states no date
    assert count(api, "seen_within_hours=50") == 3
    assert count_queries(api, "seen_within_hours=50") == 1


def test_the_offers_page_shows_the_new_count_at_once(client, world, cached):
    assert "2 offers match." in client.get("/?gpu_family=H100").content.decode()
    new_offer(world, "beta-new")
    assert "3 offers match." in client.get("/?gpu_family=H100").content.decode()
