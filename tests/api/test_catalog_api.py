"""GET /api/v1/providers/, gpus/, sources/ and compare/: the capability matrix with every cell's source and every
unknown kept, the GPU catalog, the state of each source, and providers side by side."""

import csv
import io

import pytest
from django.utils import timezone

from providers.capabilities import CAPABILITIES
from providers.models import KubernetesFact, RunStatus, ScrapeRun
from tests.api.conftest import succeeded

pytestmark = pytest.mark.django_db

KEYS = [question.key for question in CAPABILITIES]


def test_provider_detail_has_every_question_with_its_source_and_unknowns_kept(api, world):
    body = api.get("/api/v1/providers/beta/").json()
    assert [cell["key"] for cell in body["capabilities"]] == KEYS
    cells = {cell["key"]: cell for cell in body["capabilities"]}
    assert cells["mps"] == {
        "key": "mps", "question": "MPS", "group": "sharing", "value": "yes", "label": "mps label", "detail": "",
        "label_zh": "", "detail_zh": "", "amount": None, "currency": "", "source_url": "https://example.org/mps",
        "verified_on": "2026-01-02", "confidence": "inferred", "origin": "curated", "fetched_at": None,
    }
    assert cells["mig"]["value"] == "unknown" and cells["mig"]["source_url"] == "" and cells["mig"]["origin"] == ""
    assert body["sources"][0]["slug"] == "beta-catalog" and body["active_offers"] == 2


def test_provider_detail_shows_a_paid_control_plane_fee_and_provider_api_facts(api, world):
    source = world.sources["alpha"]
    KubernetesFact.objects.create(provider=source.provider, source=source, name="kubernetes_versions",
                                  value=["1.31", "1.32"], source_url="https://example.org/versions",
                                  fetched_at=timezone.now())
    body = api.get("/api/v1/providers/alpha/").json()
    fee = next(cell for cell in body["capabilities"] if cell["key"] == "control_plane_fee")
    assert (fee["value"], fee["amount"], fee["currency"]) == ("paid", 0.1, "USD")
    assert body["kubernetes_facts"] == [{"name": "kubernetes_versions", "value": ["1.31", "1.32"],
                                         "source": "alpha-api", "source_url": "https://example.org/versions",
                                         "fetched_at": body["kubernetes_facts"][0]["fetched_at"]}]


def test_an_unpriced_provider_says_why_and_a_priced_one_says_nothing(api, world):
    from tests.factories import ProviderFactory

    ProviderFactory(slug="civo", name="Civo", kind="regional_cloud")
    body = api.get("/api/v1/providers/civo/").json()
    assert body["active_offers"] == 0
    assert body["why_unpriced"] == {
        "reason": "its GPU sizes are listed without prices in what we could record, and only third-party averages "
                  "quote its price page",
        "price_page": "https://www.civo.com/pricing", "checked_on": "2026-12-05"}
    zh = api.get("/api/v1/providers/civo/", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert zh["why_unpriced"]["reason"].startswith("在我们能录存的资料中")
    assert api.get("/api/v1/providers/beta/").json()["why_unpriced"] is None


def test_capability_questions_follow_the_request_language(api, world):
    body = api.get("/api/v1/providers/beta/", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert [cell["key"] for cell in body["capabilities"]] == KEYS  # keys never translate


def test_provider_list_answers_every_question_and_counts_active_offers(api, world):
    body = api.get("/api/v1/providers/").json()
    assert [row["slug"] for row in body["results"]] == ["alpha", "beta", "gamma"]
    gamma = body["results"][2]
    assert list(gamma["capabilities"]) == KEYS
    assert gamma["capabilities"]["offering"] == "managed" and gamma["capabilities"]["mps"] == "unknown"
    assert gamma["active_offers"] == 1
    rows = list(csv.DictReader(io.StringIO(api.get("/api/v1/providers/?format=csv").content.decode())))
    assert rows[1]["capabilities.mps"] == "yes" and rows[2]["capabilities.rwx_storage"] == "unknown"


def test_unknown_provider_or_gpu_is_a_json_404(api, world):
    assert api.get("/api/v1/providers/nope/").json() == {"detail": "No provider 'nope'; see /api/v1/providers/."}
    assert api.get("/api/v1/providers/a%20b/").status_code == 404  # not slug-shaped: answered without a query
    assert api.get("/api/v1/gpus/nope/").json() == {"detail": "No GPU model 'nope'; see /api/v1/gpus/."}


def test_gpu_catalog_lists_mig_profiles_and_offer_figures(api, world):
    body = api.get("/api/v1/gpus/").json()
    rows = {row["slug"]: row for row in body["results"]}
    assert rows["h100-sxm"]["mig_profiles"] == ["1g.10gb", "7g.80gb"] and rows["l4"]["mig_profiles"] == []
    assert rows["h100-sxm"]["active_offers"] == 2 and rows["h100-sxm"]["provider_count"] == 2
    assert rows["h100-sxm"]["cheapest_price_per_gpu_hour_usd"] == 2.5
    assert rows["l4"]["active_offers"] == 1  # the inactive L4 offer does not count
    assert api.get("/api/v1/gpus/mi300x/").json()["memory_gb"] == 192.0
    assert "mig_profiles" in api.get("/api/v1/gpus/?format=csv").content.decode().splitlines()[0]


def test_sources_show_latest_run_outcome_and_age_of_good_data(api, world, settings):
    settings.STALE_AFTER_HOURS = 24
    source = world.sources["beta"]
    ScrapeRun.objects.filter(source=source).delete()
    succeeded(source, hours_ago=30)
    ScrapeRun.objects.create(source=source, started_at=timezone.now(), status=RunStatus.FAILED, error="HTTP 503")
    rows = {row["slug"]: row for row in api.get("/api/v1/sources/").json()["results"]}
    beta = rows["beta-catalog"]
    assert beta["last_run"]["status"] == "failed" and beta["last_run"]["error"] == "HTTP 503"
    assert 29.9 < beta["age_hours"] < 30.1 and beta["is_stale"] is True
    assert rows["alpha-api"]["last_run"]["status"] == "succeeded" and rows["alpha-api"]["is_stale"] is False
    assert rows["alpha-api"]["provider"]["slug"] == "alpha"


def test_source_that_never_ran_has_no_age_and_is_stale(api, world):
    ScrapeRun.objects.filter(source=world.sources["gamma"]).delete()
    world.sources["gamma"].last_success_at = None
    world.sources["gamma"].save()
    row = next(row for row in api.get("/api/v1/sources/").json()["results"] if row["slug"] == "gamma-api")
    assert row["last_run"] is None and row["age_hours"] is None and row["is_stale"] is True


def test_compare_puts_answers_side_by_side_and_the_cheapest_offer_per_gpu(api, world):
    body = api.get("/api/v1/compare/?providers=beta,alpha").json()
    assert [provider["slug"] for provider in body["providers"]] == ["beta", "alpha"]
    assert [question["key"] for question in body["capabilities"]] == KEYS
    mig = next(question for question in body["capabilities"] if question["key"] == "mig")
    assert [(answer["provider"]["slug"], answer["value"]) for answer in mig["answers"]] == [("beta", "unknown"),
                                                                                   ("alpha", "yes")]
    assert mig["answers"][1]["source_url"] == "https://example.org/mig"
    gpus = {row["gpu"]["slug"]: row["cheapest"] for row in body["gpus"]}
    assert set(gpus) == {"h100-sxm", "l4", "mi300x"}
    h100 = {cheapest["provider"]["slug"]: cheapest["offer"] for cheapest in gpus["h100-sxm"]}
    assert h100["beta"]["id"] == world.offers["beta-h100"].id
    assert h100["alpha"]["id"] == world.offers["alpha-h100x8"].id and h100["alpha"]["source"]["slug"] == "alpha-api"
    assert {cheapest["provider"]["slug"]: cheapest["offer"] for cheapest in gpus["l4"]}["beta"] is None


@pytest.mark.parametrize(("query", "problem"), [
    ("", "at least one"), ("providers=", "at least one"), ("providers=alpha,nope,zzz", "nope, zzz"),
    ("providers=" + ",".join(f"p{n}" for n in range(11)), "at most 10"),
])
def test_compare_refuses_missing_unknown_or_too_many_providers(api, world, query, problem):
    response = api.get(f"/api/v1/compare/?{query}")
    assert response.status_code == 400 and problem in response.json()["providers"][0]


def test_compare_accepts_repeated_parameters_and_ignores_duplicates(api, world):
    body = api.get("/api/v1/compare/?providers=alpha&providers=gamma,alpha").json()
    assert [provider["slug"] for provider in body["providers"]] == ["alpha", "gamma"]


def test_provider_detail_and_compare_carry_our_chinese_label_and_detail(api, world):
    from providers.models import Capability

    Capability.objects.filter(provider__slug="beta", key="mps").update(label_zh="MPS 标签", detail="Docs say so.",
                                                                      detail_zh="文档如此说明。")
    cells = {cell["key"]: cell for cell in api.get("/api/v1/providers/beta/").json()["capabilities"]}
    assert (cells["mps"]["label"], cells["mps"]["label_zh"]) == ("mps label", "MPS 标签")
    assert (cells["mps"]["detail"], cells["mps"]["detail_zh"]) == ("Docs say so.", "文档如此说明。")
    compared = api.get("/api/v1/compare/?providers=beta").json()
    answer = next(q for q in compared["capabilities"] if q["key"] == "mps")["answers"][0]
    assert answer["label_zh"] == "MPS 标签" and answer["detail_zh"] == "文档如此说明。"
