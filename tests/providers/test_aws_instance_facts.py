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
    g6_48 = fact(aws, "g6.48xlarge", "fabric")
    assert (g6_48.value, g6_48.gpudirect_rdma) == ("efa", None)
    assert fabric_class(aws, "g6.48xlarge") == k8s.UNKNOWN


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
