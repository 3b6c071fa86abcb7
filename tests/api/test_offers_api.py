"""GET /api/v1/offers/, offers/{id}/ and offers/{id}/history/: provenance on every offer, strict parameters, stable
pages, CSV (paged or streamed whole), read-only."""

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from providers import offer_reads
from providers.models import PriceObservation, RunStatus, ScrapeRun
from tests.api.conftest import result_ids, succeeded

pytestmark = pytest.mark.django_db


def test_offer_carries_its_provenance_and_prices_as_numbers(api, world):
    offer = world.offers["beta-h100"]
    body = api.get(f"/api/v1/offers/{offer.id}/").json()
    assert body["id"] == offer.id and body["url"].endswith(f"/api/v1/offers/{offer.id}/")
    assert body["provider"] == {"slug": "beta", "name": "Beta GPUs", "name_zh": "", "kind": "gpu_cloud"}
    assert body["gpu"]["slug"] == "h100-sxm" and body["gpu_name"] == "H100"
    assert body["price_per_gpu_hour_usd"] == 2.5 and body["gpu_count"] == 1.0
    assert body["source"]["slug"] == "beta-catalog" and body["source"]["kind"] == "catalog"
    assert body["source"]["revision"] == "abc123" and body["source"]["url"]
    assert body["source"]["last_success_at"] is not None
    assert {"first_seen", "last_seen", "is_active", "is_stale", "as_of"} <= set(body) | set(body["source"])
    assert body["is_active"] is True and body["is_stale"] is False


def test_each_kubernetes_answer_says_whether_it_rests_on_an_inferred_fact(api, world):
    """beta's MPS cell is inferred: the offer's MPS answer (not on this BYO machine) says so, as the pages' "~" does;
    its documented answers say inferred false. The list gives it with the reasons, not without."""
    offer = world.offers["beta-h100"]
    answers = api.get(f"/api/v1/offers/{offer.id}/").json()["kubernetes"]
    assert answers["mps"]["inferred"] is True and answers["mps"]["answer"] == "not_on_this_machine"
    assert answers["time_slicing"]["inferred"] is False and answers["rdma"]["inferred"] is False
    assert {question for question, answer in answers.items() if answer["inferred"]} == {"mps"}
    assert {question for question, answer in answers.items() if answer["confidence"] == "inferred"} == {"mps"}
    assert {answer["confidence"] for answer in answers.values() if not answer["inferred"]} <= {"documented", ""}
    assert all((answer["confidence"] == "") == (not answer["sources"]) for answer in answers.values())
    listed = api.get("/api/v1/offers/?provider=beta&gpu=h100-sxm&kubernetes_reasons=true").json()["results"]
    assert listed[0]["kubernetes"]["mps"]["inferred"] is True
    plain = api.get("/api/v1/offers/?provider=beta&gpu=h100-sxm").json()["results"]
    assert plain[0]["kubernetes"]["mps"] == {"answer": "not_on_this_machine"}


def test_profiles_stored_before_the_inferred_flag_get_it_from_their_inferred_list(world):
    """Migration 0015 writes each stored answer's `inferred` from the profile's list, so an old database gives the
    flag without a new ingest."""
    import importlib

    from django.apps import apps

    from providers.models import KubernetesProfile, Offer

    migration = importlib.import_module("providers.migrations.0015_kubernetes_answers_inferred")
    profile = KubernetesProfile.objects.get(offers=Offer.objects.get(pk=world.offers["beta-h100"].pk))
    expected = profile.answers
    assert profile.inferred == ["mps"]
    KubernetesProfile.objects.filter(pk=profile.pk).update(answers={
        question: {key: value for key, value in entry.items() if key != "inferred"}
        for question, entry in profile.answers.items()})
    migration.forwards(apps, None)
    profile.refresh_from_db()
    assert profile.answers == expected
    assert profile.answers["mps"]["inferred"] is True and profile.answers["mig"]["inferred"] is False


def test_profiles_stored_before_the_confidence_get_it_from_what_they_hold(api, world):
    """Migration 0029 writes each stored answer's `confidence` (inferred, documented when it cites a source, blank
    when not), so an old database answers the API's shape without a new ingest."""
    import importlib

    from django.apps import apps

    from providers.models import KubernetesProfile, Offer

    migration = importlib.import_module("providers.migrations.0029_kubernetes_answers_confidence")
    profile = KubernetesProfile.objects.get(offers=Offer.objects.get(pk=world.offers["beta-h100"].pk))
    expected = profile.answers
    KubernetesProfile.objects.filter(pk=profile.pk).update(answers={
        question: {key: value for key, value in entry.items() if key != "confidence"}
        for question, entry in profile.answers.items()})
    migration.forwards(apps, None)
    profile.refresh_from_db()
    assert profile.answers == expected and profile.answers["mps"]["confidence"] == "inferred"
    answers = api.get(f"/api/v1/offers/{world.offers['beta-h100'].id}/").json()["kubernetes"]
    assert {question: answer["confidence"] for question, answer in answers.items()} == {
        question: entry["confidence"] for question, entry in expected.items()}


def test_offer_with_a_gpu_outside_the_catalog_keeps_the_source_spelling(api, world):
    body = api.get(f"/api/v1/offers/{world.offers['gamma-unknown-gpu'].id}/").json()
    assert body["gpu"] is None and body["gpu_name"] == "Z9" and body["price_hour_usd"] is None


def test_offers_are_stale_when_their_source_has_not_succeeded_recently(api, world, settings):
    settings.STALE_AFTER_HOURS = 24
    succeeded(world.sources["alpha"], hours_ago=30)
    ScrapeRun.objects.create(source=world.sources["alpha"], started_at=timezone.now(), status=RunStatus.FAILED)
    gamma = world.sources["gamma"]
    gamma.last_success_at = None  # never succeeded
    gamma.save()
    rows = {row["instance_type"]: row for row in api.get("/api/v1/offers/?include_inactive=true").json()["results"]}
    assert rows["alpha-h100x8"]["is_stale"] is True and rows["alpha-l4"]["is_stale"] is True
    assert rows["beta-h100"]["is_stale"] is False
    assert rows["gamma-unknown-gpu"]["is_stale"] is True
    assert rows["gamma-unknown-gpu"]["source"]["last_success_at"] is None
    compared = api.get("/api/v1/compare/?providers=alpha,beta").json()["gpus"]
    cheapest = {row["provider"]["slug"]: row["offer"] for gpu in compared for row in gpu["cheapest"] if row["offer"]}
    assert cheapest["alpha"]["is_stale"] is True and cheapest["beta"]["is_stale"] is False


def test_unknown_query_parameters_are_refused_by_name(api, world):
    response = api.get("/api/v1/offers/?gpu_modle=h100&gpu=h100-sxm&colour=red")
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"gpu_modle", "colour"}
    assert "Unknown query parameter" in body["gpu_modle"][0] and "gpu" in body["gpu_modle"][0]


@pytest.mark.parametrize("path", ["/api/v1/providers/?mig=yes", "/api/v1/gpus/?vendor=nvidia",
                                  "/api/v1/sources/?stale=1", "/api/v1/compare/?providers=alpha&gpu=l4"])
def test_every_endpoint_refuses_parameters_it_does_not_read(api, world, path):
    response = api.get(path)
    assert response.status_code == 400
    assert len(response.json()) == 1


@pytest.mark.parametrize(("query", "name"), [
    ("page=0", "page"), ("page=two", "page"), ("page_size=0", "page_size"),
    ("page_size=501", "page_size"), ("page_size=ten", "page_size"), ("format=xml", "format"),
])
def test_bad_paging_or_format_is_a_400_naming_it(api, world, query, name):
    response = api.get(f"/api/v1/offers/?{query}")
    assert response.status_code == 400 and list(response.json()) == [name]
    assert response["Content-Type"] == "application/json"


def test_a_page_past_the_end_is_a_json_404(api, world):
    response = api.get("/api/v1/offers/?page=4&page_size=2")
    assert response.status_code == 404 and "past the last page" in response.json()["detail"]


def test_past_the_exact_count_the_count_is_a_lower_bound_and_every_page_still_reads(api, world, monkeypatch):
    """Counted exactly up to COUNT_EXACT_UP_TO offers or the end of the page asked for, whichever is further: above
    it `count` is a lower bound (`count_exact` false) that still covers the page, `next` keeps leading on, and the
    pages together list every offer once."""
    monkeypatch.setattr(offer_reads, "COUNT_EXACT_UP_TO", 2)
    pages = [api.get("/api/v1/offers/?page_size=1&ordering=provider").json()]
    while pages[-1]["next"]:
        pages.append(api.get(pages[-1]["next"]).json())
    assert [(page["count"], page["count_exact"]) for page in pages] == [
        (2, False), (2, False), (3, False), (4, False), (5, True)]
    assert list(pages[0])[:2] == ["count", "count_exact"]
    ids = [row["id"] for page in pages for row in page["results"]]
    assert len(ids) == len(set(ids)) == 5
    assert api.get("/api/v1/offers/?page=6&page_size=1").status_code == 404
    monkeypatch.setattr(offer_reads, "COUNT_EXACT_UP_TO", 5)
    body = api.get("/api/v1/offers/?page_size=1").json()
    assert (body["count"], body["count_exact"]) == (5, True)


def test_pages_are_stable_and_cover_every_offer_once(api, world):
    first = api.get("/api/v1/offers/?page_size=2&ordering=provider").json()
    second = api.get(first["next"]).json()
    third = api.get(second["next"]).json()
    assert first["count"] == 5 and third["next"] is None and second["previous"]
    ids = [row["id"] for page in (first, second, third) for row in page["results"]]
    assert ids == result_ids(api.get("/api/v1/offers/?page_size=5&ordering=provider"))
    assert len(set(ids)) == 5


def test_csv_by_format_parameter_streams_every_matching_row_with_flattened_columns(api, world):
    response = api.get("/api/v1/offers/?format=csv&include_inactive=true&ordering=provider")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [row["instance_type"] for row in rows][:2] == ["alpha-l4", "alpha-h100x8"]  # one provider: cheapest first
    assert len(rows) == 6
    row = next(row for row in rows if row["instance_type"] == "beta-h100")
    assert row["provider.slug"] == "beta" and row["gpu.slug"] == "h100-sxm" and row["source.revision"] == "abc123"
    assert row["price_per_gpu_hour_usd"] == "2.5" and row["is_stale"] == "false"
    unknown = next(row for row in rows if row["instance_type"] == "gamma-unknown-gpu")
    assert unknown["gpu.slug"] == "" and unknown["price_hour_usd"] == ""


def test_csv_by_accept_header_with_a_page_returns_that_page_only(api, world):
    response = api.get("/api/v1/offers/?page_size=2&page=2", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200 and not response.streaming
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [int(row["id"]) for row in rows] == result_ids(api.get("/api/v1/offers/?page_size=2&page=2"))


def test_csv_of_an_empty_result_still_has_its_header(api, world):
    response = api.get("/api/v1/offers/?format=csv&vendor=intel")
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("id,url,provider.slug")


def test_csv_errors_are_json(api, world):
    response = api.get("/api/v1/offers/?format=csv&spot=maybe")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert list(response.json()) == ["spot"]


def test_csv_neutralises_text_a_spreadsheet_would_run_as_a_formula(api, world):
    offer = world.offers["alpha-l4"]
    offer.instance_type = "=HYPERLINK(\"http://evil\")"
    offer.save()
    response = api.get(f"/api/v1/offers/{offer.id}/?format=csv")
    row = next(csv.DictReader(io.StringIO(response.content.decode())))
    assert row["instance_type"] == "'=HYPERLINK(\"http://evil\")"


@pytest.mark.parametrize("path", ["/api/v1/offers/999999/", "/api/v1/offers/abc/", "/api/v1/offers/-1/",
                                  "/api/v1/offers/99999999999999999999999/", "/api/v1/offers/999999/history/"])
def test_missing_offer_is_a_json_404(api, world, path):
    response = api.get(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert "detail" in response.json()


def test_inactive_offer_is_still_readable_by_id(api, world):
    body = api.get(f"/api/v1/offers/{world.offers['gamma-gone'].id}/").json()
    assert body["is_active"] is False


def test_history_lists_changes_oldest_first(api, world):
    offer = world.offers["beta-h100"]
    now = timezone.now()
    for hours, price, availability in ((48, "3.00", "available"), (24, "2.75", "limited"), (1, "2.50", "limited")):
        PriceObservation.objects.create(offer=offer, observed_at=now - timedelta(hours=hours), price_hour=price,
                                        price_hour_usd=price, currency="USD", availability=availability)
    body = api.get(f"/api/v1/offers/{offer.id}/history/").json()
    assert body["count"] == 3
    assert [row["price_hour_usd"] for row in body["results"]] == [3.0, 2.75, 2.5]
    assert body["results"][0]["availability"] == "available"
    lines = b"".join(api.get(f"/api/v1/offers/{offer.id}/history/?format=csv").streaming_content).decode()
    assert lines.splitlines()[0].startswith("observed_at,currency,price_hour") and len(lines.splitlines()) == 4


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
@pytest.mark.parametrize("path", ["/api/v1/offers/", "/api/v1/offers/{id}/", "/api/v1/providers/alpha/",
                                  "/api/v1/gpus/", "/api/v1/sources/", "/api/v1/compare/?providers=alpha"])
def test_writes_are_refused_with_405(api, world, method, path):
    response = getattr(api, method)(path.format(id=world.offers["alpha-l4"].id), {"price_hour": "0"},
                                    format="json")
    assert response.status_code == 405
    assert world.offers["alpha-l4"].__class__.objects.get(pk=world.offers["alpha-l4"].pk).price_hour is not None
