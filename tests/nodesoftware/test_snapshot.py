"""Node software over the bundled snapshot: the filters of the one OfferFilterSet (cuda, k8s_version, dra, stack)
through the API ("CUDA 12.8 image, Kubernetes 1.35, managed" returns only offers whose node runs it, a CUDA 13 image
drops the V100s for their architecture, unparseable versions are a 400 naming the parameter), the API fields and the
"Node software" sections of the provider and offer pages."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from nodesoftware.fit import node_fit
from providers.models import Offer

pytestmark = pytest.mark.django_db



@pytest.fixture
def db_access(snapshot, db):
    return db


def api(query: str):
    return APIClient().get(f"/api/v1/offers/?{query}&page_size=500")


def api_count(query: str) -> int:
    response = api(query)
    assert response.status_code == 200, response.content
    return response.json()["count"]


def api_offers(query: str) -> list[Offer]:
    """Every offer the API lists for `query`, page after page."""
    ids, page = [], 1
    while page:
        response = APIClient().get(f"/api/v1/offers/?{query}&page_size=500&page={page}")
        assert response.status_code == 200, response.content
        ids += [row["id"] for row in response.json()["results"]]
        page = page + 1 if response.json()["next"] else 0
    return list(Offer.objects.select_related("gpu", "provider").filter(id__in=ids))


def test_cuda_12_8_on_kubernetes_1_35_managed_returns_only_offers_whose_node_runs_it(db_access):
    offers = api_offers("cuda=12.8&k8s_version=1.35&offering=managed")
    assert offers
    assert {"azure", "aws"} <= {offer.provider.slug for offer in offers}  # EKS's nodes, now that EKS's page says so
    for offer in offers:
        fit = node_fit(offer.provider.slug, offer.gpu.slug, offer.gpu.architecture, cuda="12.8", k8s="1.35")
        assert fit.answer == "yes", (offer.instance_type, fit.reason)
    managed = set(Offer.objects.filter(is_active=True, kubernetes_profile__managed_node="yes").values_list(
        "id", flat=True))
    assert {offer.id for offer in offers} <= managed
    # a managed offer left out is left out for a reason: its node does not run it, or nobody knows
    left_out = Offer.objects.select_related("gpu", "provider").filter(id__in=managed - {o.id for o in offers})
    for offer in left_out[:200]:
        fit = node_fit(offer.provider.slug, offer.gpu.slug, offer.gpu.architecture, cuda="12.8", k8s="1.35")
        assert fit.answer != "yes"


def test_a_cuda_13_image_excludes_v100_offers_which_cuda_12_keeps(db_access):
    cuda12 = api_offers("cuda=12.8&gpu_family=V100")
    assert cuda12 and {offer.provider.slug for offer in cuda12} >= {"aws"}
    assert api_offers("cuda=13.0&gpu_family=V100") == []
    h100 = api_offers("cuda=13.0&gpu_family=H100&provider=aws")
    assert h100  # the driver runs CUDA 13 (580); only the V100's architecture rules it out
    fit = node_fit("aws", "v100", "Volta", cuda="13.0")
    assert fit.answer == "no" and "compute capability 7.0" in fit.reason


def test_k8s_version_keeps_providers_whose_calendar_offers_it(db_access):
    for provider in ("aws", "azure", "gcp"):
        assert api_count(f"k8s_version=1.35&provider={provider}") > 0
    assert api_count("k8s_version=1.35&provider=lambda") == 0  # no calendar recorded: unknown, not yes
    assert api_count("k8s_version=1.20") == 0



@pytest.mark.parametrize("provider", ["nebius", "digitalocean"])
def test_k8s_version_counts_a_provider_whose_calendar_cannot_answer_as_unknown_never_a_silent_no(db_access, provider):
    """Nebius publishes no calendar; DigitalOcean's recorded one ends at 1.34: whether they offer 1.35 is unknown,
    so their offers are left out and counted, and unknown=include brings them back."""
    body = api(f"k8s_version=1.35&provider={provider}").json()
    assert body["count"] == 0
    every = api_count(f"provider={provider}")
    assert every > 0 and body["left_out_for_unknown"]["by_provider"][provider] == every
    assert api_count(f"k8s_version=1.35&provider={provider}&unknown=include") == every
    if provider == "digitalocean":  # 1.34 is in the calendar, its support ended 2026-10-27: a known no, not counted
        assert api(f"k8s_version=1.33&provider={provider}").json()["left_out_for_unknown"]["total"] == 0


@pytest.mark.parametrize("query, parameter", [("cuda=12", "cuda"), ("cuda=latest", "cuda"),
                                              ("k8s_version=1.x", "k8s_version")])
def test_unparseable_versions_are_a_400_naming_the_parameter(db_access, query, parameter):
    response = api(query)
    assert response.status_code == 400
    assert parameter in response.json()


def test_stack_slurm_keeps_only_providers_with_a_managed_or_documented_slurm(db_access):
    from nodesoftware.stacks import providers_with
    slugs = set(Offer.objects.filter(id__in=[row["id"] for row in api("stack=slurm").json()["results"]])
                .values_list("provider__slug", flat=True))
    assert slugs and slugs <= providers_with("slurm")
    assert api_count("stack=slurm&provider=aws") == 0


def test_dra_yes_keeps_providers_whose_service_serves_dra_and_documents_a_driver(db_access):
    from nodesoftware.fit import provider_dra
    for provider in ("aws", "gcp"):
        assert api_count(f"dra=yes&provider={provider}") > 0
    assert api_count("dra=yes&provider=azure") == 0 and provider_dra("azure").value == "partial"
    assert api_count("dra=partial&provider=azure") > 0


def test_the_provider_api_gives_node_images_with_dated_driver_history_calendars_dra_and_stacks(db_access):
    body = APIClient().get("/api/v1/providers/aws/").json()["node_software"]
    [eks] = body["services"]
    al2023 = next(image for image in eks["images"] if image["slug"] == "eks-al2023-nvidia")
    assert [change["branch"] for change in al2023["history"]] == [555, 560, 570, 575, 570, 580]
    assert al2023["device_plugin"] == "no" and al2023["gpu_operator"] == "driver_disabled"
    assert any(row["version"] == "1.35" and row["extended_support_ends"] for row in eks["kubernetes"])
    assert eks["dra"]["value"] == "yes"
    assert any(stack["family"] == "kueue" and stack["source_url"] for stack in body["stacks"])
    azure = APIClient().get("/api/v1/providers/azure/").json()["node_software"]
    linux = next(image for service in azure["services"] for image in service["images"]
                 if image["slug"] == "aks-azurelinux")
    assert linux["driver_text"] == "preinstalled, version not published"
    assert APIClient().get("/api/v1/providers/lambda/").json()["node_software"] == {"services": [], "stacks": []}


def test_the_offer_api_gives_the_gpus_compute_capability_and_its_default_node_image(db_access):
    offer = Offer.objects.filter(provider__slug="aws", gpu__slug="v100-32gb", is_active=True).first()
    body = APIClient().get(f"/api/v1/offers/{offer.id}/").json()["node_software"]
    assert body["gpu"]["compute_capability"] == "7.0" and body["gpu"]["dtypes"]["bf16"] == "no"
    assert body["node"]["image"] == "eks-al2023-nvidia" and body["node"]["driver_branch"] == 580
    amd = Offer.objects.filter(gpu__vendor="amd", is_active=True).first()
    assert APIClient().get(f"/api/v1/offers/{amd.id}/").json()["node_software"]["gpu"]["runtime"] == "ROCm"


def test_the_provider_page_shows_node_images_drivers_history_and_stacks_in_both_languages(db_access):
    from django.test import Client
    html = Client().get("/providers/azure/").content.decode()
    assert 'id="node-software-title"' in html
    assert "AKS Ubuntu node image, GRID driver" in html and "570.211.01" in html
    assert "preinstalled, version not published" in html  # Azure Linux: a known answer, not unknown
    assert "Kueue" in html and "provider-managed" in html
    chinese = Client().get("/providers/azure/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "节点软件" in chinese and "已预装，版本未公布" in chinese
    assert "No node images are recorded" in Client().get("/providers/lambda/").content.decode()


def test_the_chinese_provider_pages_give_the_node_software_prose_in_chinese(db_access):
    """Every stack row, driver choice and DRA driver has its Chinese sentence, and the Chinese pages show it instead
    of the English: a Chinese reader of OKE, CKS or AKS meets no English prose in the node-software section."""
    from django.test import Client

    from nodesoftware import images, stacks

    assert all(answer.detail_zh for answer in stacks.stack_answers())
    services = images.services()
    assert all(image.choices_zh for service in services for image in service.images if image.choices)
    assert all(service.dra_driver_zh for service in services if service.dra_driver)
    for slug, english, chinese in [
        ("oci", "installs Kubeflow 1.8 on OKE", "在 OKE 上安装 Kubeflow 1.8"),
        ("oci", "import one of the images", "导入 Oracle 指南列出的某个镜像"),
        ("coreweave", "installs the KubeRay operator on CKS", "在 CKS 上安装 KubeRay operator"),
        ("azure", "serve DRA, but an NVIDIA DRA driver mode", "提供 DRA，但节点池的 NVIDIA DRA 驱动模式"),
    ]:
        assert english in Client().get(f"/providers/{slug}/").content.decode(), slug
        page = Client().get(f"/providers/{slug}/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
        text = re.sub(r"<[^>]+>", "", page)  # the names inside a Chinese sentence are marked lang="en"
        assert chinese in text and english not in text, slug


def test_the_offer_page_shows_the_gpus_compute_capability_and_its_node_image(db_access):
    from django.test import Client
    offer = Offer.objects.filter(provider__slug="azure", gpu__slug="a10", is_active=True).first()
    html = Client().get(f"/offers/{offer.id}/").content.decode()
    assert "Compute capability" in html and "8.6" in html and "aks-ubuntu-grid" in html


def test_with_cuda_each_listed_offer_says_how_its_node_runs_it_and_marks_a_non_default_image(db_access):
    rows = api("cuda=12.8&k8s_version=1.35&provider=gcp&gpu_family=L4").json()["results"]
    assert rows and all(row["node_fit"]["answer"] == "yes" for row in rows)
    # GKE's default COS driver version is not published; Google's Ubuntu installer DaemonSet for R570 runs it
    assert all(row["node_fit"]["needs_image"] and row["node_fit"]["image"] == "gke-ubuntu-installer" for row in rows)
    eks = api("cuda=12.8&k8s_version=1.35&provider=aws").json()["results"]
    assert eks and not any(row["node_fit"]["needs_image"] for row in eks)
    assert "node_fit" not in api("provider=aws").json()["results"][0]  # only when a CUDA version is asked


def test_the_compare_page_sets_node_software_side_by_side(db_access):
    from django.test import Client
    html = Client().get("/compare/?provider=aws&provider=azure&provider=lambda").content.decode()
    table = html[html.index('id="compare-node-software"'):]
    table = table[:table.index("</table>")]
    assert "580 branch" in table and "580.159.04" in table  # EKS AL2023 and AKS CUDA images today
    assert "Kueue with topology-aware scheduling" in table
    assert table.count('class="u"') >= 3  # Lambda: driver, DRA and stacks unknown, not "no"
