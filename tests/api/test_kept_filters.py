"""The offers list keeps each valid query's validated FilterSet under the data version (filters.kept_offer_filterset):
a repeated query skips building it, and any change of the data, an invalid query or a clock-dependent filter gets a
FilterSet of its own, so no answer is ever an earlier data's."""

import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext

from providers import versions
from providers.filters import kept_offer_filterset
from providers.models import Offer
from tests.api.conftest import offer

pytestmark = pytest.mark.django_db


def kept(query: str):
    with versions.data_version_scope():
        return kept_offer_filterset(QueryDict(query))


def test_a_repeated_query_reuses_its_filterset_whatever_the_order_of_its_parameters(world):
    first = kept("gpu=h100-sxm&spot=true&page=2")
    assert first.is_valid()
    assert kept("spot=true&gpu=h100-sxm&page=3&format=json") is first  # pages and formats are not filters
    assert kept("gpu=h100-sxm") is not first


def test_a_change_of_the_data_gets_a_new_filterset(world):
    first = kept("gpu=h100-sxm")
    Offer.objects.filter(pk=world.offers["beta-h100"].pk).update(price_hour="1.11")  # raises the data version
    assert kept("gpu=h100-sxm") is not first


def test_invalid_and_clock_dependent_filters_are_never_kept(world):
    invalid = kept("gpu=no-such-gpu")
    assert not invalid.is_valid()
    assert kept("gpu=no-such-gpu") is not invalid
    recent = kept("seen_within_hours=2")
    assert recent.is_valid()
    assert kept("seen_within_hours=2") is not recent


def test_the_api_answers_with_the_current_data_after_a_change(api, world):
    """Counts are not cached in the test settings, but the FilterSet is: the second page of answers after a new offer
    must count and list it."""
    beta = world.offers["beta-h100"]
    url = "/api/v1/offers/?gpu=h100-sxm&ordering=price_hour"
    before = api.get(url).json()
    with CaptureQueriesContext(connection) as warm:
        assert api.get(url).json() == before
    added = offer("beta-cheap", beta.provider, beta.source, beta.gpu, price="0.01")
    after = api.get(url).json()
    assert after["count"] == before["count"] + 1
    assert after["results"][0]["id"] == added.id
    # A warm repeat reads the data version, the count and the page, and builds no FilterSet lookups again.
    assert len(warm.captured_queries) <= 3, [query["sql"][:80] for query in warm.captured_queries]
