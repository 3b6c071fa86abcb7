"""Per-offer Kubernetes answers (providers.kubernetes, stored by kubernetes_profiles.offer_kubernetes_refresh,
read through selectors.offer_kubernetes_answers): every derivation rule and every state, on the real test database,
and the triggers that recompute them (ingest, a provider cell, an instance fact, a provider API's node sizes)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from providers import facts_sync, kubernetes_profiles, selectors
from providers.curated import CuratedDataError, parse_instance_types
from providers.ingest import offers_sync
from providers.kubernetes import Fact
from providers.models import Capability, KubernetesFact, KubernetesProfile, Offer
from tests.api.conftest import capabilities, gpu, instance_facts, offer
from tests.factories import DataSourceFactory, ProviderFactory

pytestmark = pytest.mark.django_db

MANAGED = {"offering": "managed", "mig": "yes", "mps": "yes", "time_slicing": "yes", "infiniband": "yes",
           "scale_to_zero": "yes", "spot_nodes": "yes", "gpu_operator": "preinstalled"}


@pytest.fixture
def gpus():
    return {
        "h100": gpu("h100", "NVIDIA H100", "nvidia", "H100", "80", mig=["1g.10gb", "7g.80gb"]),
        "t4": gpu("t4", "NVIDIA T4", "nvidia", "T4", "16"),
        "mi25": gpu("mi25", "AMD Radeon Instinct MI25", "amd", "MI25", "16"),
    }


def machine(slug, cells, instance_type, gpu_model, *, count="8", facts=None):
    """One provider with `cells`, one offer of `instance_type`, the type's facts; returns the offer's answers."""
    provider = ProviderFactory(slug=slug, name=slug.title())
    capabilities(provider, **cells)
    source = DataSourceFactory(slug=f"{slug}-src", provider=provider)
    item = offer(instance_type, provider, source, gpu_model, count=count, price="8")
    instance_facts(provider, facts or {})  # stores the facts and derives the answers
    return selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]


def states(answers, *keys):
    return tuple(answers[key].state for key in keys)


# --- managed node and bring-your-own ------------------------------------------------------------------------------


def test_a_documented_node_type_of_a_managed_provider_is_a_managed_node(gpus):
    answers = machine("m", MANAGED, "big.8x", gpus["h100"], facts={"big.8x": {"managed_node": "yes"}})
    assert answers["managed_node"].state == "yes"
    assert answers["managed_node"].sources == ["https://example.org/big.8x", "https://example.org/offering"]


def test_a_type_the_provider_excludes_is_offered_but_not_on_this_machine(gpus):
    answers = machine("m", MANAGED, "gpu_1x", gpus["h100"], count="1", facts={"gpu_*": {"managed_node": "no"}})
    assert states(answers, "managed_node", "mig", "scale_to_zero", "spot_nodes", "gpu_operator") == (
        "not_on_this_machine",) * 5
    assert "cannot be one of its nodes" in answers["managed_node"].reason


def test_without_a_node_fact_a_managed_provider_gives_unknown_never_yes(gpus):
    answers = machine("m", MANAGED, "big.8x", gpus["h100"])
    assert states(answers, "managed_node", "mig", "scale_to_zero", "byo") == ("unknown",) * 4
    assert "no source saying whether big.8x" in answers["managed_node"].reason


def test_an_unknown_offering_is_unknown_and_a_byo_provider_is_no_managed_node_but_byo_yes(gpus):
    assert machine("u", {}, "x", gpus["h100"])["managed_node"].state == "unknown"
    byo = machine("b", {"offering": "byo", "mig": "n/a"}, "x", gpus["h100"])
    assert states(byo, "managed_node", "byo", "mig") == ("no", "yes", "n/a")
    none = machine("n", {"offering": "none"}, "x", gpus["h100"])
    assert states(none, "managed_node", "byo") == ("no", "no")


def test_a_byo_fact_answers_for_the_type(gpus):
    answers = machine("m", MANAGED, "vm.1", gpus["h100"], facts={"vm.*": {"byo": "yes"}})
    assert answers["byo"].state == "yes" and answers["byo"].sources == ["https://example.org/vm.*"]


# --- MIG, MPS, time-slicing ---------------------------------------------------------------------------------------


def test_mig_yes_needs_the_provider_the_gpu_and_a_managed_node_with_whole_gpus(gpus):
    answers = machine("m", MANAGED, "big.8x", gpus["h100"], facts={"big.8x": {"managed_node": "yes"}})
    assert answers["mig"].state == "yes"
    assert "https://example.org/mig" in answers["mig"].sources and "1g.10gb" in answers["mig"].reason


def test_the_answers_name_the_gpu_as_the_machine_has_it_not_with_the_catalogs_not_stated(gpus):
    vague = gpu("a100-vague", "NVIDIA A100 40GB (form factor not stated)", "nvidia", "A100", "40",
                mig=["1g.5gb", "7g.40gb"])
    answers = machine("m", MANAGED, "p4d.x", vague, facts={"p4d.x": {"managed_node": "yes", "form_factor": "sxm"}})
    assert "NVIDIA A100 40GB SXM has MIG profiles" in answers["mig"].reason
    assert "not stated" not in answers["mig"].reason
    # without the machine's form factor the catalog's name stays as it is
    other = machine("n", MANAGED, "other.x", vague, facts={"other.x": {"managed_node": "yes"}})
    assert "NVIDIA A100 40GB (form factor not stated) has MIG profiles" in other["mig"].reason


def test_a_mig_yes_says_how_mig_is_set_up_on_the_providers_managed_kubernetes_in_both_languages(gpus):
    provider = ProviderFactory(slug="gk", name="Gk")
    capabilities(provider, offering="managed")
    Capability.objects.create(provider=provider, key="mig", value="yes", source_url="https://example.org/mig",
                              verified_on=date(2026, 1, 2), confidence="documented",
                              detail="Set gpu-partition-size on the node pool.",
                              detail_zh="在节点池上设置 gpu-partition-size。")
    source = DataSourceFactory(slug="gk-src", provider=provider)
    item = offer("a3.8", provider, source, gpus["h100"], count="8", price="8")
    instance_facts(provider, {"a3.8": {"managed_node": "yes"}})
    mig = selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]["mig"]
    assert mig.state == "yes"
    assert mig.reason.endswith("How MIG is set up there: Set gpu-partition-size on the node pool.")
    assert mig.reason_zh.endswith("MIG 在该平台上的设置方式：在节点池上设置 gpu-partition-size。")


def test_mig_on_a_gpu_without_mig_profiles_is_no_and_on_a_non_nvidia_gpu_not_applicable(gpus):
    t4 = machine("t", MANAGED, "t4.1x", gpus["t4"], count="1", facts={"t4.*": {"managed_node": "yes"}})
    assert t4["mig"].state == "no" and t4["mig"].reason == "The NVIDIA T4 has no MIG: it has no MIG profiles."
    amd = machine("a", MANAGED, "mi.1x", gpus["mi25"], count="1", facts={"mi.*": {"managed_node": "yes"}})
    assert states(amd, "mig", "mps", "time_slicing") == ("n/a", "n/a", "n/a")


def test_mig_on_a_fraction_of_a_gpu_is_offered_but_not_on_this_machine(gpus):
    answers = machine("f", MANAGED, "h100.half", gpus["h100"], count="0.5",
                      facts={"h100.*": {"managed_node": "yes"}})
    assert answers["mig"].state == "not_on_this_machine" and "fraction of a GPU" in answers["mig"].reason
    share = machine("s", MANAGED, "h100.slice", gpus["h100"], count="1", facts={"h100.*": {"managed_node": "yes"}})
    assert share["mig"].state == "yes"
    provider = ProviderFactory(slug="s")
    facts_sync.instance_facts_sync(provider_slug=provider.slug, origin="curated", facts=[
        Fact("h100.*", "managed_node", "yes", source_url="https://example.org/n",
                           verified_on=date(2026, 1, 1), confidence="documented"),
        Fact("h100.slice", "gpu_share", "0.25", Decimal("0.25"), source_url="https://example.org/share",
                           verified_on=date(2026, 1, 1), confidence="documented")])
    item = Offer.objects.get(provider=provider)
    answers = selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]
    assert answers["mig"].state == "not_on_this_machine" and "https://example.org/share" in answers["mig"].sources


def test_mig_follows_the_providers_own_no_unknown_and_not_applicable(gpus):
    node = {"h.*": {"managed_node": "yes"}}
    assert machine("n", {**MANAGED, "mig": "no"}, "h.8", gpus["h100"], facts=node)["mig"].state == "no"
    assert machine("u", {**MANAGED, "mig": "unknown"}, "h.8", gpus["h100"], facts=node)["mig"].state == "unknown"
    assert machine("a", {**MANAGED, "mig": "n/a"}, "h.8", gpus["h100"], facts=node)["mig"].state == "n/a"


def test_a_providers_mig_reaches_only_the_machines_its_page_covers(gpus):
    """GKE's MIG page names A100, H100 and H200: a G4's RTX PRO 6000 is unknown there, not yes; a type the provider
    excludes is "the provider has it, but not on this machine"; a type with no such fact keeps the derived yes."""
    facts = {"g.*": {"managed_node": "yes"}, "g.rtx": {"mig": "unknown"}, "g.off": {"mig": "no"}}
    answers = {name: machine(f"p{index}", MANAGED, name, gpus["h100"], facts=facts)["mig"]
               for index, name in enumerate(("g.rtx", "g.off", "g.h100"))}
    assert [answers[name].state for name in ("g.rtx", "g.off", "g.h100")] == ["unknown", "not_on_this_machine", "yes"]
    assert "does not name the NVIDIA H100 of g.rtx" in answers["g.rtx"].reason
    assert answers["g.rtx"].sources[0] == "https://example.org/g.rtx"
    assert answers["g.off"].reason.startswith("P1 supports MIG on its managed Kubernetes, but not on g.off.")
    assert "https://example.org/g.off" in answers["g.off"].sources


def test_a_providers_spot_nodes_reach_only_the_machines_its_page_covers(gpus):
    """Oracle's preemptible capacity excludes bare metal: a type whose spot_nodes fact says no is "the provider has
    it, but not on this machine", citing that fact; unknown stays unknown; a type without one keeps the yes."""
    facts = {"g.*": {"managed_node": "yes"}, "g.bm": {"spot_nodes": "no"}, "g.new": {"spot_nodes": "unknown"}}
    answers = {name: machine(f"s{index}", MANAGED, name, gpus["h100"], facts=facts)["spot_nodes"]
               for index, name in enumerate(("g.bm", "g.new", "g.vm"))}
    assert [answers[name].state for name in ("g.bm", "g.new", "g.vm")] == ["not_on_this_machine", "unknown", "yes"]
    assert answers["g.bm"].reason.startswith("S0 supports Spot GPU nodes on its managed Kubernetes, but not on g.bm.")
    assert answers["g.bm"].sources == ["https://example.org/g.bm", "https://example.org/spot_nodes"]
    assert "does not say whether g.new is covered" in answers["g.new"].reason


def test_each_answer_carries_the_oldest_day_its_sources_were_checked(gpus):
    """A managed node rests on the type's fact (checked 2026-01-03) and the offering cell (2026-01-02): the answer is
    as fresh as its oldest source. An answer whose only source is undated (the T4's MIG: the GPU maker's page) has
    none, and the API and the offer's page say the same."""
    answers = machine("d", MANAGED, "big.8x", gpus["h100"], facts={"big.8x": {"managed_node": "yes"}})
    assert answers["managed_node"].verified_on == "2026-01-02"
    t4 = machine("e", MANAGED, "t4.1x", gpus["t4"], count="1", facts={"t4.1x": {"managed_node": "yes"}})
    assert t4["mig"].state == "no" and t4["mig"].verified_on is None
    item = Offer.objects.get(instance_type="big.8x")
    api = APIClient().get(f"/api/v1/offers/{item.id}/").json()["kubernetes"]
    assert api["managed_node"]["verified_on"] == "2026-01-02"
    t4_api = APIClient().get(f"/api/v1/offers/{Offer.objects.get(instance_type='t4.1x').id}/").json()["kubernetes"]
    assert t4_api["mig"]["verified_on"] is None and t4_api["mig"]["sources"]
    html = Client().get(f"/offers/{item.id}/").content.decode()
    assert 'verified <time datetime="2026-01-02">' in html


def test_the_shipped_mig_scopes_keep_gke_g4_and_nebius_b200_unknown_and_b300_has_mig_profiles():
    from providers import kubernetes as k8s
    from providers.curated import load_instance_types
    from scrapers.normalize import gpu_catalog

    facts = {}
    for file in load_instance_types():
        facts.setdefault(file.provider, []).extend(
            k8s.Fact(pattern=f.pattern, key=f.key, value=f.value, origin=file.origin) for f in file.facts)
    assert k8s.facts_for("g4-standard-48", facts["gcp"])["mig"].value == "unknown"
    assert "mig" not in k8s.facts_for("a3-highgpu-8g", facts["gcp"])
    assert k8s.facts_for("gpu-b200-sxm_8gpu-160vcpu-1792gb", facts["nebius"])["mig"].value == "unknown"
    assert "mig" not in k8s.facts_for("gpu-h100-sxm_8gpu-128vcpu-1600gb", facts["nebius"])
    catalog = {spec.slug: spec for spec in gpu_catalog()}
    assert catalog["b300"].mig_profiles[-1] == "7g.269gb" and catalog["gb300"].mig_profiles[-1] == "7g.278gb"


def test_an_offer_whose_gpu_is_not_in_the_catalog_has_unknown_mig(gpus):
    answers = machine("z", MANAGED, "z.1", None, count="1", facts={"z.*": {"managed_node": "yes"}})
    assert states(answers, "mig", "mps") == ("unknown", "unknown")


def test_time_slicing_and_mps_are_nvidia_features_on_a_managed_node(gpus):
    answers = machine("m", MANAGED, "h.8", gpus["h100"], facts={"h.*": {"managed_node": "yes"}})
    assert states(answers, "mps", "time_slicing") == ("yes", "yes")


# --- RDMA fabric --------------------------------------------------------------------------------------------------


def efa_machine(gpus, instance_type, **fabric):
    provider = ProviderFactory(slug=f"aws-like-{instance_type.replace('.', '-')}")
    capabilities(provider, offering="managed", efa="yes")
    source = DataSourceFactory(slug=f"{provider.slug}-src", provider=provider)
    item = offer(instance_type, provider, source, gpus["h100"], count="8", price="98")
    facts_sync.instance_facts_sync(provider_slug=provider.slug, origin="catalog", facts=[Fact(
        instance_type, "fabric", "efa", source_url="https://example.org/efa", verified_on=date(2026, 8, 1),
        confidence="third_party", **fabric)])
    return selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]


def test_efa_listed_for_gpudirect_rdma_is_rdma_yes_with_kind_class_interfaces_and_bandwidth(gpus):
    answers = efa_machine(gpus, "p5.48xlarge", interfaces=32, bandwidth_gbps=Decimal(3200), gpudirect_rdma=True)
    rdma = answers["rdma"]
    assert (rdma.state, rdma.fabric, rdma.fabric_class, rdma.interfaces, rdma.bandwidth_gbps, rdma.efa_interfaces) == (
        "yes", "efa", "gpudirect_rdma", 32, 3200, 32)
    assert rdma.reason == ("p5.48xlarge has EFA (32 EFA interfaces, 3200 Gbit/s in total). That is GPUDirect RDMA "
                           "between nodes.") and rdma.sources == ["https://example.org/efa"]
    assert answers["fabric"].state == "efa" and answers["fabric"].fabric_class == "gpudirect_rdma"


def test_efa_without_gpudirect_rdma_is_a_plain_network_and_unstated_efa_is_unknown(gpus):
    plain = efa_machine(gpus, "g6.8xlarge", interfaces=1, gpudirect_rdma=False)["rdma"]
    assert (plain.state, plain.fabric_class) == ("not_on_this_machine", "plain")
    assert "does not list it among the types that support GPUDirect RDMA" in plain.reason
    unstated = efa_machine(gpus, "g5.8xlarge", interfaces=1)["rdma"]
    assert (unstated.state, unstated.fabric_class, unstated.interfaces) == ("unknown", "unknown", 1)


@pytest.mark.parametrize(("kind", "state", "fabric_class"), [
    ("infiniband", "yes", "gpudirect_rdma"), ("roce", "yes", "gpudirect_rdma"),
    ("rdma_unspecified", "yes", "gpudirect_rdma"), ("infiniband_or_roce", "yes", "gpudirect_rdma"),
    ("gpudirect_tcpx", "not_on_this_machine", "gpudirect_tcp"), ("gpudirect_tcpxo", "not_on_this_machine",
                                                                  "gpudirect_tcp"),
    ("none", "not_on_this_machine", "plain"),
])
def test_each_fabric_kind_has_its_class(gpus, kind, state, fabric_class):
    rdma = machine("k", MANAGED, "x.8", gpus["h100"], facts={"x.8": {"fabric": kind}})["rdma"]
    assert (rdma.state, rdma.fabric, rdma.fabric_class) == (state, kind, fabric_class)
    if kind == "infiniband_or_roce":
        assert "InfiniBand or RoCE, depends on the cluster" in rdma.reason


def test_a_type_without_the_providers_fabric_is_offered_but_not_on_this_machine(gpus):
    answers = machine("ib", MANAGED, "small.1", gpus["t4"], count="1", facts={"small.1": {"fabric": "none"}})
    assert answers["rdma"].state == "not_on_this_machine" and "InfiniBand" in answers["rdma"].reason
    plain = machine("p", {"offering": "managed"}, "small.1", gpus["t4"], count="1",
                    facts={"small.1": {"fabric": "none"}})
    assert plain["rdma"].state == "no"


def test_a_provider_without_any_fabric_is_rdma_no_and_without_a_type_fact_unknown(gpus):
    none = machine("n", {"offering": "managed", "infiniband": "no", "roce": "no", "efa": "n/a",
                         "gpudirect_tcpx": "n/a"}, "x.8", gpus["h100"])
    assert none["rdma"].state == "no"
    some = machine("s", MANAGED, "x.8", gpus["h100"])
    assert some["rdma"].state == "unknown" and "InfiniBand on some machines" in some["rdma"].reason


def test_an_unknown_fabric_with_sources_read_says_what_was_read_instead_of_no_source(gpus):
    # CoreWeave's A100: an old page says InfiniBand, the current ones do not mark it. The answer stays unknown, but
    # it names what was read and links it first, rather than claiming we have no source.
    from providers.facts_sync import instance_facts_sync

    provider = ProviderFactory(slug="cw", name="Cw")
    capabilities(provider, **MANAGED)
    item = offer("a.8", provider, DataSourceFactory(slug="cw-src", provider=provider), gpus["h100"], count="8",
                 price="8")
    read = Fact(pattern="a.8", key="fabric", value="unknown", detail="The old page and the new disagree.",
                              source_url="https://example.org/new-page", verified_on=date(2026, 12, 6),
                              confidence="documented")
    instance_facts_sync(provider_slug="cw", origin="curated", facts=[read])
    rdma = selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]["rdma"]
    assert rdma.state == "unknown"
    assert "does not settle a.8's fabric" in rdma.reason and "The old page and the new disagree." in rdma.reason
    assert "no source" not in rdma.reason
    assert rdma.sources[0] == "https://example.org/new-page"
    # the same where the provider states no fabric at all (its fabric cells unknown)
    plain = ProviderFactory(slug="pl", name="Pl")
    capabilities(plain, offering="managed")
    item = offer("b.8", plain, DataSourceFactory(slug="pl-src", provider=plain), gpus["h100"], count="8", price="8")
    instance_facts_sync(provider_slug="pl", origin="curated", facts=[Fact(
        pattern="b.8", key="fabric", value="unknown", detail="Its page names no fabric.",
        source_url="https://example.org/b-page", verified_on=date(2026, 12, 6), confidence="documented")])
    rdma = selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]["rdma"]
    assert rdma.state == "unknown" and "does not settle b.8's fabric" in rdma.reason
    assert "Its page names no fabric." in rdma.reason and rdma.sources == ["https://example.org/b-page"]


# --- managed features and the GPU stack ---------------------------------------------------------------------------


def test_managed_features_reach_a_machine_only_as_a_managed_node(gpus):
    node = machine("m", MANAGED, "h.8", gpus["h100"], facts={"h.*": {"managed_node": "yes"}})
    assert states(node, "scale_to_zero", "spot_nodes", "gpu_operator") == ("yes", "yes", "yes")
    assert "preinstalled" in node["gpu_operator"].reason
    assert states(node, "rwx_storage", "gang_scheduling", "node_autoscaling") == ("unknown",) * 3
    own = machine("o", {**MANAGED, "gpu_operator": "user_installs", "spot_nodes": "no"}, "h.8", gpus["h100"],
                  facts={"h.*": {"managed_node": "yes"}})
    assert states(own, "gpu_operator", "spot_nodes") == ("no", "no")


def test_a_machine_that_cannot_be_a_managed_node_gets_no_service_feature_even_where_the_service_is_unknown(gpus):
    cells = {"offering": "managed", "mig": "unknown", "mps": "unknown", "scale_to_zero": "unknown",
             "gang_scheduling": "unknown", "rwx_storage": "unknown"}
    off = machine("l", cells, "od.8", gpus["h100"], facts={"od.*": {"managed_node": "no"}})
    assert off["managed_node"].state == "not_on_this_machine"
    assert states(off, "scale_to_zero", "gang_scheduling") == ("no", "no")
    assert "cannot be a node" in off["scale_to_zero"].reason and "not known" in off["scale_to_zero"].reason
    # GPU features, the driver and shared storage can still come in the user's own cluster: they stay unknown.
    assert states(off, "mig", "mps", "rwx_storage", "gpu_operator") == ("unknown",) * 4
    # A machine that may be a node keeps the unknown: the service's own answer decides it.
    maybe = machine("u", cells, "x.8", gpus["h100"])
    assert states(maybe, "scale_to_zero", "gang_scheduling") == ("unknown",) * 2


def test_a_providers_nvidia_driver_answer_is_not_a_yes_for_an_amd_machine(gpus):
    """Who installs an AMD (or TPU) runtime is a different fact from the provider's NVIDIA driver answer."""
    amd = machine("a", MANAGED, "m.8", gpus["mi25"], facts={"m.*": {"managed_node": "yes"}})
    assert amd["gpu_operator"].state == "unknown"
    assert "NVIDIA" in amd["gpu_operator"].reason and "AMD Radeon Instinct MI25" in amd["gpu_operator"].reason
    assert amd["spot_nodes"].state == "yes"  # the other managed features still reach the node


# --- facts: precedence, provider API node sizes, strict files -------------------------------------------------------


def test_an_exact_type_beats_a_pattern_and_a_provider_api_fact_beats_a_curated_one(gpus):
    answers = machine("m", MANAGED, "gpu-a", gpus["h100"],
                      facts={"gpu-*": {"managed_node": "no"}, "gpu-a": {"managed_node": "yes"}})
    assert answers["managed_node"].state == "yes"
    provider = ProviderFactory(slug="m")
    item = Offer.objects.get(provider=provider)
    source = item.source
    KubernetesFact.objects.create(provider=provider, source=source, name="kubernetes_gpu_node_sizes",
                                  value=["gpu-b"], source_url="https://api.example.org/options",
                                  fetched_at=timezone.now())
    other = offer("gpu-b", provider, source, gpus["h100"], count="8", price="9")
    kubernetes_profiles.offer_kubernetes_refresh(provider_ids=[provider.pk])
    node = selectors.offer_kubernetes_answers(offer_ids=[other.id])[other.id]["managed_node"]
    assert node.state == "yes" and node.sources[0] == "https://api.example.org/options"


def test_answers_follow_a_changed_provider_cell_and_a_new_ingest(gpus):
    answers = machine("m", MANAGED, "h.8", gpus["h100"], facts={"h.*": {"managed_node": "yes"}})
    assert answers["spot_nodes"].state == "yes"
    from providers.curated import CapabilityRecord, ProviderRecord

    record = ProviderRecord(slug="m", name="M", name_zh="", website="https://example.org/", kind="gpu_cloud",
                            headquarters="US", capabilities={
                                key: CapabilityRecord(key=key, value=value if key != "spot_nodes" else "no",
                                                      source_url=f"https://example.org/{key}",
                                                      verified_on=date(2026, 1, 2), confidence="documented")
                                for key, value in MANAGED.items()})
    facts_sync.providers_sync(records=[record])
    item = Offer.objects.get(provider__slug="m")
    assert selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]["spot_nodes"].state == "no"


def test_offers_sync_derives_the_answers_of_new_offers(gpus):
    from scrapers.base import ScrapedOffer, ScrapeResult

    provider = ProviderFactory(slug="ing")
    capabilities(provider, **MANAGED)
    instance_facts(provider, {"h.*": {"managed_node": "yes"}})
    source = DataSourceFactory(slug="ing-src", provider=provider)
    from providers.models import ScrapeRun

    run = ScrapeRun.objects.create(source=source, started_at=timezone.now())
    result = ScrapeResult(offers=[ScrapedOffer(instance_type="h.8", region="r1", gpu_name="H100", gpu_count=Decimal(8),
                                               currency="USD", price_hour=Decimal("20"))])
    offers_sync(source=source, run=run, result=result, now=timezone.now())
    item = Offer.objects.get(source=source)
    assert item.kubernetes_profile is not None
    assert selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]["mig"].state == "yes"


def test_an_ingest_takes_the_form_factor_of_the_instance_fact_when_the_source_and_names_state_none(gpus):
    from scrapers.base import ScrapedOffer, ScrapeResult

    provider = ProviderFactory(slug="ffi")
    capabilities(provider, **MANAGED)
    instance_facts(provider, {"big.8": {"form_factor": "sxm"}, "odd.8": {"form_factor": "superchip"}})
    source = DataSourceFactory(slug="ffi-src", provider=provider)
    from providers.models import ScrapeRun

    run = ScrapeRun.objects.create(source=source, started_at=timezone.now())
    result = ScrapeResult(offers=[ScrapedOffer(instance_type=name, region="r1", gpu_name="Z9", gpu_count=Decimal(8),
                                               currency="USD", price_hour=Decimal("20"))
                                  for name in ("big.8", "odd.8", "plain.8")])
    offers_sync(source=source, run=run, result=result, now=timezone.now())
    forms = dict(Offer.objects.filter(source=source).values_list("instance_type", "form_factor"))
    assert forms == {"big.8": "sxm", "odd.8": "", "plain.8": ""}  # an offer stores sxm, pcie or nvl only


def test_an_ingest_writes_offers_with_their_profile_and_moves_a_changed_machine(gpus):
    """offers_sync gives each new or changed offer its machine's profile in the same write: a new machine gets a
    profile derived there and then, a known machine's stored profile is taken as it is (not derived again: the
    services that change a layer recompute it), an offer whose GPU count changed moves to the new machine's profile
    and the profile no offer uses any more is deleted."""
    from providers.models import ScrapeRun
    from scrapers.base import ScrapedOffer, ScrapeResult

    provider = ProviderFactory(slug="ing")
    capabilities(provider, **MANAGED)
    instance_facts(provider, {"h.*": {"managed_node": "yes"}})
    source = DataSourceFactory(slug="ing-src", provider=provider)

    def ingest(*rows):
        run = ScrapeRun.objects.create(source=source, started_at=timezone.now())
        offers = [ScrapedOffer(instance_type=t, region=r, gpu_name="H100", gpu_count=Decimal(n), currency="USD",
                               price_hour=Decimal(price)) for t, r, n, price in rows]
        return offers_sync(source=source, run=run, result=ScrapeResult(offers=offers), now=timezone.now())

    ingest(("h.8", "r1", 8, "20"), ("h.8", "r2", 8, "21"))
    first = KubernetesProfile.objects.get(provider=provider)
    assert set(Offer.objects.filter(source=source).values_list("kubernetes_profile", flat=True)) == {first.pk}
    # A known machine: its stored answers are used as they are (a stale mark here would be overwritten by a
    # re-derivation).
    KubernetesProfile.objects.filter(pk=first.pk).update(mps="no")
    ingest(("h.8", "r1", 8, "20"), ("h.8", "r2", 8, "22"), ("h.8", "r3", 8, "23"))
    assert KubernetesProfile.objects.get(pk=first.pk).mps == "no"
    assert set(Offer.objects.filter(source=source).values_list("kubernetes_profile", flat=True)) == {first.pk}
    # Every offer now lists 4 GPUs: a new machine, a new profile, and the old one goes.
    ingest(("h.8", "r1", 4, "10"), ("h.8", "r2", 4, "11"), ("h.8", "r3", 4, "12"))
    moved = KubernetesProfile.objects.get(provider=provider)
    assert moved.pk != first.pk and moved.gpu_count == 4 and moved.mps == "yes"
    assert set(Offer.objects.filter(source=source).values_list("kubernetes_profile", flat=True)) == {moved.pk}
    # An offer stored without a profile (not by offers_sync) gets one at the next ingest.
    offer("h.8", provider, source, gpus["h100"], count="4", price="9", region="r9")
    Offer.objects.filter(source=source, region="r9").update(kubernetes_profile=None)
    ingest(("h.8", "r1", 4, "10"), ("h.8", "r2", 4, "11"), ("h.8", "r3", 4, "12"), ("h.8", "r9", 4, "9"))
    assert not Offer.objects.filter(source=source, kubernetes_profile__isnull=True).exists()


def test_offers_of_one_machine_share_one_profile_and_unused_profiles_go(gpus):
    answers = machine("m", MANAGED, "h.8", gpus["h100"], facts={"h.*": {"managed_node": "yes"}})
    assert answers["managed_node"].state == "yes"
    provider = ProviderFactory(slug="m")
    source = Offer.objects.get(provider=provider).source
    offer("h.8", provider, source, gpus["h100"], count="8", price="9", region="r2")
    kubernetes_profiles.offer_kubernetes_refresh(provider_ids=[provider.pk])
    assert Offer.objects.filter(provider=provider).values("kubernetes_profile").distinct().count() == 1
    Offer.objects.filter(provider=provider).delete()
    kubernetes_profiles.offer_kubernetes_refresh(provider_ids=[provider.pk])
    assert not KubernetesProfile.objects.filter(provider=provider).exists()


def test_an_offer_never_derived_answers_unknown_everywhere(gpus):
    provider = ProviderFactory(slug="raw")
    item = offer("raw.1", provider, DataSourceFactory(slug="raw-src", provider=provider), gpus["h100"])
    answers = selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]
    required = {"managed_node", "byo", "mig", "rdma", "fabric", "time_slicing", "mps", "scale_to_zero",
                "spot_nodes", "node_autoscaling", "gpu_operator", "rwx_storage", "gang_scheduling"}
    assert required <= set(answers)
    assert {answer.state for answer in answers.values()} == {"unknown"}
    assert selectors.offer_kubernetes_answers(offer_ids=[item.id + 1000]) == {}


def offer_on_an_inferred_managed_node(gpus, confidence="inferred"):
    """An 8x H100 offer of a managed-Kubernetes provider whose machine is a node by an inferred fact only (or by a
    fact of another `confidence`)."""
    provider = ProviderFactory(slug="inf")
    capabilities(provider, **MANAGED)
    item = offer("h.8", provider, DataSourceFactory(slug="inf-src", provider=provider), gpus["h100"], count="8")
    facts_sync.instance_facts_sync(provider_slug="inf", origin="curated", facts=[Fact(
        "h.*", "managed_node", "yes", source_url="https://example.org/guess", verified_on=date(2026, 1, 1),
        confidence=confidence)])
    return item


def test_an_inferred_fact_is_marked_so_documented_only_can_leave_it_out(gpus):
    item = offer_on_an_inferred_managed_node(gpus)
    profile = Offer.objects.get(pk=item.pk).kubernetes_profile
    assert profile.managed_node == "yes" and "managed_node" in profile.inferred and "mig" in profile.inferred
    assert Capability.objects.filter(provider=item.provider).exists()


def test_an_answer_resting_on_a_third_party_page_says_so_and_is_not_shown_as_documented(gpus, client):
    """A machine that is a managed node by a third party's page only: its node answer and every answer that needs
    the node say third_party (API) and carry the matrix's "³" (pages), none of them "~"; they are not inferred, so
    documented_only keeps them; answers that do not rest on that fact stay documented."""
    import re

    item = offer_on_an_inferred_managed_node(gpus, confidence="third_party")
    profile = Offer.objects.get(pk=item.pk).kubernetes_profile
    answers = selectors.offer_kubernetes_answers(offer_ids=[item.pk])[item.pk]
    assert profile.managed_node == "yes" and profile.inferred == []
    resting = {question for question, answer in answers.items() if answer.confidence == "third_party"}
    assert {"managed_node", "mig", "mps", "time_slicing", "scale_to_zero", "spot_nodes", "gpu_operator"} <= resting
    assert answers["byo"].confidence != "third_party" and not any(answer.inferred for answer in answers.values())
    assert {profile.answers[question]["confidence"] for question in resting - {"fabric"}} == {"third_party"}
    for url in (f"/offers/{item.pk}/", f"/offers/kubernetes/{profile.pk}/"):
        html = client.get(url).content.decode()
        marked = re.findall(r'<li><strong>([^<]+)</strong><abbr title="third-party source">³</abbr>', html)
        assert "managed control plane: yes" in marked and len(marked) == len(resting - {"fabric"}), url
        assert '<abbr title="inferred">~</abbr>' not in html, url


def test_the_chinese_reason_quotes_a_facts_chinese_detail_and_the_english_one_where_it_has_none(gpus):
    """An instance fact's `detail_zh` goes into the Chinese reasons (the English reasons keep `detail`); a fact with
    none is quoted in English, as before."""
    provider = ProviderFactory(slug="zh")
    capabilities(provider, **MANAGED)
    item = offer("h.8", provider, DataSourceFactory(slug="zh-src", provider=provider), gpus["h100"], count="8")
    facts_sync.instance_facts_sync(provider_slug="zh", origin="curated", facts=[
        Fact("h.*", "managed_node", "yes", detail="The pool guide lists it.", detail_zh="节点池指南列出了它。",
             source_url="https://example.org/pools", verified_on=date(2026, 1, 1), confidence="documented"),
        Fact("h.*", "fabric", "none", detail="The shapes page lists no RDMA.", source_url="https://example.org/s",
             verified_on=date(2026, 1, 1), confidence="documented")])
    answers = Offer.objects.get(pk=item.pk).kubernetes_profile.answers
    node, fabric = answers["managed_node"], answers["rdma"]
    assert "节点池指南列出了它。" in node["reason_zh"] and "pool guide" not in node["reason_zh"]
    assert "The pool guide lists it." in node["reason"] and "节点池" not in node["reason"]
    assert "The shapes page lists no RDMA." in fabric["reason_zh"]


def test_every_fact_detail_an_answer_quotes_has_a_chinese_text():
    """The answers quote the details of the node, own-cluster, fabric and MIG facts (providers.kubernetes): each is
    written in Chinese too, so a Chinese page never falls back to an English sentence (2,614 of 3,280 offers did)."""
    from providers.curated import load_instance_types

    missing = [(file.provider, fact.pattern, fact.key) for file in load_instance_types() for fact in file.facts
               if fact.key in ("managed_node", "byo", "fabric", "mig") and fact.detail
               and (not fact.detail_zh or fact.detail_zh.isascii())]
    assert missing == []


def test_an_answer_is_as_sure_as_the_least_sure_thing_it_rests_on():
    """Inferred is weaker than a third party's page, which is weaker than documented; no source: blank."""
    from providers import kubernetes as k8s
    from providers.kubernetes import Cell, answer_confidence

    documented, third, inferred = (Cell("yes", "https://example.org/a", confidence) for confidence in
                                   ("documented", "third_party", "inferred"))
    cells = {**{key: Cell(value, "https://example.org/doc", "documented") for key, value in MANAGED.items()},
             "mig": third}
    machine = {"instance_type": "h.8", "gpu_count": Decimal(8), "gpu": k8s.Gpu("H100", "nvidia", ("1g.10gb",)),
               "facts": {"managed_node": Fact("h.8", "managed_node", "yes", source_url="https://example.org/n",
                                              confidence="documented")}}
    assert k8s.derive(provider_name="P", cells=cells, **machine)["mig"].confidence == "third_party"
    node = Fact("h.8", "managed_node", "yes", source_url="https://example.org/n", confidence="inferred")
    mixed = k8s.derive(provider_name="P", cells=cells, **{**machine, "facts": {"managed_node": node}})
    assert mixed["mig"].confidence == "inferred" and mixed["mig"].inferred
    assert k8s.derive(provider_name="P", cells={**cells, "mig": documented}, **machine)["mig"].confidence == ""
    assert (answer_confidence("", ["https://example.org/a"]), answer_confidence("", []),
            answer_confidence("third_party", ["u"])) == ("documented", "", "third_party")
    cells_inferred = {**cells, "mig": inferred}
    assert k8s.derive(provider_name="P", cells=cells_inferred, **machine)["mig"].confidence == "inferred"


@pytest.mark.parametrize(("data", "message"), [
    ({"types": []}, "'provider' is required"),
    ({"provider": "x", "types": [{"managed_node": {"value": "yes"}}]}, "needs 'match'"),
    ({"provider": "x", "types": [{"match": ["a"], "managed_node": {"value": "yes"}}]}, "has no source_url"),
    ({"provider": "x", "types": [{"match": ["a"], "managed_node": {
        "value": "yes", "source_url": "https://e.org/", "confidence": "documented"}}]}, "has no verified_on"),
    ({"provider": "x", "types": [{"match": ["a"], "managed_node": {
        "value": "maybe", "source_url": "https://e.org/"}}]}, "must be one of"),
    ({"provider": "x", "types": [{"match": ["a"], "fabric": {
        "value": "infiniband", "gpudirect_rdma": True, "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, r"types\[0\] fabric: only fabric = 'efa' takes gpudirect_rdma"),
    ({"provider": "x", "types": [{"match": ["a"], "fabric": {
        "value": "efa", "interfaces": 32, "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, r"types\[0\] fabric = 'efa' needs gpudirect_rdma"),
    ({"provider": "x", "types": [{"match": ["a"], "fabric": {
        "value": "efa", "gpudirect_rdma": "yes", "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, "gpudirect_rdma must be true or false"),
    ({"provider": "x", "types": [{"match": ["a"], "fabric": {
        "value": "roce", "interfaces": 0, "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, "interfaces must be a positive whole number"),
    ({"provider": "x", "types": [{"match": ["a"], "fabric": {
        "value": "roce", "bandwidth_gbps": "3200", "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, "bandwidth_gbps must be a positive number"),
    ({"provider": "x", "types": [{"match": ["a"], "form_factor": {
        "value": "sxm", "interfaces": 8, "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, r"types\[0\] form_factor: only a fabric fact takes interfaces"),
    ({"provider": "x", "types": [{"match": ["a"], "gpu_link": {
        "value": "infinity", "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, r"types\[0\] gpu_link value 'infinity' must be one of"),
    ({"provider": "x", "types": [{"match": ["a"], "gpu_link": {
        "value": "nvswitch", "number": 8, "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, "only a numeric fact"),
    ({"provider": "x", "types": [{"match": ["a"], "gpu_memory_gb": {
        "source_url": "https://e.org/", "verified_on": date(2026, 1, 1), "confidence": "documented"}}]},
     r"types\[0\] gpu_memory_gb needs a number"),
    ({"provider": "x", "types": [{"match": ["a"], "gpu_memory_gb": {
        "number": 80, "value": 94, "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, "two different numbers"),
    ({"provider": "x", "types": [{"match": ["a"], "gpu_memory_gb": {"number": 80}}]}, "has no source_url"),
    ({"provider": "x", "types": [{"match": ["a"], "gpu_share": {
        "value": 2, "source_url": "https://e.org/", "verified_on": date(2026, 1, 1),
        "confidence": "documented"}}]}, "out of range"),
    ({"provider": "x", "types": [{"match": ["a"], "nvlink": {"value": "yes"}}]}, "unknown facts"),
    ({"provider": "x", "origin": "guess", "types": []}, "origin 'guess'"),
])
def test_instance_type_files_are_as_strict_as_capability_cells(data, message):
    with pytest.raises(CuratedDataError, match=message):
        parse_instance_types(data, origin="x.toml", today=date(2026, 12, 1))


def test_an_unknown_fact_needs_no_source():
    parsed = parse_instance_types({"provider": "x", "types": [{"match": ["a*"], "fabric": {"value": "unknown"}}]},
                                  origin="x.toml")
    assert parsed.facts[0].value == "unknown" and parsed.facts[0].source_url == ""


SOURCED = {"source_url": "https://e.org/spec", "verified_on": date(2026, 12, 1), "confidence": "documented"}


def test_the_new_fabric_fields_gpu_link_and_gpu_memory_load_and_are_stored(gpus):
    """SCHEMA.md's facts round-trip: file -> parse_instance_types -> instance_types_sync -> InstanceTypeFact."""
    from providers.models import InstanceTypeFact

    parsed = parse_instance_types({"provider": "fab", "types": [
        {"match": ["p.48"], "fabric": {"value": "efa", "interfaces": 32, "bandwidth_gbps": 3200,
                                       "gpudirect_rdma": True, **SOURCED},
         "gpu_link": {"value": "nvswitch", **SOURCED}, "gpu_memory_gb": {"number": 80, **SOURCED}},
        {"match": ["bm.*"], "fabric": {"value": "infiniband_or_roce", "interfaces": 8, "bandwidth_gbps": 400.5,
                                       **SOURCED},
         "gpu_memory_gb": {"value": 141, **SOURCED}},
    ]}, origin="fab.toml", today=date(2026, 12, 4))
    ProviderFactory(slug="fab")
    facts_sync.instance_types_sync(files=[parsed])
    stored = {(row.pattern, row.key): row for row in InstanceTypeFact.objects.filter(provider__slug="fab")}
    efa = stored["p.48", "fabric"]
    assert (efa.value, efa.interfaces, efa.bandwidth_gbps, efa.gpudirect_rdma, efa.number) == (
        "efa", 32, Decimal(3200), True, None)
    either = stored["bm.*", "fabric"]
    assert (either.value, either.interfaces, either.bandwidth_gbps, either.gpudirect_rdma) == (
        "infiniband_or_roce", 8, Decimal("400.5"), None)
    assert stored["p.48", "gpu_link"].value == "nvswitch"
    assert (stored["p.48", "gpu_memory_gb"].number, stored["bm.*", "gpu_memory_gb"].value) == (80, "141")


def test_a_catalog_file_may_leave_efa_gpudirect_rdma_unstated():
    """Karpenter's table states the EFA count but not GPUDirect RDMA: a catalog file may omit it, a curated one not."""
    entry = {"match": ["g6.8xlarge"], "fabric": {"value": "efa", "interfaces": 1, **SOURCED}}
    parsed = parse_instance_types({"provider": "x", "origin": "catalog", "types": [entry]}, origin="x.toml",
                                  today=date(2026, 12, 4))
    assert (parsed.facts[0].interfaces, parsed.facts[0].gpudirect_rdma) == (1, None)
    with pytest.raises(CuratedDataError, match="needs gpudirect_rdma"):
        parse_instance_types({"provider": "x", "types": [entry]}, origin="x.toml", today=date(2026, 12, 4))


def test_an_admin_edit_of_a_provider_cell_recomputes_the_answers(gpus, admin_client):
    answers = machine("m", MANAGED, "h.8", gpus["h100"], facts={"h.*": {"managed_node": "yes"}})
    assert answers["spot_nodes"].state == "yes"
    cell = Capability.objects.get(provider__slug="m", key="spot_nodes")
    response = admin_client.post(f"/admin/providers/capability/{cell.pk}/change/", {
        "provider": cell.provider_id, "key": "spot_nodes", "value": "no", "label": "", "detail": "",
        "label_zh": "", "detail_zh": "", "amount": "", "currency": "", "source_url": cell.source_url,
        "verified_on": "2026-01-02", "confidence": "documented", "origin": "curated",
        "fetched_at_0": "", "fetched_at_1": "",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    item = Offer.objects.get(provider__slug="m")
    assert selectors.offer_kubernetes_answers(offer_ids=[item.id])[item.id]["spot_nodes"].state == "no"


def test_the_shipped_instance_type_files_load_and_answer_the_issues_examples():
    from providers import kubernetes as k8s
    from providers.curated import load_instance_types

    facts = {}  # a provider may have several files (aws: the Karpenter catalog and the curated EKS facts)
    for file in load_instance_types():
        facts.setdefault(file.provider, []).extend(
            k8s.Fact(pattern=f.pattern, key=f.key, value=f.value, number=f.number, source_url=f.source_url,
                     confidence=f.confidence, origin=file.origin, interfaces=f.interfaces,
                     gpudirect_rdma=f.gpudirect_rdma) for f in file.facts)
    p5 = k8s.facts_for("p5.48xlarge", facts["aws"])["fabric"]
    assert (p5.value, p5.interfaces, p5.gpudirect_rdma, p5.origin) == ("efa", 32, True, "catalog")
    g7 = k8s.facts_for("g7.8xlarge", facts["aws"])["fabric"]  # EFA whose GPUDirect RDMA no source states
    assert (g7.value, g7.interfaces, g7.gpudirect_rdma, g7.origin) == ("efa", 1, None, "catalog")
    g7 = k8s.facts_for("g7.48xlarge", facts["aws"])["fabric"]  # AWS's G7 launch post, over Karpenter's catalog
    assert (g7.value, g7.interfaces, g7.gpudirect_rdma, g7.origin) == ("efa", 2, True, "curated")
    # AWS's plugin maintainer: "the G6e hardware does not support GPUDirect RDMA" (aws/aws-ofi-nccl issue 547)
    g6e = k8s.facts_for("g6e.48xlarge", facts["aws"])["fabric"]
    assert (g6e.value, g6e.interfaces, g6e.gpudirect_rdma, g6e.origin) == ("efa", 4, False, "curated")
    assert g6e.source_url == "https://github.com/aws/aws-ofi-nccl/issues/547"
    assert k8s.facts_for("g6f.large", facts["aws"])["gpu_share"].number == Decimal("0.125")
    assert k8s.facts_for("a3-megagpu-8g", facts["gcp"])["fabric"].value == "gpudirect_tcpxo"
    assert k8s.facts_for("a3-highgpu-8g", facts["gcp"])["fabric"].value == "gpudirect_tcpx"
    small_a3 = k8s.facts_for("a3-highgpu-1g", facts["gcp"])["fabric"]  # TCPX only on the 8-GPU A3 High and Edge
    assert (small_a3.value, small_a3.confidence) == ("none", "inferred")
    assert k8s.facts_for("a2-highgpu-8g", facts["gcp"])["fabric"].value == "none"  # Google's table: "N/A"
    assert k8s.facts_for("Standard_NV4as_v4", facts["azure"])["managed_node"].value == "no"
    assert k8s.facts_for("Standard_ND96isr_H100_v5", facts["azure"])["fabric"].value == "infiniband"
    assert "fabric" not in k8s.facts_for("Standard_NC24rs_v3", facts["azure"])  # "low latency" is not a fabric
    assert k8s.facts_for("gpu_8x_h100_sxm5", facts["lambda"])["managed_node"].value == "no"
    # EKS's accelerated-AMI page lists the families p5, p4d, g6, g6e, g5g, ... (not g4ad): a curated fact beats none
    eks_ami = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html"
    for instance_type in ("p5.48xlarge", "p5.4xlarge", "p4d.24xlarge", "g6.xlarge", "g6e.48xlarge", "g5g.metal"):
        node = k8s.facts_for(instance_type, facts["aws"])["managed_node"]
        assert (node.value, node.source_url, node.origin) == ("yes", eks_ami, "curated"), instance_type
    # missing from the page's complete table of supported GPU types: "no", from that page
    assert k8s.facts_for("g4ad.xlarge", facts["aws"])["managed_node"].value == "no"
    # Azure's size pages: "Nvidia PCIe A100 GPU (80GB)" (NC_A100_v4), "Nvidia A100 GPU (40GB)" (NDasrA100_v4)
    nc_a100 = k8s.facts_for("Standard_NC24ads_A100_v4", facts["azure"])
    assert (nc_a100["form_factor"].value, nc_a100["gpu_memory_gb"].number) == ("pcie", 80)
    assert k8s.facts_for("Standard_ND96asr_v4", facts["azure"])["gpu_memory_gb"].number == 40


def test_an_answer_resting_on_an_inferred_fact_is_marked_on_the_offer_page_and_in_the_rows_list(gpus, client):
    """The offer's page and the list an offers-table row fetches mark such an answer with the matrix's "~"
    (inferred), and only such answers."""
    import re

    item = offer_on_an_inferred_managed_node(gpus)
    profile = Offer.objects.get(pk=item.pk).kubernetes_profile
    for url in (f"/offers/{item.pk}/", f"/offers/kubernetes/{profile.pk}/"):
        html = client.get(url).content.decode()
        marked = re.findall(r'<li><strong>([^<]+)</strong><abbr title="inferred">~</abbr>', html)
        assert "managed control plane: yes" in marked, url
        assert len(marked) == len(profile.inferred) and not any(text.startswith("Vendor") for text in marked), url
