"""The shipped machine-type facts for OCI, CoreWeave, Nebius and Lambda (issue #36): a regression in a sourced fact
fails here. Each assertion names the fact a buyer filters on."""

from decimal import Decimal

import pytest

from providers import kubernetes as k8s
from providers.curated import load_instance_types


@pytest.fixture(scope="module")
def facts():
    return {file.provider: [k8s.Fact(pattern=f.pattern, key=f.key, value=f.value, number=f.number, detail=f.detail,
                                     source_url=f.source_url, confidence=f.confidence, origin=file.origin,
                                     interfaces=f.interfaces, bandwidth_gbps=f.bandwidth_gbps)
                            for f in file.facts] for file in load_instance_types()}


def fact(facts, provider, instance_type, key):
    return k8s.facts_for(instance_type, facts[provider]).get(key)


@pytest.mark.parametrize("shape", ["BM.GPU.H100.8", "BM.GPU.H200.8", "BM.GPU.A100-v2.8", "BM.GPU4.8",
                                   "BM.GPU.MI300X.8"])
def test_oci_cluster_network_shapes_have_a_roce_fabric_from_the_compute_shapes_page(facts, shape):
    fabric = fact(facts, "oci", shape, "fabric")
    assert (fabric.value, fabric.confidence) == ("roce", "inferred")
    assert fabric.source_url == "https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm"


def test_oci_shapes_without_rdma_listed_have_no_fabric(facts):
    for shape in ("BM.GPU.A10.4", "BM.GPU3.8", "VM.GPU3.4", "VM.GPU.A10.1"):
        assert fact(facts, "oci", shape, "fabric").value == "none", shape


def test_oci_h100_fabric_carries_the_shapes_pages_nic_count_and_bandwidth(facts):
    h100 = fact(facts, "oci", "BM.GPU.H100.8", "fabric")
    assert (h100.interfaces, h100.bandwidth_gbps) == (16, Decimal("3200"))
    assert fact(facts, "oci", "BM.GPU.H200.8", "fabric").interfaces == 8
    assert fact(facts, "oci", "BM.GPU.H100.8", "gpu_memory_gb").number == 80
    assert fact(facts, "oci", "BM.GPU4.8", "gpu_memory_gb").number == 40


def test_oci_grace_blackwell_shapes_say_the_protocol_depends_on_the_cluster(facts):
    assert fact(facts, "oci", "BM.GPU.GB200.4", "fabric").value == "infiniband_or_roce"
    for shape in ("BM.GPU.GB200.4", "BM.GPU.GB300.4"):
        assert fact(facts, "oci", shape, "gpu_link").value == "nvlink", shape
        assert fact(facts, "oci", shape, "form_factor").value == "nvl", shape


def test_every_oci_gpu_shape_is_an_oke_node_and_no_answer_is_kept_for_a_per_gpu_price_row(facts):
    for name in ("BM.GPU.H100.8", "VM.GPU.A10.1", "BM.GPU.GB200.4", "BM.GPU3.8"):
        assert fact(facts, "oci", name, "managed_node").value == "yes", name
    # The price list's per-GPU parts are stored as the shapes they price (scrapers/oci.py): no pattern answers for a
    # part's name, so a part name stored by mistake would get no borrowed answer.
    for row in ("Oracle Cloud Infrastructure - Compute - GPU - H100", "OCI - Compute - GPU - H200",
                "Compute - GPU - A10"):
        assert fact(facts, "oci", row, "managed_node") is None, row


def test_coreweave_8x_h100_is_an_infiniband_cks_node(facts):
    h100 = "NVIDIA HGX H100 x8"
    assert fact(facts, "coreweave", h100, "fabric").value == "infiniband"
    node = fact(facts, "coreweave", h100, "managed_node")
    assert (node.value, node.confidence) == ("yes", "documented")
    assert fact(facts, "coreweave", h100, "gpu_memory_gb").number == 80
    assert fact(facts, "coreweave", "NVIDIA GB200 NVL72 x4", "fabric").value == "infiniband_or_roce"
    assert fact(facts, "coreweave", "NVIDIA GB200 NVL72 x4", "gpu_link").value == "nvswitch"
    h200 = fact(facts, "coreweave", "NVIDIA HGX H200 x8", "fabric")
    assert (h200.value, h200.confidence) == ("infiniband", "documented")


def test_coreweave_types_the_docs_index_titles_without_a_fabric_have_none_and_new_types_stay_unknown(facts):
    for name in ("NVIDIA L40S x8", "NVIDIA RTX PRO 6000 Blackwell Server Edition x8", "NVIDIA GH200 x1"):
        none = fact(facts, "coreweave", name, "fabric")
        assert (none.value, none.confidence) == ("none", "inferred"), name
    assert fact(facts, "coreweave", "NVIDIA GB300 NVL72 x4", "fabric").value == "unknown"
    assert fact(facts, "coreweave", "NVIDIA L40 x8", "managed_node").value == "yes"
    b300 = fact(facts, "coreweave", "NVIDIA HGX B300 x8", "fabric")
    assert (b300.value, b300.confidence) == ("infiniband", "documented")


def test_coreweave_a100_fabric_is_unknown_because_its_current_and_older_pages_disagree(facts):
    # the current guide: InfiniBand "for some GPU instance types", and the region pages list a plain "A100" next to
    # "H100 (InfiniBand)"; an older pre-CKS page said every A100 NVLINK GPU had it. A "yes" here sent buyers to a
    # machine whose fabric no current page states.
    a100 = fact(facts, "coreweave", "NVIDIA A100 x8", "fabric")
    assert a100.value == "unknown"
    assert "/products/networking/hpc-interconnect/" in a100.source_url
    assert "All CoreWeave A100 NVLINK GPUs" in a100.detail and "for some GPU instance types" in a100.detail


def test_nebius_8_gpu_presets_are_infiniband_and_smaller_ones_are_not(facts):
    for preset in ("gpu-h100-sxm_8gpu-128vcpu-1600gb", "gpu-h200-sxm_8gpu-128vcpu-1600gb",
                   "gpu-b200-sxm_8gpu-160vcpu-1792gb"):
        assert fact(facts, "nebius", preset, "fabric").value == "infiniband", preset
        assert fact(facts, "nebius", preset, "managed_node").value == "yes", preset
    for preset in ("gpu-h100-sxm_1gpu-16vcpu-200gb", "gpu-l40s-d_4gpu-128vcpu-768gb"):
        assert fact(facts, "nebius", preset, "fabric").value == "none", preset


def test_lambda_on_demand_instances_are_not_nodes_of_its_managed_kubernetes_and_have_no_infiniband(facts):
    for name in ("gpu_8x_h100_sxm5", "gpu_1x_a10", "gpu_8x_b200_sxm6"):
        assert fact(facts, "lambda", name, "managed_node").value == "no", name
        assert fact(facts, "lambda", name, "fabric").value == "none", name
    assert fact(facts, "lambda", "gpu_8x_h100_sxm5", "fabric").confidence == "documented"
    assert fact(facts, "lambda", "gpu_8x_b200_sxm6", "fabric").confidence == "inferred"


def test_lambda_on_demand_instances_run_a_cluster_of_your_own_per_lambdas_k3s_tutorial(facts):
    """They were unknown to `offering=byo`, which kept AWS, Azure and OCI machines and lost every Lambda one."""
    for name in ("gpu_1x_a10", "gpu_8x_h100_sxm5", "gpu_1x_gh200"):
        byo = fact(facts, "lambda", name, "byo")
        assert (byo.value, byo.confidence) == ("yes", "documented"), name
        assert byo.source_url.startswith("https://docs.lambda.ai/") and "K3s" in byo.detail


def test_newer_oci_shapes_take_their_rdma_nics_from_oracles_oke_quickstart_not_the_broad_none(facts):
    """BM.GPU* says none; the B200/B300/RTX PRO shapes' own facts win (exact name beats pattern)."""
    for shape in ("BM.GPU.B200.8", "BM.GPU.B300.8", "BM.GPU.RTXPRO.8"):
        fabric = fact(facts, "oci", shape, "fabric")
        assert fabric.value == "roce" and "oci-hpc-oke" in fabric.source_url, shape
    node = fact(facts, "oci", "BM.GPU.B200.8", "managed_node")
    assert (node.value, node.confidence) == ("yes", "documented")
    assert fact(facts, "oci", "VM.GPU2.1", "managed_node").confidence == "inferred"


def test_oci_h100_and_h200_form_factor_is_sxm_from_a_third_party(facts):
    for shape in ("BM.GPU.H100.8", "BM.GPU.H200.8"):
        form = fact(facts, "oci", shape, "form_factor")
        assert (form.value, form.confidence) == ("sxm", "third_party"), shape


def test_lambda_a100_form_factor_follows_lambdas_instance_table(facts):
    assert fact(facts, "lambda", "gpu_8x_a100", "form_factor").value == "sxm"
    for name in ("gpu_4x_a100", "gpu_2x_a100", "gpu_1x_a100"):
        assert fact(facts, "lambda", name, "form_factor").value == "pcie", name
    assert fact(facts, "lambda", "gpu_1x_a100", "form_factor").confidence == "inferred"
    assert fact(facts, "lambda", "gpu_8x_a100", "gpu_memory_gb").number == 40
    assert fact(facts, "lambda", "gpu_8x_a100_80gb_sxm4", "gpu_memory_gb").number == 80
