"""The offers list renders its rows with serializers.offer_data (plain dicts from offer_reads.offer_rows) instead of
OfferListSerializer (or OfferSerializer, with kubernetes_reasons=true): they must give the same JSON, key for key and
byte for byte, for every kind of offer."""

import json
from datetime import date, timedelta

import pytest
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIRequestFactory

from providers import offer_reads, selectors
from providers.api import OfferListApi
from providers.models import Offer
from providers.renderers import CSVRenderer
from providers.serializers import OfferListSerializer, OfferSerializer, offer_data
from tests.api.conftest import offer

pytestmark = pytest.mark.django_db


@pytest.fixture
def varied(world):
    """The world's offers (unknown GPU, inactive, no price, spot) plus a provider with a Chinese name, a source with
    a data date that never succeeded (stale), an offer with counts, vCPUs and RAM, and one with every optional
    number missing."""
    beta = world.offers["beta-h100"]
    provider = beta.provider
    provider.name_zh = "贝塔"
    provider.save(update_fields=["name_zh"])
    source = beta.source
    source.as_of, source.last_success_at, source.license = date(2026, 3, 4), None, "CC-BY-4.0"
    source.save(update_fields=["as_of", "last_success_at", "license"])
    rich = offer("beta-rich", provider, source, beta.gpu, count="4", price="9.99999", spot="1.23457")
    Offer.objects.filter(pk=rich.pk).update(vcpus="96.50", ram_gb="1024.25", available_count=7,
                                            last_seen=timezone.now() - timedelta(microseconds=1),
                                            availability="limited", availability_checked_at=timezone.now(),
                                            availability_since=timezone.now() - timedelta(days=2),
                                            availability_recorded=True, in_stock_share_7d="0.8333",
                                            in_stock_share_30d="0.0417")
    return world


def listed_offers(ids):
    """Offers as OfferSerializer reads them (offer_list: relations joined, `is_stale` annotated), in `ids` order."""
    found = selectors.offer_list(include_inactive=True).in_bulk(ids)
    return [found[offer_id] for offer_id in ids]


@pytest.mark.parametrize("reasons", [False, True])
def test_offer_data_renders_exactly_what_the_serializers_render(varied, reasons):
    request = APIRequestFactory().get("/api/v1/offers/")
    ids = list(Offer.objects.order_by("id").values_list("id", flat=True))
    assert len(ids) == 7
    serializer = OfferSerializer if reasons else OfferListSerializer
    expected = serializer(listed_offers(ids), many=True, context={"request": request}).data
    actual = offer_data(offer_reads.offer_rows(ids=ids), request=request, reasons=reasons)
    renderer = JSONRenderer()
    assert actual == expected
    assert [list(row) for row in actual] == [list(row) for row in expected]  # same key order
    assert renderer.render(actual) == renderer.render(expected)


def test_the_list_gives_the_answers_and_the_detail_their_reasons(api, varied):
    """By default each listed offer's Kubernetes answers are their states (and the fabric); the reasons and sources
    are on the offer's own URL, or in the list with kubernetes_reasons=true (the words the boolean filters take);
anything else there is a 400."""
    listed = api.get("/api/v1/offers/?include_inactive=true").json()["results"]
    full = api.get("/api/v1/offers/?include_inactive=true&kubernetes_reasons=true").json()["results"]
    assert [row["id"] for row in listed] == [row["id"] for row in full]
    some_reason = False
    for light, heavy in zip(listed, full, strict=True):
        detail = api.get(light["url"]).json()
        assert heavy["kubernetes"] == detail["kubernetes"]
        assert list(light["kubernetes"]) == list(detail["kubernetes"])
        for question, answer in light["kubernetes"].items():
            whole = detail["kubernetes"][question]
            assert answer == {key: whole[key] for key in answer}
            assert set(answer) == ({"answer", "fabric", "efa_interfaces", "fabric_class", "interfaces",
                                    "bandwidth_gbps"} if question == "rdma" else {"answer"})
            some_reason = some_reason or bool(whole["reason"])
    assert some_reason
    assert api.get("/api/v1/offers/?include_inactive=true&kubernetes_reasons=1").json()["results"] == full
    response = api.get("/api/v1/offers/?kubernetes_reasons=maybe")
    assert response.status_code == 400
    assert list(response.json()) == ["kubernetes_reasons"] and "maybe" in response.json()["kubernetes_reasons"][0]


def test_offer_rows_keep_the_order_of_the_ids_and_skip_missing_ones(varied):
    ids = sorted(Offer.objects.values_list("id", flat=True), reverse=True)
    rows = offer_reads.offer_rows(ids=[*ids, max(ids) + 1000])
    assert [row["id"] for row in rows] == ids


@pytest.mark.parametrize("reasons", [False, True])
def test_offer_list_pages_equal_the_serializer_output_in_json_and_csv(api, varied, reasons):
    query = "include_inactive=true&ordering=-gpu_memory&page_size=3" + ("&kubernetes_reasons=true" if reasons else "")
    view = OfferListApi()
    view.kubernetes_reasons = reasons
    serializer = OfferSerializer if reasons else OfferListSerializer
    for page in (1, 2, 3):
        response = api.get(f"/api/v1/offers/?{query}&page={page}")
        assert response.status_code == 200, response.content
        ids = [row["id"] for row in response.json()["results"]]
        expected = serializer(listed_offers(ids), many=True, context={"request": response.wsgi_request}).data
        assert response.json()["results"] == json.loads(JSONRenderer().render(expected))
        csv = api.get(f"/api/v1/offers/?{query}&page={page}&format=csv").content
        assert csv == CSVRenderer().render(list(expected), renderer_context={"view": view})
        assert (b"kubernetes.mig.reason" in csv) is reasons


def test_a_reason_with_quotes_line_separators_and_chinese_reaches_the_list_intact(api, varied):
    """Every offer of a profile shares one `kubernetes` object (serializers._kubernetes_shared): what a reason holds
    comes through the list as stored, with and without the reasons, and a changed profile is read anew."""
    from providers.models import KubernetesProfile

    profile = KubernetesProfile.objects.filter(offers__isnull=False).first()
    before = api.get("/api/v1/offers/?include_inactive=true&kubernetes_reasons=true").json()["results"]
    answers = dict(profile.answers)
    reason = "line\u2028separator and \"quotes\" and 中文"
    answers["mig"] = {**answers["mig"], "reason": reason}
    KubernetesProfile.objects.filter(pk=profile.pk).update(answers=answers, computed_at=timezone.now())
    response = api.get("/api/v1/offers/?include_inactive=true&kubernetes_reasons=true")
    assert b"\\u2028separator" in response.content
    rows = [row for row in response.json()["results"] if row["id"] in set(profile.offers.values_list("id", flat=True))]
    assert rows and all(row["kubernetes"]["mig"]["reason"] == reason for row in rows)
    assert all(row["kubernetes"]["mig"].get("reason") != reason for row in before)
    states = api.get("/api/v1/offers/?include_inactive=true").json()["results"]
    assert all(set(row["kubernetes"]["mig"]) == {"answer"} for row in states)
