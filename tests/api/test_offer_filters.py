"""Every OfferFilterSet parameter, through GET /api/v1/offers/ (the same FilterSet the pages and the digest use):
each keeps exactly the offers it should, and each refuses a bad value with a 400 naming it. Both lists are checked
against the FilterSet itself, so a new filter without a test fails here."""

import re

import pytest
from django.core.exceptions import ValidationError

from providers.filters import OfferFilterSet, multi_valued_parameters
from providers.filters.fields import CatalogChoiceField
from tests.api.conftest import result_ids

pytestmark = pytest.mark.django_db

ACTIVE = {"alpha-h100x8", "alpha-l4", "beta-h100", "beta-mi300x8", "gamma-unknown-gpu"}
ALPHA = {"alpha-h100x8", "alpha-l4"}
BETA = {"beta-h100", "beta-mi300x8"}
GAMMA = {"gamma-unknown-gpu"}

# (filter, query, expected active offers)
CASES = [
    ("gpu", "gpu=h100-sxm", {"alpha-h100x8", "beta-h100"}),
    ("gpu", "gpu=h100-sxm,mi300x", {"alpha-h100x8", "beta-h100", "beta-mi300x8"}),
    ("gpu", "gpu=h100-sxm&gpu=l4", {"alpha-h100x8", "beta-h100", "alpha-l4"}),
    # Catalog values in any case: what a user types from a provider's page (`H100-SXM`, `AWS`).
    ("gpu", "gpu=H100-SXM,h100-sxm", {"alpha-h100x8", "beta-h100"}),
    ("gpu_family", "gpu_family=H100", {"alpha-h100x8", "beta-h100"}),
    ("vendor", "vendor=amd", {"beta-mi300x8"}),
    ("gpu_family", "gpu_family=h100", {"alpha-h100x8", "beta-h100"}),
    ("vendor", "vendor=nvidia", {"alpha-h100x8", "alpha-l4", "beta-h100"}),
    ("gpu_count_min", "gpu_count_min=8", {"alpha-h100x8", "beta-mi300x8"}),
    ("gpu_count_max", "gpu_count_max=1", {"alpha-l4", "beta-h100"}),
    ("gpu_count_max", "gpu_count_min=2&gpu_count_max=4", {"gamma-unknown-gpu"}),
    ("gpu_memory_min", "gpu_memory_min=100", {"beta-mi300x8"}),
    ("gpu_memory_min", "gpu_memory_min=80", {"alpha-h100x8", "beta-h100", "beta-mi300x8"}),
    ("price_per_gpu_hour_max", "price_per_gpu_hour_max=3", {"alpha-l4", "beta-h100", "beta-mi300x8"}),
    ("price_hour_max", "price_hour_max=1", {"alpha-l4"}),
    ("form_factor", "form_factor=sxm", {"alpha-h100x8"}),
    ("form_factor", "form_factor=pcie,nvl", set()),
    ("spot", "spot=true", {"alpha-h100x8"}),
    ("spot", "spot=false", ACTIVE - {"alpha-h100x8"}),
    ("commitment", "commitment=1y", {"alpha-h100x8"}),
    ("commitment", "commitment=3y", {"alpha-h100x8", "alpha-l4"}),
    ("available", "available=true", {"alpha-h100x8", "beta-h100", "gamma-unknown-gpu"}),
    ("available", "available=false", {"alpha-l4"}),  # beta-mi300x8 was never checked: unknown, not sold out
    ("unknown", "available=false&unknown=include", {"alpha-l4", "beta-mi300x8"}),
    ("in_stock_7d_min", "in_stock_7d_min=50", {"alpha-h100x8", "beta-h100"}),
    ("in_stock_7d_min", "in_stock_7d_min=95.5", set()),
    ("in_stock_7d_min", "in_stock_7d_min=0", {"alpha-h100x8", "alpha-l4", "beta-h100"}),  # never checked: unknown
    ("unknown", "in_stock_7d_min=50&unknown=include", {"alpha-h100x8", "beta-h100", "beta-mi300x8",
                                                       "gamma-unknown-gpu"}),
    ("provider", "provider=alpha,gamma", ALPHA | GAMMA),
    ("provider_kind", "provider_kind=gpu_cloud", BETA),
    ("provider", "provider=ALPHA,Gamma", ALPHA | GAMMA),
    ("provider_kind", "provider_kind=hyperscaler,marketplace", ALPHA | GAMMA),
    ("country", "country=us,JP", {"alpha-h100x8", "beta-h100", "beta-mi300x8"}),
    ("continent", "continent=EU", {"alpha-l4", "gamma-unknown-gpu"}),
    ("region", "region=US-EAST-1", {"alpha-h100x8"}),
    ("search", "search=h100", {"alpha-h100x8", "beta-h100"}),
    ("search", "search=H100%20tokyo", {"beta-h100"}),
    ("search", "search=alpha-l4", {"alpha-l4"}),
    ("search", "search=instinct", {"beta-mi300x8"}),  # the catalog GPU's name, not the offer's
    ("offering", "offering=byo", BETA),
    ("offering", "offering=managed", ALPHA | GAMMA),
    ("offering", "offering=none", set()),
    ("offering", "offering=unknown", set()),
    ("gpu_operator", "gpu_operator=preinstalled", ALPHA),
    ("gpu_operator", "gpu_operator=add_on,user_installs", BETA | GAMMA),
    ("rdma", "rdma=infiniband", {"alpha-h100x8"}),
    ("rdma", "rdma=roce", BETA),
    ("rdma", "rdma=any", {"alpha-h100x8"} | BETA),
    ("rdma", "rdma=none", {"alpha-l4"}),
    ("rdma", "rdma=unknown", GAMMA),
    ("rdma", "rdma=efa,tcpx", set()),
    ("rdma", "rdma=multinode", {"alpha-h100x8"} | BETA),
    ("rdma", "rdma=gpudirect_tcpxo", set()),  # an earlier release's choice, read as tcpx
    ("rdma", "rdma=rdma_unspecified", {"alpha-h100x8"} | BETA),  # an earlier release's choice, read as any
    ("control_plane_fee_max", "control_plane_fee_max=0.05", GAMMA),
    ("control_plane_fee_max", "control_plane_fee_max=0.10", ALPHA | GAMMA),
    ("documented_only", "mps=not_on_this_machine", {"beta-h100"}),
    ("documented_only", "mps=not_on_this_machine&documented_only=true", set()),
    ("documented_only", "mps=unknown&documented_only=true", {"beta-h100"} | GAMMA),
    # beta's catalog is a file pinned at a commit (its revision) that states no date: however recently a run read
    # it, its offers are not "seen within" any number of hours (the API sources' undated offers are, by last_seen).
    ("seen_within_hours", "seen_within_hours=24", ACTIVE - {"beta-mi300x8", "beta-h100"}),
    ("seen_within_hours", "seen_within_hours=1.5", ACTIVE - {"beta-mi300x8", "beta-h100"}),
    ("unknown", "seen_within_hours=24&unknown=include", ACTIVE),
    ("include_inactive", "include_inactive=true", ACTIVE | {"gamma-gone"}),
    ("include_inactive", "include_inactive=false", ACTIVE),
    # every offer of the world is its own machine; several regions of one: tests/api/test_one_per_machine.py
    ("one_per_machine", "one_per_machine=true", ACTIVE),
    ("mig", "mig=yes", {"alpha-h100x8"}),
    ("mig", "mig=no", {"alpha-l4"}),
    ("mig", "mig=n/a", {"beta-mi300x8"}),
    ("mig", "mig=unknown", {"beta-h100"} | GAMMA),
    ("mps", "mps=no", ALPHA),
    ("time_slicing", "time_slicing=yes", ALPHA),
    ("time_slicing", "time_slicing=no", {"beta-h100"}),
    ("time_slicing", "time_slicing=n/a", {"beta-mi300x8"}),
    ("vendor_sharing", "vendor_sharing=n/a", BETA),
    ("vendor_sharing", "vendor_sharing=no,unknown", ALPHA | GAMMA),
    ("node_autoscaling", "node_autoscaling=no", BETA),
    ("node_autoscaling", "node_autoscaling=yes", ALPHA),
    ("scale_to_zero", "scale_to_zero=yes", ALPHA),
    ("spot_nodes", "spot_nodes=no", BETA),
    ("rwx_storage", "rwx_storage=yes", ALPHA),
    ("gang_scheduling", "gang_scheduling=yes", ALPHA),
    ("gang_scheduling", "gang_scheduling=unknown", GAMMA),
    ("ordering", "ordering=provider", ACTIVE),
    ("unknown", "form_factor=sxm&unknown=include", ACTIVE),  # the others state no form factor
    ("unknown", "gpu_memory_min=100&unknown=include", {"beta-mi300x8", "gamma-unknown-gpu"}),  # no memory stated
    ("unknown", "price_per_gpu_hour_max=3&unknown=include", ACTIVE - {"alpha-h100x8"}),  # gamma states no price
    ("unknown", "price_hour_max=1&unknown=include", {"alpha-l4", "gamma-unknown-gpu"}),
    ("unknown", "rdma=any&unknown=include", ACTIVE - {"alpha-l4"}),  # gamma's fabric is unknown
    ("unknown", "rdma=any&unknown=exclude", {"alpha-h100x8"} | BETA),
    ("rdma", "rdma=yes&unknown=exclude", {"alpha-h100x8"} | BETA),  # `yes` is read as `any`
    ("rdma", "rdma=true,efa", {"alpha-h100x8"} | BETA),
    ("unknown", "rdma=any&mig=yes&unknown=include", {"alpha-h100x8", "beta-h100"} | GAMMA),  # beta-h100: MIG unknown
    ("gpu", "gpu=h100-sxm&provider=beta&available=true&mig=unknown", {"beta-h100"}),
    # node software: no node images or calendars are recorded for these providers, so nothing is known to fit
    # (the answers over real providers: tests/nodesoftware/test_filters.py)
    ("cuda", "cuda=12.8", set()),
    ("k8s_version", "k8s_version=1.35", set()),
    ("dra", "dra=unknown", ACTIVE),
    ("dra", "dra=yes,partial", set()),
    ("stack", "stack=slurm", set()),
    # ... and none is left out silently: unknown=include brings every one of them back, marked unknown.
    ("cuda", "cuda=12.8&unknown=include", ACTIVE),
    ("k8s_version", "k8s_version=1.35&unknown=include", ACTIVE),
    ("dra", "dra=yes&unknown=include", ACTIVE),
    ("stack", "stack=slurm&unknown=include", ACTIVE),
]

# (filter, bad value) -> the 400 must name the filter.
BAD = [
    ("form_factor", "oam"),
    ("gpu", "h100"), ("gpu_family", "H999"), ("vendor", "ibm"), ("gpu_count_min", "-1"), ("gpu_count_max", "eight"),
    ("gpu_memory_min", "-1"), ("price_per_gpu_hour_max", "NaN"), ("price_hour_max", "1e400"), ("spot", "maybe"),
    ("commitment", "2y"),
    ("available", "2"), ("in_stock_7d_min", "101"), ("provider", "alpha,nope"), ("provider_kind", "cloud"),
    ("country", "USA"),
    ("continent", "XX"), ("region", "us\x00east"), ("search", "x" * 201), ("offering", "serverless"),
    ("gpu_operator", "n/a"),
    ("rdma", "nvlink"), ("control_plane_fee_max", "-0.1"), ("documented_only", "perhaps"),
    ("one_per_machine", "perhaps"),
    ("seen_within_hours", "100000"), ("include_inactive", "all"), ("ordering", "price"), ("mig", "true"),
    ("mps", "y"), ("time_slicing", "1"), ("vendor_sharing", "cgpu"), ("node_autoscaling", "maybe"),
    ("scale_to_zero", "zero"), ("spot_nodes", "spot"), ("rwx_storage", "nfs"), ("gang_scheduling", "kueue"),
    ("cuda", "12"), ("k8s_version", "1.x"), ("dra", "maybe"), ("stack", "pbs"),
    ("unknown", "maybe"),
]


def test_every_filter_has_a_behaviour_case_and_a_bad_value_case():
    filters = set(OfferFilterSet.base_filters)
    assert {name for name, _, _ in CASES} == filters
    assert {name for name, _ in BAD} == filters


@pytest.mark.parametrize(("name", "query", "expected"), CASES, ids=[case[1] for case in CASES])
def test_filter_keeps_exactly_the_matching_offers(api, world, name, query, expected):
    response = api.get(f"/api/v1/offers/?{query}&page_size=100")
    assert set(result_ids(response)) == world.ids(*expected)
    assert response.json()["count"] == len(expected)


@pytest.mark.parametrize(("name", "value"), BAD, ids=[name for name, _ in BAD])
def test_filter_refuses_a_bad_value_with_a_400_naming_it(api, world, name, value):
    response = api.get("/api/v1/offers/", {name: value})
    assert response.status_code == 400
    body = response.json()
    assert list(body) == [name]
    assert body[name] and all(isinstance(message, str) and message for message in body[name])


def test_a_catalog_value_is_read_in_any_case_only_when_one_value_matches():
    field = CatalogChoiceField(choices=[("H100", "H100"), ("l4", "L4"), ("Ab", "Ab"), ("aB", "aB")])
    assert field.clean(["h100,L4", "H100"]) == ["H100", "l4"]
    assert field.clean("aB") == ["aB"]  # an exact match wins
    for value in ("ab", "h100x"):  # two values ignoring case; none
        with pytest.raises(ValidationError, match=value):
            field.clean(value)


@pytest.mark.parametrize("value", ["true", "1", "yes", "on", "TRUE"])
def test_yes_no_filters_accept_the_usual_spellings(api, world, value):
    assert set(result_ids(api.get("/api/v1/offers/", {"spot": value}))) == world.ids("alpha-h100x8")


def test_empty_values_mean_no_filter(api, world):
    response = api.get("/api/v1/offers/?gpu=&spot=&price_per_gpu_hour_max=&country=&page_size=100")
    assert set(result_ids(response)) == world.ids(*ACTIVE)


@pytest.mark.parametrize(("ordering", "expected"), [
    ("", ["alpha-l4", "beta-h100", "beta-mi300x8", "alpha-h100x8", "gamma-unknown-gpu"]),
    ("price_per_gpu_hour", ["alpha-l4", "beta-h100", "beta-mi300x8", "alpha-h100x8", "gamma-unknown-gpu"]),
    ("-price_per_gpu_hour", ["alpha-h100x8", "beta-mi300x8", "beta-h100", "alpha-l4", "gamma-unknown-gpu"]),
    ("price_hour", ["alpha-l4", "beta-h100", "beta-mi300x8", "alpha-h100x8", "gamma-unknown-gpu"]),
    # Equal memory (80 GB): the cheaper per GPU-hour first, either way.
    ("-gpu_memory", ["beta-mi300x8", "beta-h100", "alpha-h100x8", "alpha-l4", "gamma-unknown-gpu"]),
    ("gpu_memory", ["alpha-l4", "beta-h100", "alpha-h100x8", "beta-mi300x8", "gamma-unknown-gpu"]),
    ("provider,-price_hour", ["alpha-h100x8", "alpha-l4", "beta-mi300x8", "beta-h100", "gamma-unknown-gpu"]),
    ("-provider", ["gamma-unknown-gpu", "beta-h100", "beta-mi300x8", "alpha-l4", "alpha-h100x8"]),
    ("provider", ["alpha-l4", "alpha-h100x8", "beta-h100", "beta-mi300x8", "gamma-unknown-gpu"]),
])
def test_ordering_puts_unknown_values_last_and_breaks_ties_by_price_then_id(api, world, ordering, expected):
    response = api.get("/api/v1/offers/", {"ordering": ordering} if ordering else {})
    assert result_ids(response) == [world.offers[name].id for name in expected]


def test_each_filterset_has_its_own_filters_bound_to_itself():
    """Filters are copied cheaply per FilterSet (providers.filters.CopiedCheaply): each copy, and each `method=`
    filter's callback, must belong to its own FilterSet, never to the class's or another request's."""
    first, second = OfferFilterSet({"spot": "true"}), OfferFilterSet({"spot": "false"})
    for filterset in (first, second):
        for name, filter_ in filterset.filters.items():
            assert filter_ is not OfferFilterSet.base_filters[name]
            assert filter_.parent is filterset
            if filter_.method is not None:
                assert filter_.filter.f is filter_
    assert first.form is not second.form
    assert first.form.fields["spot"] is not second.form.fields["spot"]


def test_each_form_gets_its_own_fields_and_widgets():
    """Fields are copied cheaply per form (filters.FieldsCopiedCheaply): what one request changes on its form must
    not reach another request's form or the class."""
    from django.http import QueryDict

    from providers.filters import OfferFilterSet

    first, second = OfferFilterSet(QueryDict("")).form, OfferFilterSet(QueryDict("")).form
    base = type(first).base_fields
    for name in base:
        assert first.fields[name] is not second.fields[name] is not base[name], name
        assert first.fields[name].widget is not second.fields[name].widget, name
        assert first.fields[name].widget.attrs is not second.fields[name].widget.attrs, name
    first.fields["vendor"].choices = [("nvidia", "NVIDIA only")]
    first.fields["gpu_count_min"].widget.attrs["data-x"] = "1"
    assert list(second.fields["vendor"].choices) == list(base["vendor"].choices) != [("nvidia", "NVIDIA only")]
    assert list(second.fields["vendor"].widget.choices) == list(base["vendor"].widget.choices)
    assert "data-x" not in second.fields["gpu_count_min"].widget.attrs
    assert "data-x" not in base["gpu_count_min"].widget.attrs


def test_seen_within_filters_on_the_datas_own_date_not_on_when_we_read_it(api, world):
    """A replayed recording is read now but dated by its file: 'seen within 24 hours' must not match it, while an
    offer a live run listed (no stated date, its source's last live success recent) still matches."""
    from datetime import timedelta

    from django.utils import timezone

    from providers.models import DataSource, Offer

    old = world.offers["gamma-unknown-gpu"]
    Offer.objects.filter(pk=old.pk).update(price_as_of=timezone.now() - timedelta(days=30))
    ids = set(result_ids(api.get("/api/v1/offers/?seen_within_hours=24")))
    assert old.pk not in ids and world.offers["alpha-h100x8"].pk in ids
    # A source never confirmed live (the bundled snapshot) matches only by its files' stated dates.
    DataSource.objects.filter(pk=world.sources["alpha"].pk).update(last_success_at=None)
    ids = set(result_ids(api.get("/api/v1/offers/?seen_within_hours=24")))
    assert world.offers["alpha-h100x8"].pk not in ids
    Offer.objects.filter(pk=world.offers["alpha-l4"].pk).update(price_as_of=timezone.now() - timedelta(hours=3))
    assert world.offers["alpha-l4"].pk in set(result_ids(api.get("/api/v1/offers/?seen_within_hours=24")))


def test_seen_within_never_matches_an_undated_file_pinned_at_a_commit_however_recently_read(api, world):
    """A catalog file at a pinned commit (the source's revision; SkyPilot's copies whose commit date GitHub did not
    give) read by a live run a minute ago is as old as its commit, not a minute old."""
    from django.utils import timezone

    from providers.models import DataSource, Offer

    offer = world.offers["alpha-h100x8"]
    Offer.objects.filter(pk=offer.pk).update(price_as_of=None, last_seen=timezone.now())
    DataSource.objects.filter(pk=offer.source_id).update(last_success_at=timezone.now())
    assert offer.pk in set(result_ids(api.get("/api/v1/offers/?seen_within_hours=1")))
    DataSource.objects.filter(pk=offer.source_id).update(revision="0f4070387edc953d7004cff197940e1918a1d6aa")
    assert offer.pk not in set(result_ids(api.get("/api/v1/offers/?seen_within_hours=1")))


def test_a_number_with_more_places_than_the_column_is_rounded_not_refused(api, world):
    """The schema promises any number: 2.500000001 is compared as the column stores prices (5 places)."""
    response = api.get("/api/v1/offers/?price_per_gpu_hour_max=2.500000001&gpu_memory_min=1e-400")
    assert response.status_code == 200
    assert response.json()["count"] == api.get("/api/v1/offers/?price_per_gpu_hour_max=2.5").json()["count"]


def test_a_fee_that_is_paid_without_a_stated_amount_never_passes_a_maximum_fee(api, world):
    from providers.models import Capability

    Capability.objects.filter(provider__slug="gamma", key="control_plane_fee").update(value="paid_unstated")
    response = api.get("/api/v1/offers/", {"control_plane_fee_max": "100"})
    assert set(result_ids(response)) == world.ids(*ALPHA)
    # ... but whether it is under the maximum is unknown: counted, and back with unknown=include
    left_out = response.json()["left_out_for_unknown"]
    assert (left_out["total"], left_out["by_provider"], left_out["questions"]) == (1, {"gamma": 1},
                                                                                   ["control_plane_fee_max"])
    response = api.get("/api/v1/offers/", {"control_plane_fee_max": "100", "unknown": "include"})
    assert set(result_ids(response)) == world.ids(*ALPHA, *GAMMA)


def test_an_offer_sold_as_spot_whose_spot_price_is_not_published_is_unknown_to_spot_true(api, world):
    from providers.models import Offer

    # as AWS's offers: the Spot Instance Advisor states the savings, not the spot price
    Offer.objects.filter(instance_type="alpha-l4").update(spot_savings_pct=67)
    response = api.get("/api/v1/offers/", {"spot": "true"})
    assert set(result_ids(response)) == world.ids("alpha-h100x8")
    left_out = response.json()["left_out_for_unknown"]
    assert (left_out["total"], left_out["by_provider"], left_out["questions"]) == (1, {"alpha": 1}, ["spot"])
    response = api.get("/api/v1/offers/", {"spot": "true", "unknown": "include"})
    assert set(result_ids(response)) == world.ids("alpha-h100x8", "alpha-l4")
    # an offer with neither a spot price nor a stated saving is a no; spot=false still lists every offer without a
    # spot price, and leaves nothing out
    body = api.get("/api/v1/offers/", {"spot": "false"}).json()
    assert {row["id"] for row in body["results"]} == world.ids(*(ACTIVE - {"alpha-h100x8"}))
    assert body["left_out_for_unknown"]["total"] == 0


def test_a_provider_with_no_fee_answer_or_a_fee_in_a_currency_without_a_rate_is_unknown_under_a_maximum_fee(api,
                                                                                                            world):
    from providers.models import Capability

    Capability.objects.filter(provider__slug="gamma", key="control_plane_fee").delete()
    Capability.objects.filter(provider__slug="alpha", key="control_plane_fee").update(currency="XTS")  # no rate
    left_out = api.get("/api/v1/offers/", {"control_plane_fee_max": "1"}).json()["left_out_for_unknown"]
    assert left_out["by_provider"] == {"alpha": 2, "gamma": 1}
    Capability.objects.filter(provider__slug="alpha", key="control_plane_fee").update(currency="USD", amount="2")
    body = api.get("/api/v1/offers/", {"control_plane_fee_max": "1"}).json()
    assert body["count"] == 0 and body["left_out_for_unknown"]["by_provider"] == {"gamma": 1}  # alpha's is a no


@pytest.mark.parametrize("path", ["/api/v1/offers.csv", "/api/v1/offers.csv?page=1", "/api/v1/offers/?format=csv"])
def test_a_csv_says_what_its_filters_left_out_in_headers(api, world, path):
    """A CSV holds rows only: streamed or paged, it gives the JSON's left-out count and questions as headers, and
    the browsers of other sites may read them."""
    from providers.models import Capability

    Capability.objects.filter(provider__slug="gamma", key="control_plane_fee").delete()
    left_out = api.get("/api/v1/offers/", {"control_plane_fee_max": "1"}).json()["left_out_for_unknown"]
    joined = "&" if "?" in path else "?"
    response = api.get(f"{path}{joined}control_plane_fee_max=1", HTTP_ORIGIN="https://example.org")
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv") and body
    assert left_out["total"] >= 1 and response["Left-Out-For-Unknown"] == str(left_out["total"])
    assert response["Left-Out-Questions"] == "control_plane_fee_max"
    assert "Left-Out-For-Unknown" in response["Access-Control-Expose-Headers"]
    nothing = api.get(f"{path}{joined}provider=gamma")
    assert nothing["Left-Out-For-Unknown"] == "0" and not nothing.has_header("Left-Out-Questions")


@pytest.mark.parametrize("ordering", ["provider", "-provider", "gpu_count", "-gpu_count", "gpu_memory", "-last_seen",
                                      "spot_price_per_gpu_hour"])
def test_every_ordering_lists_equal_values_cheapest_first_on_the_page_as_in_the_api(api, client, world, ordering):
    """The tiebreak is the FilterSet's, so the offers page lists rows in the API's order."""
    filterset = OfferFilterSet({"ordering": ordering})
    assert filterset.is_valid()
    terms = [str(term) for term in filterset.bare_qs.query.order_by]
    assert "price_per_gpu_hour_usd" in terms[-2] and terms[-1] == "id"
    api_ids = result_ids(api.get("/api/v1/offers/", {"ordering": ordering}))
    page = client.get("/", {"ordering": ordering}).content.decode()
    assert [int(pk) for pk in re.findall(r'<a href="/offers/(\d+)/"><code>', page)] == api_ids


@pytest.mark.parametrize("ordering", ["price_per_gpu_hour", "-price_hour", "provider,price_hour"])
def test_an_ordering_by_price_gets_only_the_id_tiebreak(ordering):
    """So the price indexes keep serving it (offer_reads.RANGE_INDEXED reads the ordering's columns)."""
    filterset = OfferFilterSet({"ordering": ordering})
    assert filterset.is_valid()
    terms = [str(term) for term in filterset.bare_qs.query.order_by]
    assert len(terms) == len(ordering.split(",")) + 1 and terms[-1] == "id"


@pytest.mark.parametrize(("query", "total", "by_provider", "questions"), [
    ("rdma=any", 1, {"gamma": 1}, ["rdma"]),  # gamma's fabric is unknown; alpha-l4's is a plain network (a no)
    ("rdma=any&mig=yes", 2, {"beta": 1, "gamma": 1}, ["mig", "rdma"]),  # beta-h100: MIG unknown
    ("form_factor=sxm", 4, {"alpha": 1, "beta": 2, "gamma": 1}, ["form_factor"]),
    ("gpu_memory_min=80", 1, {"gamma": 1}, ["gpu_memory_min"]),  # the offer whose GPU, so memory, is not known
    ("gpu_memory_min=0", 1, {"gamma": 1}, ["gpu_memory_min"]),  # a minimum of 0 still asks for a stated memory
    ("price_per_gpu_hour_max=3", 1, {"gamma": 1}, ["price_per_gpu_hour_max"]),  # gamma's machine has no price
    ("price_hour_max=1000&gpu_memory_min=80", 1, {"gamma": 1}, ["gpu_memory_min", "price_hour_max"]),
    ("price_hour_max=1&spot=true", 0, {}, []),  # the unpriced offer has no spot price either
    # named only when an offer left out is unknown for it: every fee is known, gamma's fabric is not
    ("rdma=any&control_plane_fee_max=100", 1, {"gamma": 1}, ["rdma"]),
    ("rdma=any&seen_within_hours=24", 3, {"beta": 2, "gamma": 1}, ["rdma", "seen_within_hours"]),
    ("available=false", 1, {"beta": 1}, ["available"]),  # never checked: not counted as sold out
    ("available=true", 1, {"beta": 1}, ["available"]),
    ("in_stock_7d_min=0", 2, {"beta": 1, "gamma": 1}, ["in_stock_7d_min"]),
    # beta's file is pinned at a commit and states no date: how old its prices are is unknown, not "older"
    ("seen_within_hours=24", 2, {"beta": 2}, ["seen_within_hours"]),
    ("control_plane_fee_max=0.05", 0, {}, []),  # every fee is known: free, paid or n/a
    ("rdma=unknown", 0, {}, []),  # asking for unknown leaves none out for being unknown
    ("gpu=h100-sxm", 0, {}, []),  # not a question whose answer can be unknown
    ("rdma=any&unknown=include", 0, {}, []),
    # node software: nothing is recorded for these providers, so every active offer is unknown, and counted
    ("cuda=12.8", 5, {"alpha": 2, "beta": 2, "gamma": 1}, ["cuda"]),
    ("stack=slurm", 5, {"alpha": 2, "beta": 2, "gamma": 1}, ["stack"]),
    ("dra=unknown", 0, {}, []),
])
def test_the_list_says_how_many_offers_it_left_out_for_an_unknown_answer(api, world, query, total, by_provider,
                                                                         questions):
    body = api.get(f"/api/v1/offers/?{query}").json()
    left_out = body["left_out_for_unknown"]
    assert (left_out["total"], left_out["by_provider"], left_out["questions"]) == (total, by_provider, questions)
    if total:
        # exactly the offers unknown=include adds
        everything = api.get(f"/api/v1/offers/?{query}&unknown=include&page_size=100").json()
        assert everything["count"] == body["count"] + total
    assert list(body)[-1] == "results"


def test_offers_left_out_for_an_unknown_answer_are_counted_exactly_up_to_the_limit_then_more_than(api, world,
                                                                                                 monkeypatch):
    from providers import coverage

    exact = api.get("/api/v1/offers/?form_factor=sxm").json()["left_out_for_unknown"]
    assert (exact["total"], exact["exact"]) == (4, True)
    monkeypatch.setattr(coverage, "COUNT_EXACT_UP_TO", 4)  # at the limit: still exact
    assert api.get("/api/v1/offers/?form_factor=sxm&ordering=-gpu_count").json()["left_out_for_unknown"]["exact"]
    monkeypatch.setattr(coverage, "COUNT_EXACT_UP_TO", 3)  # past it: "more than 3", providers among those counted
    capped = api.get("/api/v1/offers/?form_factor=sxm&ordering=provider").json()["left_out_for_unknown"]
    assert (capped["total"], capped["exact"]) == (3, False)
    assert sum(capped["by_provider"].values()) == 4 and set(capped["by_provider"]) <= {"alpha", "beta", "gamma"}


def _two_values(name: str) -> list[str]:
    if name == "country":
        return ["us", "JP"]
    if name == "ordering":
        return ["provider", "-gpu_count"]
    return [str(value) for value, _ in OfferFilterSet().form.fields[name].choices if value][:2]


@pytest.mark.parametrize("name", sorted(OfferFilterSet.base_filters))
def test_a_list_filter_reads_repeated_keys_as_its_comma_form_and_any_other_filter_refuses_them(api, world, name):
    """What generated clients send for an array (`?ordering=a&ordering=b`) is the comma list; a single-value
    parameter given twice is a 400 naming it, never one of its values kept silently."""
    from urllib.parse import parse_qs, urlencode

    if name in multi_valued_parameters():
        first, second = _two_values(name)
        comma = api.get("/api/v1/offers/", {name: f"{first},{second}", "page_size": 100})
        repeated = api.get(f"/api/v1/offers/?{urlencode([(name, first), (name, second)])}&page_size=100")
        assert comma.status_code == repeated.status_code == 200, repeated.json()
        assert result_ids(comma) == result_ids(repeated)
    else:
        value = next(parse_qs(query)[name][0] for case, query, _ in CASES if case == name and name in parse_qs(query))
        response = api.get(f"/api/v1/offers/?{urlencode([(name, value), (name, value)])}")
        assert response.status_code == 400
        assert list(response.json()) == [name]


@pytest.mark.parametrize("query", ["page=1&page=2", "page_size=5&page_size=5", "format=json&format=csv",
                                   "kubernetes_reasons=true&kubernetes_reasons=false"])
def test_a_page_or_format_parameter_given_twice_is_a_400_naming_it(api, world, query):
    response = api.get(f"/api/v1/offers/?{query}")
    assert response.status_code == 400
    assert list(response.json()) == [query.split("=")[0]]


def test_ordering_by_a_commitment_price_lists_the_cheapest_first_and_offers_without_one_last(api, world):
    response = api.get("/api/v1/offers/?ordering=commit_3y_price_per_gpu_hour&page_size=100")
    ids = result_ids(response)
    assert ids[:2] == [world.offers["alpha-l4"].id, world.offers["alpha-h100x8"].id]  # 0.4, then 36 / 8 = 4.5
    body = {row["instance_type"]: row for row in response.json()["results"]}
    assert body["alpha-h100x8"]["commit_1y_price_per_gpu_hour_usd"] == 7.0
    assert body["beta-h100"]["commit_3y_price_per_gpu_hour_usd"] is None
    descending = result_ids(api.get("/api/v1/offers/?ordering=-commit_1y_price_per_gpu_hour&page_size=100"))
    assert descending[0] == world.offers["alpha-h100x8"].id
