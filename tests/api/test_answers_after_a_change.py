"""The offers list answers with the current data: what it keeps under the data version (lookups, counts, pages) is
never an earlier data's answer, and a warm repeat of a query reads little."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.conftest import offer

pytestmark = pytest.mark.django_db


def test_the_api_answers_with_the_current_data_after_a_change(api, world):
    """Counts are not cached in the test settings, but the lookups and pages are: the second page of answers after a
    new offer must count and list it."""
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
