"""The shipped Azure VM-size facts (issue #36): a regression in a sourced fact fails here. Each assertion names the
fact a buyer filters on (fabric, form factor, GPU link, memory per GPU, AKS node)."""

from decimal import Decimal

import pytest

from providers import kubernetes as k8s
from providers.curated import load_instance_types, load_providers

SIZE_PAGES = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/"


@pytest.fixture(scope="module")
def facts():
    (azure,) = [file for file in load_instance_types() if file.provider == "azure"]
    return [k8s.Fact(pattern=f.pattern, key=f.key, value=f.value, number=f.number, source_url=f.source_url,
                     confidence=f.confidence, origin=azure.origin, interfaces=f.interfaces,
                     bandwidth_gbps=f.bandwidth_gbps) for f in azure.facts]


def fact(facts, size, key):
    return k8s.facts_for(size, facts).get(key)


def test_nd_h100_v5_is_an_sxm_nvswitch_machine_with_eight_400g_infiniband_links(facts):
    size = "Standard_ND96isr_H100_v5"
    fabric = fact(facts, size, "fabric")
    assert (fabric.value, fabric.interfaces, fabric.bandwidth_gbps) == ("infiniband", 8, Decimal("3200"))
    assert fabric.source_url == SIZE_PAGES + "ndh100v5-series"
    assert k8s.fabric_class(fabric.value) == k8s.RDMA_CLASS
    assert fact(facts, size, "form_factor").value == "sxm"
    assert fact(facts, size, "gpu_link").value == "nvswitch"
    assert fact(facts, size, "gpu_memory_gb").number == 80
    assert fact(facts, size, "managed_node").value == "yes"


@pytest.mark.parametrize("size, memory", [("Standard_ND96asr_v4", 40), ("Standard_ND96amsr_A100_v4", 80)])
def test_nd_a100_v4_sizes_have_eight_200g_hdr_links_and_nvlink(facts, size, memory):
    fabric = fact(facts, size, "fabric")
    assert (fabric.value, fabric.interfaces, fabric.bandwidth_gbps) == ("infiniband", 8, Decimal("1600"))
    assert (fact(facts, size, "gpu_link").value, fact(facts, size, "form_factor").value) == ("nvlink", "sxm")
    assert fact(facts, size, "gpu_memory_gb").number == memory


@pytest.mark.parametrize("size", ["Standard_NC24ads_A100_v4", "Standard_NC96ads_A100_v4"])
def test_nc_a100_v4_is_pcie_without_infiniband(facts, size):
    fabric = fact(facts, size, "fabric")
    assert (fabric.value, fabric.confidence) == ("none", "inferred")
    assert fabric.source_url == SIZE_PAGES + "nca100v4-series"
    assert k8s.fabric_class(fabric.value) == k8s.PLAIN_CLASS
    assert fact(facts, size, "form_factor").value == "pcie"
    assert fact(facts, size, "gpu_memory_gb").number == 80


def test_nc_h100_v5_sizes_are_h100_nvl_with_94_gb(facts):
    for size in ("Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5"):
        assert fact(facts, size, "form_factor").value == "nvl", size
        assert fact(facts, size, "gpu_memory_gb").number == 94, size
        assert fact(facts, size, "fabric").value == "none", size


@pytest.mark.parametrize("size", ["Standard_NV36ads_A10_v5", "Standard_NV36adms_A10_v5", "Standard_NV72ads_A10_v5",
                                  "Standard_NV12s_v3", "Standard_NC64as_T4_v3", "Standard_NC24s_v3"])
def test_nv_and_nc_sizes_without_infiniband_have_no_fabric(facts, size):
    assert fact(facts, size, "fabric").value == "none"


def test_nc24rs_v3_fabric_stays_unknown_where_the_page_does_not_name_it(facts):
    assert fact(facts, "Standard_NC24rs_v3", "fabric") is None  # "low latency network interface" names no fabric
    assert fact(facts, "Standard_NC24s_v3", "fabric").value == "none"


def test_a10_memory_is_only_stated_for_whole_gpu_sizes(facts):
    assert fact(facts, "Standard_NV36adms_A10_v5", "gpu_memory_gb").number == 24
    assert fact(facts, "Standard_NV6ads_A10_v5", "gpu_memory_gb") is None


def test_nvv4_is_not_an_aks_node(facts):
    assert fact(facts, "Standard_NV16as_v4", "managed_node").value == "no"


def test_aks_says_mig_is_set_up_with_mig_node_pools_and_a_gpu_instance_profile():
    (azure,) = [provider for provider in load_providers() if provider.slug == "azure"]
    mig = azure.capabilities["mig"]
    assert (mig.value, mig.confidence) == ("yes", "documented")
    assert mig.source_url == "https://learn.microsoft.com/en-us/azure/aks/gpu-multi-instance"
    assert "gpuInstanceProfile" in mig.detail and "gpuInstanceProfile" in mig.detail_zh


@pytest.mark.parametrize("size", ["Standard_NC6", "Standard_NC24r_Promo", "Standard_NV12", "Standard_NV24_Promo",
                                  "Standard_NC6s_v3", "Standard_NC24rs_v3"])
def test_retired_series_can_be_neither_an_aks_node_nor_your_own_vm(facts, size):
    node, byo = fact(facts, size, "managed_node"), fact(facts, size, "byo")
    assert (node.value, byo.value) == ("no", "no")
    assert node.source_url.startswith("https://learn.microsoft.com/en-us/azure/virtual-machines/")
    assert "retire" in node.source_url


def test_current_sizes_stay_aks_nodes(facts):
    for size in ("Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4", "Standard_NV36ads_A10_v5", "Standard_NV12s_v3"):
        assert fact(facts, size, "managed_node").value == "yes", size


def test_nvv4_shares_follow_the_size_page_and_the_whole_gpu_size_is_not_a_fraction(facts):
    shares = {size: fact(facts, size, "gpu_share") for size in
              ("Standard_NV4as_v4", "Standard_NV8as_v4", "Standard_NV16as_v4", "Standard_NV32as_v4")}
    assert {size: share and share.number for size, share in shares.items()} == {
        "Standard_NV4as_v4": Decimal("0.125"), "Standard_NV8as_v4": Decimal("0.25"),
        "Standard_NV16as_v4": Decimal("0.5"), "Standard_NV32as_v4": None}
    assert fact(facts, "Standard_NV32as_v4", "fabric").value == "none"
