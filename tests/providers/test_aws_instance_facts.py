"""The shipped AWS machine-type facts (issue #36, providers/data/instance_types/aws.toml): a regression in a sourced
fact fails here. Each assertion names the fact a buyer filters on."""

from decimal import Decimal

import pytest

from providers import kubernetes as k8s
from providers.curated import load_instance_types

EFA_GDR = ("p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge",
           "p6-b300.48xlarge")


@pytest.fixture(scope="module")
def aws():
    """Every AWS file's facts (aws.toml, the Karpenter catalog; aws_eks.toml, curated from EKS's pages), as the
    answers see them: the winning fact per key (k8s.facts_for)."""
    return [k8s.Fact(pattern=f.pattern, key=f.key, value=f.value, number=f.number, source_url=f.source_url,
                     confidence=f.confidence, origin=file.origin, interfaces=f.interfaces,
                     bandwidth_gbps=f.bandwidth_gbps, gpudirect_rdma=f.gpudirect_rdma)
            for file in load_instance_types() if file.provider == "aws" for f in file.facts]


def fact(facts, instance_type, key):
    return k8s.facts_for(instance_type, facts).get(key)


def fabric_class(facts, instance_type):
    fabric = fact(facts, instance_type, "fabric")
    return k8s.fabric_class(fabric.value if fabric else None, fabric.gpudirect_rdma if fabric else None)


def test_p5_48xlarge_is_an_eks_node_with_32_efa_interfaces_and_gpudirect_rdma(aws):
    assert fact(aws, "p5.48xlarge", "managed_node").value == "yes"
    fabric = fact(aws, "p5.48xlarge", "fabric")
    assert (fabric.value, fabric.interfaces, fabric.bandwidth_gbps, fabric.gpudirect_rdma) == (
        "efa", 32, Decimal("3200"), True)
    assert fabric_class(aws, "p5.48xlarge") == k8s.RDMA_CLASS


def test_p4d_has_efa_with_gpudirect_rdma_and_nvswitch_from_the_ec2_user_guide(aws):
    fabric = fact(aws, "p4d.24xlarge", "fabric")
    assert (fabric.value, fabric.interfaces, fabric.gpudirect_rdma) == ("efa", 4, True)
    link = fact(aws, "p4d.24xlarge", "gpu_link")
    assert (link.value, link.confidence) == ("nvswitch", "documented")
    assert "awsdocs/amazon-ec2-user-guide" in link.source_url


@pytest.mark.parametrize("instance_type", EFA_GDR)
def test_the_p_types_awss_nccl_plugin_runs_with_gpudirect_rdma_are_in_the_rdma_class(aws, instance_type):
    assert fabric_class(aws, instance_type) == k8s.RDMA_CLASS


def test_g6_xlarge_has_no_gpudirect_rdma_and_an_efa_type_without_a_sourced_answer_stays_unknown(aws):
    assert fact(aws, "g6.xlarge", "fabric").value == "none"
    assert fabric_class(aws, "g6.xlarge") == k8s.PLAIN_CLASS
    # AWS's plugin maintainer (aws/aws-ofi-nccl issue 547): G6e lacks GPUDirect RDMA; only the P-series from p4d has it
    g6_48 = fact(aws, "g6.48xlarge", "fabric")
    assert (g6_48.value, g6_48.gpudirect_rdma, g6_48.confidence) == ("efa", False, "documented")
    assert fabric_class(aws, "g6.48xlarge") not in (k8s.UNKNOWN, k8s.RDMA_CLASS)
    g7_8 = fact(aws, "g7.8xlarge", "fabric")  # EFA on one GPU; no AWS source read says whether it has GPUDirect RDMA
    assert (g7_8.value, g7_8.gpudirect_rdma) == ("efa", None)
    assert fabric_class(aws, "g7.8xlarge") == k8s.UNKNOWN


@pytest.mark.parametrize("instance_type", ["g4dn.xlarge", "g5.48xlarge", "g6.xlarge", "g6e.12xlarge", "g6f.large",
                                           "gr6.4xlarge", "g7e.8xlarge", "p3dn.24xlarge", "p5en.48xlarge",
                                           "p6-b300.48xlarge"])
def test_every_family_in_eks_accelerated_ami_table_is_an_eks_node(aws, instance_type):
    """From EKS's own page (aws_eks.toml), not from Karpenter's reference: Karpenter can launch a type whose GPU
    EKS's accelerated AMIs do not drive."""
    node = fact(aws, instance_type, "managed_node")
    assert (node.value, node.confidence) == ("yes", "documented")
    assert "docs.aws.amazon.com/eks" in node.source_url


def test_a_type_eks_does_not_list_is_not_called_an_eks_node(aws):
    # g4ad (AMD Radeon Pro V520) is in Karpenter's reference but not in EKS's complete table of GPU types its
    # accelerated AMIs support: "no", from that page, never "yes" from Karpenter's list of launchable types
    node = fact(aws, "g4ad.xlarge", "managed_node")
    assert (node.value, node.confidence) == ("no", "documented") and "docs.aws.amazon.com/eks" in node.source_url
    assert fact(aws, "trn1.32xlarge", "managed_node") is None  # not a GPU type of this file


def test_g4dn_gpu_memory_is_the_ec2_user_guides_16_gib_and_other_families_stay_unstated(aws):
    for name in ("g4dn.xlarge", "g4dn.metal"):
        assert fact(aws, name, "gpu_memory_gb").number == 16, name
    assert fact(aws, "g4ad.xlarge", "gpu_memory_gb") is None


@pytest.mark.parametrize("instance_type", ["g4dn.12xlarge", "g4dn.metal", "g5.12xlarge", "g5.24xlarge"])
def test_efa_types_ec2s_efa_page_does_not_list_for_gpudirect_rdma_are_plain_network(aws, instance_type):
    # The 2023 EFA page lists them as EFA types and names only p4d for GPUDirect RDMA: EFA, plain-network class
    fabric = fact(aws, instance_type, "fabric")
    assert (fabric.value, fabric.gpudirect_rdma, fabric.confidence) == ("efa", False, "inferred")
    assert "awsdocs/amazon-ec2-user-guide" in fabric.source_url and fabric.source_url.endswith("/efa.md")
    assert fabric_class(aws, instance_type) == k8s.PLAIN_CLASS


def test_g7e_multi_gpu_sizes_do_gpudirect_rdma_and_the_one_gpu_sizes_do_not(aws):
    for name, interfaces in (("g7e.12xlarge", 1), ("g7e.24xlarge", 2), ("g7e.48xlarge", 4)):
        fabric = fact(aws, name, "fabric")
        assert (fabric.value, fabric.interfaces, fabric.gpudirect_rdma) == ("efa", interfaces, True), name
        assert fabric_class(aws, name) == k8s.RDMA_CLASS
    for name in ("g7e.8xlarge", "p5.4xlarge"):
        assert fabric_class(aws, name) == k8s.PLAIN_CLASS, name


def test_g7_multi_gpu_sizes_do_gpudirect_rdma_per_awss_launch_post_with_karpenters_interface_counts(aws):
    for name, interfaces, gbps in (("g7.12xlarge", 1, 175), ("g7.24xlarge", 1, 350), ("g7.48xlarge", 2, 700)):
        fabric = fact(aws, name, "fabric")
        assert (fabric.value, fabric.interfaces, fabric.bandwidth_gbps, fabric.gpudirect_rdma) == (
            "efa", interfaces, gbps, True), name
        assert fabric.source_url.startswith("https://aws.amazon.com/blogs/aws/announcing-amazon-ec2-g7-instances")
        assert fabric_class(aws, name) == k8s.RDMA_CLASS


def test_a100_h100_and_h200_types_are_sxm_from_aws_statements_of_nvswitch_in_their_hosts(aws):
    for name in ("p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5.4xlarge", "p5en.48xlarge"):
        form = fact(aws, name, "form_factor")
        assert (form.value, form.confidence) == ("sxm", "inferred"), name
    assert "aws-parallelcluster-cookbook" in fact(aws, "p5.48xlarge", "form_factor").source_url
    assert "awsome-distributed-training" in fact(aws, "p5en.48xlarge", "form_factor").source_url
    assert fact(aws, "g6e.48xlarge", "form_factor") is None  # no statement: L40S stays unstated
