"""`one_per_machine=true`: a machine (provider, instance type, GPU, count) listed in many regions at the same or
different prices is one row, its cheapest matching region, with how many matching regions it has; the count, the
pages, the API and the CSV agree, and the other filters apply before the choice of the cheapest region."""

import pytest
from django.http import QueryDict

from providers import offer_reads
from providers.filters import offer_filterset
from tests.api.conftest import offer

pytestmark = pytest.mark.django_db


@pytest.fixture
def regions(world):
    """One Alpha machine in five regions (two in Europe), another in one; the world's own offers stay as they are."""
    anchor = world.offers["alpha-h100x8"]
    alpha, source, h100 = anchor.provider, anchor.source, anchor.gpu
    prices = {"us-a": "16.00", "us-b": "14.00", "eu-a": "15.00", "eu-b": "18.00", "ap-a": "14.00"}
    machines = {region: offer("p5.wide", alpha, source, h100, count="8", price=price, region=region,
                              continent="EU" if region.startswith("eu") else "NA")
                for region, price in prices.items()}
    machines["single"] = offer("p4.small", alpha, source, h100, count="1", price="3.00", region="us-a", continent="NA")
    return world, machines


def page(query):
    filterset = offer_filterset(QueryDict(query))
    assert filterset.is_valid(), filterset.errors
    return filterset, offer_reads.offer_page(filters=filterset, offset=0, limit=100)


def test_a_machine_is_one_row_at_its_cheapest_region_with_its_other_regions_counted(regions):
    _world, machines = regions
    filterset, rows = page("one_per_machine=true&provider=alpha")
    wide = [row for row in rows if row["instance_type"] == "p5.wide"]
    # 14.00 twice: the tie goes to the lower id, as every ordering's tiebreak
    assert [(row["region"], row["machine_regions"]) for row in wide] == [("us-b", 5)]
    assert [row["machine_regions"] for row in rows if row["instance_type"] == "p4.small"] == [1]
    everything = offer_filterset(QueryDict("provider=alpha"))
    assert everything.is_valid()
    assert offer_reads.offer_count(filters=filterset).value == offer_reads.offer_count(filters=everything).value - 4
    assert offer_reads.offer_count(filters=filterset) == offer_reads.OfferCount(len(rows), exact=True)


def test_the_other_filters_choose_among_the_matching_regions_first(regions):
    _world, _machines = regions
    _filterset, rows = page("one_per_machine=true&provider=alpha&continent=EU")
    assert [(row["region"], row["machine_regions"]) for row in rows if row["instance_type"] == "p5.wide"] == [
        ("eu-a", 2)]


def test_the_api_and_the_csv_list_the_same_machines(api, regions):
    listed = api.get("/api/v1/offers/?one_per_machine=true&provider=alpha&page_size=100").json()
    regions_listed = [row["region"] for row in listed["results"] if row["instance_type"] == "p5.wide"]
    assert regions_listed == ["us-b"] and listed["count"] == len(listed["results"])
    response = api.get("/api/v1/offers/?one_per_machine=true&provider=alpha&format=csv")
    body = b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()
    assert body.count("p5.wide") == 1


def test_the_offers_page_says_how_many_more_regions_in_both_languages(client, regions):
    html = client.get("/?one_per_machine=true&provider=alpha").content.decode()
    assert "also in 4 more regions" in html
    chinese = client.get("/?one_per_machine=true&provider=alpha", HTTP_ACCEPT_LANGUAGE="zh-hans",
                         follow=True).content.decode()
    assert "另有 4 个地区" in chinese


def test_without_the_option_every_region_is_a_row(regions):
    _filterset, rows = page("provider=alpha")
    assert sum(row["instance_type"] == "p5.wide" for row in rows) == 5
    assert all("machine_regions" not in row for row in rows)


@pytest.mark.parametrize("query", ["provider=alpha&price_per_gpu_hour_max=5", "provider=alpha&gpu_memory_min=1"])
def test_one_row_per_machine_counts_the_machines_that_show_them_would_add_not_their_offers(api, regions, query):
    """With one row per machine, "left out" is what unknown=include adds: machines with an offer left out and none
    shown. p5.wide shows (it has matching regions) though one region is unpriced and of no stated memory; p7.dark is
    unpriced and of no stated memory in both its regions: one machine, two offers."""
    _world, machines = regions
    anchor = machines["us-a"]
    for region in ("us-c", "us-d"):
        offer("p7.dark", anchor.provider, anchor.source, anchor.gpu, count="8", region=region, continent="NA")
    offer("p5.wide", anchor.provider, anchor.source, anchor.gpu, count="8", region="us-e", continent="NA")
    from providers.models import Offer

    Offer.objects.filter(instance_type__in=["p5.wide", "p7.dark"], price_hour_usd=None).update(gpu_memory_gb=None)
    base = f"/api/v1/offers/?one_per_machine=true&{query}&page_size=100"
    kept, shown_all = api.get(base).json(), api.get(f"{base}&unknown=include").json()
    assert kept["left_out_for_unknown"]["total"] == shown_all["count"] - kept["count"] == 1
    assert kept["left_out_for_unknown"]["by_provider"] == {"alpha": 1}
    every_offer = api.get(f"/api/v1/offers/?{query}&page_size=100").json()["left_out_for_unknown"]
    assert every_offer["total"] == 3  # without one row per machine: the three offers themselves


def test_at_an_equal_price_the_row_is_a_region_the_provider_confirms(regions):
    """A catalog may copy a machine into regions its provider does not name: at the same price the row shows one the
    provider confirms, whatever the ids; the cheaper region still wins whatever its basis."""
    from providers.models import Offer

    _world, machines = regions
    Offer.objects.filter(pk=machines["us-b"].pk).update(region_confirmed=False)  # us-b and ap-a: 14.00 each
    _filterset, rows = page("one_per_machine=true&provider=alpha")
    assert [row["region"] for row in rows if row["instance_type"] == "p5.wide"] == ["ap-a"]
    Offer.objects.filter(pk=machines["ap-a"].pk).update(price_hour_usd="120.00", price_per_gpu_hour_usd="15.00")
    _filterset, rows = page("one_per_machine=true&provider=alpha")
    assert [row["region"] for row in rows if row["instance_type"] == "p5.wide"] == ["us-b"]


@pytest.mark.parametrize("query", ["stack=jobset", "stack=jobset&provider=alpha", "rdma=any&mig=yes"])
def test_one_row_per_machine_counts_what_it_leaves_out_when_no_offer_matches_for_sure(api, regions, query):
    """A filter that no machine answers yes to (no provider runs JobSet for sure) matches nothing, so the machines
    it leaves out are all the ones unknown=include adds (it answered 500: the schema fuzzer found it)."""
    kept = api.get(f"/api/v1/offers/?one_per_machine=true&{query}&page_size=100")
    assert kept.status_code == 200, kept.content[:300]
    shown_all = api.get(f"/api/v1/offers/?one_per_machine=true&{query}&unknown=include&page_size=100").json()
    assert kept.json()["left_out_for_unknown"]["total"] == shown_all["count"] - kept.json()["count"]
