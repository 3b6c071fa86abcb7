"""A page of offers read as one index range per GPU model, provider or machine profile, merged in order
(offer_reads.offer_page_ids' LATERAL path), holds the same offers in the same order as the plain query, for every
filter that takes it, on every page, ties and unknown prices included; and the statement's text does not change with
the filter values, the page or the number of ranges (issue #41, item 3)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.http import QueryDict

from providers import offer_reads
from providers.filters import offer_filterset
from providers.kubernetes_profiles import offer_kubernetes_refresh
from tests.api.conftest import capabilities, offer
from tests.factories import DataSourceFactory, ProviderFactory

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql", reason="the merged path is PostgreSQL's")]


@pytest.fixture
def crowd(world):
    """Four more providers with offers of the world's three GPUs: repeated prices (ties broken by id), offers
    without a price (last), inactive ones (never listed), and regions of every basis (confirmed by the provider,
    only a catalog's, not stated)."""
    gpus = [world.offers["beta-h100"].gpu, world.offers["alpha-l4"].gpu, world.offers["beta-mi300x8"].gpu]
    for n in range(4):
        provider = ProviderFactory(slug=f"crowd-{n}")
        capabilities(provider, offering="managed" if n % 2 else "byo", mig="yes" if n < 3 else "no")
        source = DataSourceFactory(slug=f"crowd-src-{n}", provider=provider)
        for index in range(30):
            price = None if index % 11 == 0 else str(Decimal(index % 7) + Decimal(n) / 4)
            offer(f"c{n}-{index}", provider, source, gpus[index % 3], price=price,
                  spot=price if index % 2 else None, count=("1", "8")[index % 2], region=f"r{index}",
                  continent=("NA", "EU")[index % 2], active=index % 13 != 5,
                  region_confirmed=(True, False, None)[index // 3 % 3])
    offer_kubernetes_refresh()  # the offers' own answers, as every ingest derives them
    # Offers stored before their answers are derived (the profile column is nullable): no profile, answers unknown.
    source = DataSourceFactory(slug="crowd-src-late", provider=ProviderFactory(slug="crowd-late"))
    for index in range(12):
        offer(f"late-{index}", source.provider, source, gpus[index % 3], price=str(index % 5),
              region=f"r{index}", continent=("NA", "EU")[index % 2])
    return world


QUERIES = [
    "gpu=h100-sxm",
    "gpu=h100-sxm,l4",
    "gpu=h100-sxm,l4,mi300x&price_per_gpu_hour_max=4",
    "gpu_family=H100,L4&continent=NA",
    "vendor=nvidia,amd",
    "provider=crowd-0,crowd-1,crowd-2",
    "provider=crowd-0,crowd-3,alpha&spot=true&ordering=price_hour",
    # sorted by instance price: one range per GPU model (migration 0027)
    "gpu=h100-sxm,l4&ordering=price_hour",
    "gpu=h100-sxm,l4,mi300x&continent=EU&spot=true&ordering=price_hour",
    "provider=crowd-0,crowd-2,alpha&offering=byo",
    "offering=managed,byo&gpu=h100-sxm,l4&ordering=price_per_gpu_hour",
    "provider_kind=gpu_cloud,hyperscaler,marketplace",
    # per-offer Kubernetes answers: one range per matching machine profile (migration 0012)
    "offering=managed&continent=NA",
    "mig=no&offering=byo",
    # offers whose answer is unknown included: one more range for the offers without a profile
    "mig=yes,unknown",
    "mig=yes&offering=managed&unknown=include",
    "offering=byo&continent=NA&unknown=include",
    # a memory minimum in the default order: one range of the memory index per size reached
    "gpu_memory_min=80",
    "gpu_memory_min=24&price_per_gpu_hour_max=4",
    "gpu_memory_min=80&continent=EU&spot=true",
    "gpu_memory_min=100&gpu_count_min=8",
    "gpu_memory_min=80&unknown=include",  # and the range of the offers with no memory stated
    # a price ceiling with unknown=include keeps the unpriced offers (last in price order) in every range
    "gpu=h100-sxm,l4,mi300x&price_per_gpu_hour_max=4&unknown=include",
    "continent=NA&price_per_gpu_hour_max=3&unknown=include",
    "gpu_memory_min=80&price_per_gpu_hour_max=5&unknown=include",
    # sorted by memory, largest first: one range per GPU model or provider (migration 0030); a provider's range holds
    # several memory sizes and offers of no stated memory (last), ties broken by price then id
    "gpu=h100-sxm,l4&ordering=-gpu_memory",
    "gpu=h100-sxm,l4,mi300x&continent=EU&ordering=-gpu_memory",
    "provider=crowd-0,crowd-1,crowd-late&ordering=-gpu_memory",
    "provider=crowd-0,crowd-3,alpha&spot=true&ordering=-gpu_memory&unknown=include",
]


def plain_ids(filterset, offset, limit):
    return list(filterset.bare_qs.values_list("id", flat=True)[offset:offset + limit])


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(("offset", "limit"), [(0, 5), (5, 5), (0, 50), (37, 10), (200, 10)])
def test_the_merged_ranges_are_the_plain_querys_page(crowd, query, offset, limit):
    filterset = offer_filterset(QueryDict(query))
    assert filterset.is_valid(), filterset.errors
    assert offer_reads._range_split(filterset) is not None  # the merged path is the one under test
    expected = plain_ids(filterset, offset, limit)
    assert offer_reads.offer_page_ids(filters=filterset, offset=offset, limit=limit) == expected
    # the one-statement page: the same offers, as offer_rows reads them
    assert offer_reads.offer_page(filters=filterset, offset=offset, limit=limit) == offer_reads.offer_rows(ids=expected)


def test_per_offer_answers_are_read_one_machine_profile_at_a_time(crowd):
    """Managed node + MIG: the offers' own answers resolve to profiles, each read as its own price range, instead
    of walking the whole price index and filtering (15x slower at 1,000,000 offers than at 100,000)."""
    filterset = offer_filterset(QueryDict("offering=managed&continent=NA"))
    assert filterset.is_valid(), filterset.errors
    column, profiles = offer_reads._range_split(filterset)
    assert column == "kubernetes_profile_id" and len(profiles) > 1
    managed = set(offer_reads.offers_filtered(filters=filterset).values_list("kubernetes_profile_id", flat=True))
    assert managed <= set(profiles)  # every matching offer is in one of the ranges



@pytest.mark.parametrize("query", ["mig=yes,unknown", "mig=yes&unknown=include"])
def test_offers_without_a_profile_are_read_as_one_more_range_when_unknown_answers_pass(crowd, query):
    """"unknown" allowed (asked for, or unknown=include): offers without a profile match too, so their range (the
    NULLs of the profile index) is read with the profiles' ranges; none is missed and none is added."""
    filterset = offer_filterset(QueryDict(query))
    assert filterset.is_valid(), filterset.errors
    column, profiles = offer_reads._range_split(filterset)
    assert column == "kubernetes_profile_id" and profiles[-1] is None and None not in profiles[:-1]
    matching = list(offer_reads.offers_filtered(filters=filterset).values_list("kubernetes_profile_id", flat=True))
    assert None in matching and any(matching)  # both kinds of range hold offers of this page
    assert set(matching) <= set(profiles)
    everything = len(matching)
    assert offer_reads.offer_page_ids(filters=filterset, offset=0, limit=everything + 5) == plain_ids(
        filterset, 0, everything + 5)
    strict = offer_filterset(QueryDict("mig=yes"))
    assert strict.is_valid(), strict.errors
    assert None not in offer_reads._range_split(strict)[1]  # left out by default: no range for them


def test_with_a_continent_many_profiles_are_read_in_the_continents_price_order_few_as_ranges(crowd, monkeypatch):
    """One continent asked for: past MAX_RANGES_IN_A_CONTINENT profiles the page walks the continent's own price
    range instead of one range per profile (each of which reads past other continents' offers), or with
    unknown=include its three ranges, one per region basis; fewer stay ranges, and so does a request without a
    continent or with several. The same page either way."""
    managed = offer_filterset(QueryDict("offering=managed&continent=NA"))
    assert managed.is_valid(), managed.errors
    profiles = len(offer_reads._range_split(managed)[1])
    assert profiles > 1
    monkeypatch.setitem(offer_reads.MAX_RANGES_IN_A_CONTINENT, "kubernetes_profile_id", profiles - 1)
    for query, split in (("offering=managed&continent=NA", None), ("offering=managed", "kubernetes_profile_id"),
                         ("offering=managed&continent=NA,EU", "kubernetes_profile_id"),
                         ("offering=managed&continent=NA&unknown=include", "region_confirmed")):
        filterset = offer_filterset(QueryDict(query))
        assert filterset.is_valid(), filterset.errors
        assert (offer_reads._range_split(filterset) or [None])[0] == split, query
        assert offer_reads.offer_page_ids(filters=filterset, offset=2, limit=9) == plain_ids(filterset, 2, 9)
    monkeypatch.setitem(offer_reads.MAX_RANGES_IN_A_CONTINENT, "kubernetes_profile_id", profiles)
    assert offer_reads._range_split(managed)[0] == "kubernetes_profile_id"  # at the limit: still ranges


def test_a_memory_minimum_is_read_one_range_per_memory_size_when_few_sizes_reach_it(crowd, monkeypatch):
    """Sorted by the price per GPU-hour, `gpu_memory_min` reads each memory size from the minimum up as its own
    range (largest first, as the sizes are found); past MAX_MEMORY_RANGES sizes, in another order, or when a list
    of GPUs is read as ranges instead, the plain way. The same page either way."""
    sizes = sorted(set(crowd_offers_memory()), reverse=True)
    assert len(sizes) >= 3
    filterset = offer_filterset(QueryDict(f"gpu_memory_min={sizes[-2]}"))
    assert filterset.is_valid(), filterset.errors
    assert offer_reads._range_split(filterset) == ("gpu_memory_gb", sizes[:-1])
    with_unknown = offer_filterset(QueryDict(f"gpu_memory_min={sizes[-2]}&unknown=include"))
    assert with_unknown.is_valid(), with_unknown.errors
    assert offer_reads._range_split(with_unknown) == ("gpu_memory_gb", [*sizes[:-1], None])
    assert with_unknown.bare_qs.filter(gpu_memory_gb__isnull=True).exists()  # that range holds offers
    everything = with_unknown.bare_qs.count()
    assert offer_reads.offer_page_ids(filters=with_unknown, offset=0, limit=everything) == plain_ids(
        with_unknown, 0, everything)
    monkeypatch.setattr(offer_reads, "MAX_MEMORY_RANGES", 1)
    for query, split in ((f"gpu_memory_min={sizes[1]}", None), (f"gpu_memory_min={sizes[0]}", "gpu_memory_gb"),
                         (f"gpu_memory_min={sizes[0]}&ordering=price_hour", None),
                         (f"gpu_memory_min={sizes[0]}&ordering=-gpu_memory", None),
                         (f"gpu_memory_min={sizes[0]}&gpu=l4,mi300x", "gpu_id"),
                         (f"gpu_memory_min={sizes[0] + 1}", None)):
        filterset = offer_filterset(QueryDict(query))
        assert filterset.is_valid(), filterset.errors
        assert (offer_reads._range_split(filterset) or [None])[0] == split, query
        assert offer_reads.offer_page_ids(filters=filterset, offset=1, limit=8) == plain_ids(filterset, 1, 8)


def crowd_offers_memory():
    from providers.models import Offer

    return Offer.objects.filter(is_active=True, gpu_memory_gb__isnull=False).values_list("gpu_memory_gb", flat=True)


@pytest.mark.parametrize("query", ["continent=NA&unknown=include", "continent=EU&unknown=include&ordering=price_hour",
                                   "mig=yes&continent=NA&unknown=include",
                                   "offering=managed&continent=EU&spot=true&unknown=include",
                                   "continent=EU&gpu_count_min=8&unknown=include&ordering=price_hour"])
@pytest.mark.parametrize(("offset", "limit"), [(0, 5), (3, 9), (0, 200)])
def test_one_continent_with_unknown_regions_is_read_one_range_per_region_basis(crowd, query, offset, limit,
                                                                                monkeypatch):
    """unknown=include in one continent reads its confirmed, catalog-only and unstated regions too: three ranges of
    the (continent, region basis, price) index merged in price order, when no list of GPUs, providers or profiles
    is short enough to be read instead. The same offers, in the same order, as the plain query."""
    monkeypatch.setitem(offer_reads.MAX_RANGES_IN_A_CONTINENT, "kubernetes_profile_id", 0)
    filterset = offer_filterset(QueryDict(query))
    assert filterset.is_valid(), filterset.errors
    assert offer_reads._range_split(filterset) == ("region_confirmed", [True, False, None])
    bases = set(filterset.bare_qs.values_list("region_confirmed", flat=True))
    assert bases == {True, False, None}  # every range holds offers of this query
    expected = plain_ids(filterset, offset, limit)
    assert expected
    assert offer_reads.offer_page_ids(filters=filterset, offset=offset, limit=limit) == expected


@pytest.mark.parametrize("query", ["", "gpu=h100-sxm,l4&ordering=gpu_memory", "gpu_memory_min=80&ordering=-gpu_memory",
                                   "provider=crowd-0,crowd-1&include_inactive=true",
                                   "gpu=l4,h100-sxm&ordering=provider"])
def test_queries_no_index_range_serves_read_the_plain_way(crowd, query):
    filterset = offer_filterset(QueryDict(query))
    assert filterset.is_valid(), filterset.errors
    assert offer_reads._range_split(filterset) is None
    assert offer_reads.offer_page_ids(filters=filterset, offset=3, limit=7) == plain_ids(filterset, 3, 7)
    assert offer_reads.offer_page(filters=filterset, offset=3, limit=7) == offer_reads.offer_rows(
        ids=plain_ids(filterset, 3, 7))


def test_the_api_pages_through_a_merged_query_without_gaps_or_repeats(api, crowd):
    seen, url = [], "/api/v1/offers/?gpu=h100-sxm,l4&page_size=7"
    while url:
        data = api.get(url).json()
        seen += [row["id"] for row in data["results"]]
        url = data["next"]
    filterset = offer_filterset(QueryDict("gpu=h100-sxm,l4"))
    assert filterset.is_valid()
    assert seen == list(filterset.bare_qs.values_list("id", flat=True))
    assert len(seen) == data["count"]


def page_statements(query, offset=0, limit=50):
    """The SQL text, placeholders and all, of every statement on the offers table that one page of the offers list
    and its count send."""
    filterset = offer_filterset(QueryDict(query))
    assert filterset.is_valid(), filterset.errors
    sent = []

    def record(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        rows = offer_reads.offer_page(filters=filterset, offset=offset, limit=limit)
        count = offer_reads.offer_count(filters=filterset)
    return [sql for sql in sent if 'FROM "providers_offer"' in sql or 'JOIN "providers_offer"' in sql], rows, count


@pytest.mark.parametrize(("first", "second"), [
    ("gpu=h100-sxm", "gpu=h100-sxm,l4,mi300x"),  # one range or three
    ("provider=crowd-0,crowd-1", "provider=crowd-0,crowd-1,crowd-2,crowd-3,alpha"),
    ("offering=managed&continent=NA", "offering=byo&continent=EU"),  # other profiles, another continent
    ("offering=managed&continent=NA,EU", "offering=byo&continent=EU,NA"),  # several continents: an array
    ("continent=NA&unknown=include&price_per_gpu_hour_max=3", "continent=EU&unknown=include&price_per_gpu_hour_max=7"),
    ("gpu=l4&price_per_gpu_hour_max=2", "gpu=h100-sxm,l4&price_per_gpu_hour_max=3.5"),
    ("gpu_memory_min=80&price_per_gpu_hour_max=9", "gpu_memory_min=24&price_per_gpu_hour_max=4"),  # 2 sizes or 3
])
def test_the_page_and_count_statements_do_not_change_with_the_values(crowd, first, second):
    """Requests that differ only in their values (how many GPUs, providers or profiles they resolve to, which
    places, which price, which page) send the same statements: one text per set of filters, as the planner and
    pg_stat_statements see it (one continent is a plain equality and several an array: two texts). With IN lists
    and a UNION ALL branch per value, every length of list was a statement of its own; the one branch left is that
    of the offers with no value in the split column (no region basis stated, with unknown=include)."""
    one, rows_one, count_one = page_statements(first)
    two, rows_two, count_two = page_statements(second, offset=5, limit=7)
    assert one and one == two
    assert rows_one and rows_two and count_one and count_two  # both read offers: the statements were not empty
    assert " ".join(one).count("UNION ALL (") == ("unknown=include" in first)
