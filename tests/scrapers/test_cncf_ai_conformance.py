"""CNCF Kubernetes AI Conformance: the recorded self-assessments become capability cells through the explicit
product table and requirement mapping; statuses keep "partial" apart from yes; a missing file is skipped while
another version answers; a file that is not the checklist's shape fails the run and keeps what was stored."""

from datetime import date

import httpx
import pytest

from providers import facts_sync, runs
from providers.capabilities import QUESTIONS
from providers.curated import PROVIDERS_DIR
from providers.models import Capability, RunStatus
from scrapers import cncf_ai_conformance as cncf
from scrapers import registry
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client
from tests.scrapers.replay import answer


def client_for(provider, overrides=None):
    client_class = cncf.CLIENTS[f"cncf-ai-{provider}"]
    routes = client_class.recorded()
    transport = httpx.MockTransport(lambda request: answer(routes, overrides or {}, str(request.url)))
    return client_class(build_client(transport=transport))


def checklist(**statuses):
    """A minimal PRODUCT.yaml in the checklist's shape, one requirement per keyword (id=status)."""
    items = "\n".join(
        f'    - id: {key}\n      status: "{status}"\n      evidence:\n        - "https://docs.example.test/{key}"'
        for key, status in statuses.items())
    return f'metadata:\n  kubernetesVersion: v1.35\nspec:\n  accelerators:\n{items}\n'


def test_every_mapped_product_is_one_of_our_providers_and_every_mapped_key_a_question():
    ours = {path.stem for path in PROVIDERS_DIR.glob("*.toml")}
    assert {slug for slug, _ in cncf.PRODUCTS.values()} <= ours
    assert set(cncf.REQUIREMENT_QUESTIONS.values()) <= set(QUESTIONS)
    assert "cncf_ai_conformance" in QUESTIONS
    assert not set(cncf.PRODUCTS) & set(cncf.IGNORED_PRODUCTS)


def test_recorded_eks_becomes_conformance_dra_metrics_gang_and_autoscaling_cells():
    result = client_for("aws").fetch()
    cells = {cell.key: cell for cell in result.capabilities}
    assert set(cells) == {"cncf_ai_conformance", "dra", "accelerator_metrics", "gang_scheduling", "node_autoscaling"}
    assert cells["cncf_ai_conformance"].value == "yes"
    assert cells["cncf_ai_conformance"].label == "Kubernetes v1.34, v1.35"
    assert cells["cncf_ai_conformance"].source_url == f"{cncf.BLOB}/v1.35/eks/PRODUCT.yaml"
    # The requirement's first evidence URL is the cell's source.
    assert cells["dra"].source_url == "https://docs.aws.amazon.com/eks/latest/userguide/device-management.html"
    assert all(cell.verified_on == date(2026, 8, 19) and cell.detail_zh for cell in cells.values())
    assert result.offers == [] and result.rejected == []


def test_a_requirement_the_newest_version_drops_comes_from_the_newest_version_that_states_it():
    cells = {cell.key: cell for cell in client_for("azure").fetch().capabilities}
    assert "v1.35" in cells["dra"].detail  # v1.36 has no dra_support requirement
    assert "v1.36" in cells["gang_scheduling"].detail


def test_the_v1_36_ack_self_assessment_answers_alibaba_cited_at_the_commit_that_filed_it():
    cells = {cell.key: cell for cell in client_for("alibaba").fetch().capabilities}
    pinned = "499c14ae42e5e9e87ba8b43c5a65aef35795fc92"
    assert cells["cncf_ai_conformance"].label == "Kubernetes v1.34, v1.36"
    assert cells["cncf_ai_conformance"].source_url == f"{cncf.REPOSITORY}/blob/{pinned}/v1.36/ack/PRODUCT.yaml"
    assert "v1.36" in cells["gang_scheduling"].detail and cells["gang_scheduling"].value == "yes"
    assert cells["gang_scheduling"].source_url == (
        "https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/work-with-gang-scheduling")
    assert "v1.36" in cells["node_autoscaling"].detail
    assert "v1.34" in cells["dra"].detail  # v1.36 has no dra_support requirement


def test_statuses_map_to_yes_partial_no_and_not_applicable():
    text = checklist(dra_support="Partially Implemented", accelerator_metrics="Not Implemented",
                     gang_scheduling="N/A", cluster_autoscaling="Implemented", gpu_sharing="Implemented")
    overrides = {f"{cncf.RAW}/v1.34/lke/PRODUCT.yaml": httpx.Response(200, text=text)}
    cells = {cell.key: cell.value for cell in client_for("linode", overrides).fetch().capabilities}
    # gpu_sharing answers none of our questions (it does not say which kind of sharing), so it is not used.
    assert cells == {"cncf_ai_conformance": "yes", "dra": "partial", "accelerator_metrics": "no",
                     "gang_scheduling": "n/a", "node_autoscaling": "yes"}


def test_a_missing_version_file_is_skipped_while_another_version_answers():
    overrides = {f"{cncf.RAW}/v1.33/cks/PRODUCT.yaml": httpx.Response(404, text="404: Not Found")}
    result = client_for("coreweave", overrides).fetch()
    cells = {cell.key: cell for cell in result.capabilities}
    assert cells["cncf_ai_conformance"].label == "Kubernetes v1.34, v1.35"
    assert result.rejected == ["v1.33/cks/PRODUCT.yaml: missing upstream"]


def test_a_product_missing_from_every_version_raises_a_schema_error():
    overrides = {f"{cncf.RAW}/v1.34/lke/PRODUCT.yaml": httpx.Response(404, text="404: Not Found")}
    with pytest.raises(SchemaScrapeError, match="none of v1.34/lke/PRODUCT.yaml exists"):
        client_for("linode", overrides).fetch()


@pytest.mark.parametrize("text, problem", [
    ("metadata: [unclosed", "not valid YAML"),
    ("- just\n- a list\n", "no 'metadata' and 'spec'"),
    ("metadata:\n  kubernetesVersion: latest\nspec: {}\n", "kubernetesVersion"),
    (checklist(dra_support="Maybe"), "status 'Maybe'"),
])
def test_a_file_that_is_not_the_checklist_raises_a_schema_error(text, problem):
    overrides = {f"{cncf.RAW}/v1.34/ovh/PRODUCT.yaml": httpx.Response(200, text=text)}
    with pytest.raises(SchemaScrapeError, match=problem):
        client_for("ovhcloud", overrides).fetch()


def test_the_conformance_sources_always_run_and_are_in_the_snapshot():
    # OCI's price list needs no key, which drops its SkyPilot catalog, but not its conformance cells.
    assert "cncf-ai-oci" in registry.scheduled_sources("catalog", environ={})
    assert set(cncf.CLIENTS) <= set(registry.snapshot_sources())


@pytest.mark.django_db
def test_offline_replay_stores_the_dataset_cells_beside_curated_answers(settings):
    facts_sync.providers_sync()
    curated_gang = Capability.objects.get(provider__slug="coreweave", key="gang_scheduling")
    run = runs.source_scrape(slug="cncf-ai-coreweave", offline=True)
    assert run.status == RunStatus.SUCCEEDED
    cells = {cell.key: cell for cell in Capability.objects.filter(provider__slug="coreweave")}
    assert (cells["dra"].value, cells["dra"].origin, cells["dra"].verified_on) == ("yes", "dataset", cncf.AS_OF)
    assert cells["cncf_ai_conformance"].label_zh
    # A curated answer read from CoreWeave's own page is kept over the dataset's.
    assert (cells["gang_scheduling"].origin, cells["gang_scheduling"].source_url) == (
        "curated", curated_gang.source_url)
    # Loading the curated files again keeps the dataset's cells where the files know nothing, and a second replay
    # changes nothing.
    facts_sync.providers_sync()
    assert Capability.objects.get(provider__slug="coreweave", key="dra").origin == "dataset"
    again = runs.source_scrape(slug="cncf-ai-coreweave", offline=True)
    assert again.capabilities_changed == 0


@pytest.mark.django_db
def test_a_malformed_file_fails_the_run_and_keeps_the_stored_cells():
    facts_sync.providers_sync()
    runs.source_scrape(slug="cncf-ai-linode", offline=True)
    routes = cncf.CLIENTS["cncf-ai-linode"].recorded()
    broken = {f"{cncf.RAW}/v1.34/lke/PRODUCT.yaml": httpx.Response(200, text="metadata: [unclosed")}
    transport = httpx.MockTransport(lambda request: answer(routes, broken, str(request.url)))
    run = runs.source_scrape(slug="cncf-ai-linode", transport=transport)
    assert run.status == RunStatus.FAILED and "SchemaScrapeError" in run.error
    assert Capability.objects.get(provider__slug="linode", key="dra").value == "yes"
