"""POST /api/v1/advise/ and the advisor page against the test database: hand-computed ranking end to end, bad input
as a 400 naming the field, the same result through both doors, a fixed number of queries, both languages."""

import json
from datetime import date
from decimal import Decimal as D

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from advisor.serializers import AdviceOutputSerializer
from providers.facts_sync import instance_facts_sync
from providers.kubernetes import Fact
from providers.kubernetes_profiles import offer_kubernetes_refresh
from providers.models import Capability, GpuModel, Offer
from tests.factories import DataSourceFactory, ProviderFactory

pytestmark = pytest.mark.django_db

SOURCE = "https://docs.example.org/"


@pytest.fixture
def h100():
    return GpuModel.objects.create(
        slug="h100", name="NVIDIA H100 80GB", vendor="nvidia", family="H100", architecture="Hopper",
        memory_gb=D(80), form_factor="unspecified",
        mig_profiles=["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"],
        mig_source_url="https://docs.nvidia.com/datacenter/tesla/mig-user-guide/",
        source_url="https://www.nvidia.com/en-us/data-center/h100/", verified_on=date(2026, 11, 1),
    )


def provider_with(slug, **answers):
    provider = ProviderFactory(slug=slug, name=slug.title())
    for key, value in answers.items():
        amount = currency = None
        if isinstance(value, tuple):
            value, amount, currency = value
        Capability.objects.create(provider=provider, key=key, value=value, amount=amount, currency=currency or "",
                                  source_url=f"{SOURCE}{slug}/{key}", verified_on=date(2026, 11, 1),
                                  confidence="documented")
    return provider


def add_offer(provider, gpu, *, instance, price, gpus="2", spot=None, country="US", continent="NA", memory=None):
    source = DataSourceFactory(slug=f"{provider.slug}-api", provider=provider)
    now = timezone.now()
    return Offer.objects.create(
        provider=provider, source=source, instance_type=instance, region="r1", country=country, continent=continent,
        gpu=gpu, gpu_name=gpu.name, gpu_count=D(gpus), gpu_memory_gb=memory, currency="USD",
        price_hour=D(price), price_hour_usd=D(price), price_per_gpu_hour_usd=D(price) / D(gpus),
        spot_price_hour=D(spot) if spot else None, spot_price_hour_usd=D(spot) if spot else None,
        first_seen=now, last_seen=now,
    )


@pytest.fixture
def market(h100):
    known = provider_with("known", offering="managed", control_plane_fee=("paid", D("0.10"), "USD"),
                          scale_to_zero="yes", spot_nodes="yes", mig="yes")
    unknown_fee = provider_with("unknownfee", offering="managed", scale_to_zero="yes")
    no_k8s = provider_with("nok8s", offering="none")
    offers = {
        "known": add_offer(known, h100, instance="k-2x", price="4.00"),
        "unknown_fee": add_offer(unknown_fee, h100, instance="u-2x", price="3.00", country="DE", continent="EU"),
        "no_k8s": add_offer(no_k8s, h100, instance="n-2x", price="1.00"),
    }
    # Each machine's own answers: the two managed providers document these types as nodes of their Kubernetes.
    for slug in ("known", "unknownfee"):
        instance_facts_sync(provider_slug=slug, origin="curated", facts=[Fact(
            "*", "managed_node", "yes", source_url=f"{SOURCE}{slug}/nodes", verified_on=date(2026, 11, 1),
            confidence="documented")])
    offer_kubernetes_refresh()
    return offers


BATCH = {"kind": "batch", "gpu": "h100", "gpus_per_node": 2, "nodes": 2}


def advise(client, body):
    return client.post(reverse("api-advise"), json.dumps(body), content_type="application/json")


def test_api_ranks_by_hand_computed_monthly_cost_and_never_assumes_an_unknown_fee(client, market):
    response = advise(client, BATCH)
    assert response.status_code == 200
    data = response.json()
    rows = lambda group: [(o["offer"]["provider"]["slug"], o["cost"]["total_usd"], o["cost"]["complete"])  # noqa: E731
                          for o in data[group]]
    # known: 2 nodes x 730 h x 4.00 + 0.10 x 730 = 5840 + 73; unknownfee: 2 x 730 x 3.00, fee left out
    assert rows("options") == [("known", 5913.0, True)]
    assert rows("unverified") == [("unknownfee", 4380.0, False)]
    assert data["unverified"][0]["unverified"] == ["control_plane_fee"]
    assert data["excluded_missing"] == {"kubernetes": 1}  # the provider without Kubernetes
    assert data["unverified"][0]["cost"]["control_plane_usd"] is None
    assert [f["code"] for f in data["unverified"][0]["cost"]["flags"]] == ["fee_unknown"]


def test_every_judgement_links_to_its_capability_source(client, market):
    data = advise(client, BATCH).json()
    judgement = {j["key"]: j for j in data["options"][0]["requirements"]}["kubernetes"]
    assert judgement["status"] == "met"
    # The machine's own answer: the instance-type fact that makes k-2x a node of the provider's managed Kubernetes.
    assert judgement["evidence"][0]["source_url"] == f"{SOURCE}known/nodes"


def test_location_accepts_countries_or_continents(client, market):
    def providers(body):
        data = advise(client, body).json()
        return {o["offer"]["provider"]["slug"] for o in data["options"] + data["unverified"]}

    assert providers({**BATCH, "countries": ["de"]}) == {"unknownfee"}
    assert providers({**BATCH, "countries": ["DE"], "continents": ["NA"]}) == {"known", "unknownfee"}


def test_api_returns_mig_packing_slice_prices_and_a_manifest(client, market):
    body = {"kind": "inference", "models": [{"count": 6, "memory_gb": 9}, {"count": 2, "memory_gb": 35}],
            "sharing": "mig", "countries": ["US"]}
    data = advise(client, body).json()
    (option,) = data["options"]  # nok8s is left out; unknownfee is in DE
    assert (option["offer"]["provider"]["slug"], option["gpus_needed"], option["cost"]["instances"]) == ("known", 2, 1)
    assert data["packing"]["mig_gpus"] == 2 and data["packing"]["whole_gpus"] == 8
    # 4.00 per 2-GPU hour = 2.00 per GPU-hour; 1g.10gb: 7 per GPU -> 0.2857; 3g.40gb: 2 per GPU -> 1.0000
    assert [(p["profile"], p["usd_per_slice_hour"]) for p in data["mig_slice_prices"]] == [
        ("1g.10gb", 0.2857), ("3g.40gb", 1.0)]
    assert "nvidia.com/mig-1g.10gb" in data["manifest"]["yaml"]


def test_api_break_even_against_the_best_complete_option(client, market):
    body = {**BATCH, "purchase_price_usd": 59130, "power_usd_month": 500, "operations_usd_month": 413}
    data = advise(client, body).json()
    # rent 5913 a month, own 913 a month -> 59130 / 5000 = 11.826 -> 11.8 months
    assert data["break_even"]["months"] == 11.8


@pytest.mark.parametrize("body, field", [
    ({"kind": "teleport", "gpu": "h100"}, "kind"),
    ({"kind": "batch", "gpu": "no-such-gpu"}, "gpu"),
    ({"kind": "batch"}, "gpu"),
    ({**BATCH, "nodes": 0}, "nodes"),
    ({**BATCH, "hours_per_month": 800}, "hours_per_month"),
    ({**BATCH, "hours_per_month": 100, "utilisation_percent": 50}, "hours_per_month"),
    ({**BATCH, "countries": ["Germany"]}, "countries"),
    # Two letters but no country: the United Kingdom's code is GB, and EU is a union, not an ISO 3166-1 code.
    ({**BATCH, "countries": ["uk"]}, "countries"),
    ({**BATCH, "countries": ["EU"]}, "countries"),
    # A misspelt field is refused, not dropped (the advice would silently be for one replica).
    ({**BATCH, "replica": 2}, "replica"),
    ({**BATCH, "must_haves": ["telepathy"]}, "must_haves"),
    ({"kind": "inference", "models": [{"count": "many", "memory_gb": 9}]}, "models"),
    ({"kind": "inference", "models": [{"count": 1, "memory_gb": 9, "memroy": 1}]}, "models"),
    ({**BATCH, "purchase_price_usd": -5}, "purchase_price_usd"),
])
def test_bad_input_is_a_400_naming_the_field(client, market, body, field):
    response = advise(client, body)
    assert response.status_code == 400
    assert field in response.json()


def test_malformed_body_is_a_400_not_a_500(client, market):
    malformed = client.post(reverse("api-advise"), "{not json", content_type="application/json")
    not_an_object = advise(client, ["a", "list"])
    # The shape of any other bad input, as documented: what is wrong under the key DRF gives errors of no one field.
    for response in (malformed, not_an_object):
        assert response.status_code == 400 and list(response.json()) == ["non_field_errors"]
    assert "JSON parse error" in malformed.json()["non_field_errors"][0]


@pytest.mark.parametrize(("field", "value"), [("multi_node", "true"), ("spot_ok", 1), ("nodes", "2"),
                                              ("purchase_price_usd", "59130"), ("kueue_queue", 5), ("kind", 1)])
def test_a_value_of_another_json_type_than_the_schema_states_is_a_400_naming_it(client, market, field, value):
    response = advise(client, {**BATCH, field: value})
    assert response.status_code == 400 and list(response.json()) == [field]


def test_a_model_too_small_to_round_to_a_tenth_of_a_gb_is_sized_not_a_500(client, market):
    response = advise(client, {"kind": "inference", "parameters_b": 0.01})  # schemathesis found the 500
    assert response.status_code == 200 and response.json()["estimate"]["memory_gb"] == 0.1


def test_a_query_parameter_to_advise_is_a_400_naming_it(client, market):
    response = client.post(f"{reverse('api-advise')}?gpu=h100", json.dumps(BATCH), content_type="application/json")
    assert response.status_code == 400 and list(response.json()) == ["gpu"]


def test_page_and_api_give_the_same_advice(client, market):
    page = client.get(reverse("advisor"), {"kind": "batch", "gpu": "h100", "gpus_per_node": "2", "nodes": "2",
                                           "hours_per_month": "300", "spot_ok": "on", "continents": ["NA", "EU"]})
    assert page.status_code == 200
    api = advise(client, {**BATCH, "hours_per_month": 300, "spot_ok": True, "continents": ["NA", "EU"]})
    assert AdviceOutputSerializer(page.context["advice"]).data == api.json()


def test_page_shows_reasoning_sources_and_manifest(client, market):
    response = client.get(reverse("advisor"), {"kind": "batch", "gpu": "h100", "gpus_per_node": "2", "nodes": "2"})
    html = response.content.decode()
    assert f'href="{SOURCE}known/nodes"' in html
    assert "5,913.00" in html and "≥ 4,380.00" in html  # the incomplete cost is shown as a lower bound
    assert "kind: Job" in html


def test_page_bad_input_is_a_400_with_the_field_named(client, market):
    response = client.get(reverse("advisor"), {"kind": "batch", "gpu": "h100", "models": "lots"})
    assert response.status_code == 400
    assert "models" in response.context["form"].errors


def test_page_names_a_parameter_it_does_not_read(client, market):
    """?foo=bar is a 400 naming foo, not only "This field is required." for the fields not given."""
    response = client.get(reverse("advisor"), {"foo": "bar"})
    assert response.status_code == 400
    assert "foo: not a parameter of this page (a typo?); it was not used." in response.content.decode()
    typo = client.get(reverse("advisor"), {"kind": "batch", "gpu": "h100", "gpus_per_nodes": "2"})
    assert typo.status_code == 400 and "gpus_per_nodes: not a parameter" in typo.content.decode()


def test_page_renders_in_chinese(client, market):
    client.cookies["django_language"] = "zh-hans"
    response = client.get(reverse("advisor"), {"kind": "notebook", "gpu": "h100"}, HTTP_ACCEPT_LANGUAGE="zh-hans",
                          follow=True)
    assert response.status_code == 200
    assert '<html lang="zh-Hans"' in response.content.decode()
    assert not response.context["advice"].kubernetes_needed


def test_query_count_does_not_grow_with_offers(client, market, h100):
    def queries():
        with CaptureQueriesContext(connection) as ctx:
            assert advise(client, BATCH).status_code == 200
        return len(ctx)

    before = queries()
    for index in range(10):
        provider = provider_with(f"extra{index}", offering="managed", control_plane_fee="free")
        add_offer(provider, h100, instance=f"x{index}", price="5.00")
    assert queries() == before


SIZED = {"kind": "inference", "model": "llama-3.1-70b", "replicas": 1, "countries": ["US"]}


def test_api_sizes_a_listed_model_and_places_a_replica_on_one_node(client, market):
    data = advise(client, SIZED).json()
    # (70.6 x 2 = 141.2 GB + KV 2 x 80 x 8 x 128 x 2 x 8192 = 2.7 GB) / 0.9 = 159.9 GB -> 2 x 80 GB on one node
    assert data["estimate"]["memory_gb"] == 159.9
    assert "141.2 GB" in data["estimate"]["lines"][0]["text"]
    (option,) = data["options"]
    assert option["offer"]["provider"]["slug"] == "known"
    assert [(lay["replicas"], lay["gpus_per_pod"], lay["pods_per_replica"]) for lay in option["layouts"]] == [(1, 2, 1)]
    assert "--tensor-parallel-size" in data["manifest"]["yaml"] and "kind: Service" in data["manifest"]["yaml"]


def test_page_and_api_give_the_same_sized_advice(client, market):
    page = client.get(reverse("advisor"), {"kind": "inference", "model": "llama-3.1-70b", "replicas": "1",
                                           "countries": "US"})
    assert page.status_code == 200
    assert AdviceOutputSerializer(page.context["advice"]).data == advise(client, SIZED).json()
    html = page.content.decode()
    assert "159.9 GB" in html  # the arithmetic is on the page


def test_page_lists_unverified_offers_apart_with_the_total_among_the_first_columns(client, market):
    html = client.get(reverse("advisor"), {"kind": "batch", "gpu": "h100", "gpus_per_node": "2",
                                           "nodes": "2"}).content.decode()
    verified, unverified = html.split('id="unverified"')
    assert "5,913.00" in verified and "4,380.00" not in verified
    assert "≥ 4,380.00" in unverified
    for table in html.split('<table class="offers advisor-options">')[1:]:
        headers = table.split("</tr></thead>")[0].split("<th ")
        assert "Total USD / month" in headers[3]  # #, offer, total: visible without scrolling at 1366 px


def test_sized_advice_renders_its_arithmetic_in_chinese(client, market):
    client.cookies["django_language"] = "zh-hans"
    response = client.get(reverse("advisor"), {"kind": "inference", "model": "llama-3.1-70b", "countries": "US"},
                          HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True)
    html = response.content.decode()
    assert response.status_code == 200
    assert "权重：70.6 B 参数 × 2 字节（FP16）= 141.2 GB。" in html
    assert '<h2 id="unverified">' not in html  # the US market has one verified offer and nothing unverified
    assert "在其节点上" in html  # the options table, in Chinese


def test_page_and_api_share_one_throttle_per_client(client, market, settings):
    """Each advice ranks every offer, so the page is throttled like the API, in the same count per client: the page
    had no limit, and eight concurrent page requests slowed every other page."""
    settings.API_ADVISE_RATE = "2/minute"
    page = {"kind": "batch", "gpu": "h100", "gpus_per_node": "2", "nodes": "2"}
    assert client.get(reverse("advisor"), page).status_code == 200
    assert advise(client, BATCH).status_code == 200
    refused_page = client.get(reverse("advisor"), page)
    assert refused_page.status_code == 429
    assert int(refused_page["Retry-After"]) >= 1
    assert "advice-refused" in refused_page.content.decode()
    refused_api = advise(client, BATCH)
    assert refused_api.status_code == 429
    # The form alone (no advice asked for) is never throttled.
    assert client.get(reverse("advisor")).status_code == 200


def test_advice_past_its_time_budget_is_a_503_with_retry_after_on_both_doors(client, market, settings):
    settings.ADVISOR_BUDGET_SECONDS = 1e-9  # every advice is over budget
    response = advise(client, BATCH)
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert response.json()["detail"]
    page = client.get(reverse("advisor"), {"kind": "batch", "gpu": "h100", "gpus_per_node": "2", "nodes": "2"})
    assert page.status_code == 503
    assert "advice-refused" in page.content.decode()
    settings.ADVISOR_BUDGET_SECONDS = 0  # no bound: the same advice is given
    assert advise(client, BATCH).status_code == 200


def test_advice_while_this_processs_slot_is_computing_waits_in_line_once_else_is_a_503(client, market, settings,
                                                                                          monkeypatch):
    """One advice computes at a time per process and one more may wait for it: any other request is answered at
    once, so clients asking for advice cannot hold every web thread (bench/advisor.py measures the other pages)."""
    import threading

    from advisor import selectors as advisor_selectors

    monkeypatch.setattr(advisor_selectors, "_slots", None)
    settings.ADVISOR_CONCURRENT_PER_PROCESS = 1
    settings.ADVISOR_WAIT_SECONDS = 30
    slot, line = advisor_selectors._advice_slots()
    assert slot.acquire(blocking=False) and line.acquire(blocking=False)  # one computing, one waiting: full
    busy = advise(client, BATCH)
    assert busy.status_code == 503 and busy["Retry-After"] == "2"
    assert "other requests" in busy.json()["detail"]
    page = client.get(reverse("advisor"), {"kind": "batch", "gpu": "h100", "gpus_per_node": "2", "nodes": "2"})
    assert page.status_code == 503 and page["Retry-After"] == "2"
    assert "advice-refused" in page.content.decode()

    line.release()  # the place in line is free: this request waits for the slot, then is answered
    threading.Timer(0.2, slot.release).start()
    assert advise(client, BATCH).status_code == 200
    assert slot.acquire(blocking=False)  # it gave the slot back
    slot.release()


def test_page_puts_the_answer_before_the_form_and_keeps_the_form_one_click_away(client, market):
    """The 70B answer appeared almost three screens below the form: the answer comes first, says what it assumed,
    and the inputs follow in a disclosure with every field still filled in."""
    html = client.get(reverse("advisor"), {"kind": "batch", "gpu": "h100", "gpus_per_node": "2",
                                           "nodes": "2"}).content.decode()
    result, options = html.index('id="advice-result"'), html.index('id="options"')
    form = html.index('<form class="advisor"')
    assert result < options < form
    assert html.index("What this advice assumed") < options
    assert '<details class="advisor-inputs" id="advisor-inputs">' in html
    assert 'name="nodes" value="2"' in html[form:]
    # Without an advice the page is the form alone, first.
    empty = client.get(reverse("advisor")).content.decode()
    assert 'id="advice-result"' not in empty and '<form class="advisor"' in empty


def test_the_api_accepts_infiniband_as_a_must_have(client, market):
    # None of the market's providers answers InfiniBand: nothing is verified, nothing is silently dropped as met.
    response = advise(client, {**BATCH, "must_haves": ["infiniband"]})
    assert response.status_code == 200
    data = response.json()
    assert data["options"] == []
    assert [row["offer"]["provider"]["slug"] for row in data["unverified"]] == ["known", "unknownfee"]
    assert all("infiniband" in row["unverified"] for row in data["unverified"])


def test_the_api_states_each_offers_host_and_form_factor_that_the_checks_used(client, market):
    Offer.objects.filter(pk=market["known"].pk).update(vcpus=D("52"), ram_gb=D("464"), form_factor="sxm")
    (option,) = advise(client, BATCH).json()["options"]
    assert (option["offer"]["vcpus"], option["offer"]["ram_gb"], option["offer"]["form_factor"]) == (52.0, 464.0, "sxm")
    (unverified,) = advise(client, BATCH).json()["unverified"]
    assert (unverified["offer"]["vcpus"], unverified["offer"]["ram_gb"], unverified["offer"]["form_factor"]) == (
        None, None, "")
