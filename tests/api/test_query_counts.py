"""Each list endpoint runs the same number of queries whatever the page size (no query per row)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from providers import offer_reads, versions
from providers.models import PriceObservation
from tests.api.conftest import capabilities, instance_facts, offer, succeeded
from tests.factories import DataSourceFactory, ProviderFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def many(world):
    """Twelve more providers, each with its own source and offers, and a history of 30 changes for one offer."""
    gpu = world.offers["beta-h100"].gpu
    for n in range(12):
        provider = ProviderFactory(slug=f"extra-{n}")
        capabilities(provider, offering="managed", mig="yes")
        source = DataSourceFactory(slug=f"extra-src-{n}", provider=provider)
        succeeded(source)
        for region in range(3):
            offer(f"x{n}", provider, source, gpu, price=str(n + 1), region=f"r{region}")
        instance_facts(provider, {"x*": {"managed_node": "yes"}})  # derives the offers' answers
    target = world.offers["beta-h100"]
    PriceObservation.objects.bulk_create(
        PriceObservation(offer=target, observed_at=target.first_seen, price_hour=Decimal(n), currency="USD",
                         availability="unknown") for n in range(30))
    return world


def queries(api, url) -> int:
    versions.remembered_forget()  # the first request after a change of the data: nothing kept yet
    offer_reads._ANSWERS.clear()  # nor any offer's Kubernetes answers
    with CaptureQueriesContext(connection) as context:
        response = api.get(url)
    assert response.status_code == 200, response.content
    assert response.json()["results"]
    return len(context.captured_queries)


@pytest.mark.parametrize(("path", "expected"), [
    # the data version, the count on the bare offer table, then the page: its ids in index order and those offers
    # with provider, GPU and source joined, in one statement (offer_reads.offer_page), and their Kubernetes answers
    # (none kept from an earlier request in this worst case), and the latest success of a source (Last-Modified)
    ("/api/v1/offers/", 5),
    # + the provider slugs the filter validates against (once, however many), then the provider ids of those slugs
    # and of the profiles whose `mig` answer matches (read once, applied as id lists: see filters.RelatedChoice)
    # + the offers left out because their `mig` answer is unknown: the profiles whose answer is yes or unknown, and
    # one grouped COUNT per provider (both kept under the data version), and the data version and a source's latest
    # success for ETag and Last-Modified (providers.api.conditional)
    ("/api/v1/offers/?provider=beta,extra-1&mig=yes&ordering=-gpu_memory", 10),
    # Each of the others + the data version and the latest success of a source (ETag and Last-Modified,
    # providers.api.conditional)
    ("/api/v1/offers/{offer}/history/", 5),  # the offer, count, page
    ("/api/v1/providers/", 5),  # count, page, capabilities
    ("/api/v1/gpus/", 4),  # count, page
    ("/api/v1/sources/", 4),  # sources, their latest runs (a few dozen rows; the page is sliced in memory)
])
def test_list_queries_do_not_grow_with_the_page_size(api, many, path, expected):
    path = path.format(offer=many.offers["beta-h100"].id)
    joiner = "&" if "?" in path else "?"
    counts = {size: queries(api, f"{path}{joiner}page_size={size}") for size in (1, 5, 100)}
    assert set(counts.values()) == {expected}, counts


def test_compare_and_details_run_a_fixed_number_of_queries(api, many):
    few = queries_of(api, "/api/v1/compare/?providers=alpha")
    lots = queries_of(api, "/api/v1/compare/?providers=alpha,beta,gamma,extra-1,extra-2,extra-3")
    # providers, capabilities, cheapest ids, cheapest offers; then the data version and the latest success of a source
    assert few == lots == 6
    assert queries_of(api, f"/api/v1/offers/{many.offers['beta-h100'].id}/") == 3
    assert queries_of(api, "/api/v1/providers/alpha/") == 6


def queries_of(api, url) -> int:
    versions.remembered_forget()
    with CaptureQueriesContext(connection) as context:
        assert api.get(url).status_code == 200
    return len(context.captured_queries)


def test_filter_lookups_are_read_once_per_data_version(api, many):
    url = "/api/v1/offers/?provider=beta,extra-1&mig=yes&gpu=h100-sxm"
    first = queries(api, url)
    with CaptureQueriesContext(connection) as context:
        # Another page size of the same query: its lookups were kept under the data version.
        assert api.get(f"{url}&page_size=49").status_code == 200
    # the data version, count, page: the slugs and capability answers were kept under the version
    assert len(context.captured_queries) == 3 < first
    with CaptureQueriesContext(connection) as context:
        # Other providers than before: the provider table's slugs and ids were kept whole, not per list asked.
        assert api.get("/api/v1/offers/?provider=extra-1&mig=yes&gpu=h100-sxm").status_code == 200
    # the data version, count, page, and the offers these filters leave out for an unknown `mig` (per filters)
    assert len(context.captured_queries) == 4, [query["sql"][:80] for query in context.captured_queries]
    ProviderFactory(slug="extra-new")  # a write: the version moves, the lookups are read again
    with CaptureQueriesContext(connection) as context:
        assert api.get(url).status_code == 200
    # every lookup again; the page's Kubernetes answers stay kept (per profile and the time it was computed)
    assert len(context.captured_queries) == first - 1
