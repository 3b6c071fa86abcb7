"""The shipped instance-type facts agree with the sources they cite (recorded excerpts in tests/providers/sources/,
see its README), so a fact that drifts from its source fails here."""
import re
from fnmatch import fnmatch
from pathlib import Path

import pytest

from providers.curated import load_instance_types

SOURCES = Path(__file__).parent / "sources"
OFI_NCCL = "https://github.com/aws/aws-ofi-nccl/blob/45197dfad429db8e9fbc2da408d7c906c76dda2d/src/platform-aws.cpp"
EKS_AMI = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html"


def _facts(provider, key, origin=None):
    return {fact.pattern: fact for file in load_instance_types() if file.provider == provider
            and (origin is None or file.origin == origin) for fact in file.facts if fact.key == key}


def _gdr_required(instance_type):
    """aws-ofi-nccl's platform table: the first entry whose name (regex NULL) or POSIX regex matches wins."""
    text = (SOURCES / "aws-ofi-nccl_platform-aws.cpp.excerpt").read_text()
    for name, regex, gdr in re.findall(r'\.name = "([^"]+)",\s*\.regex = (NULL|"[^"]*"),\s*\.gdr_required = (\w+)',
                                       text):
        if regex == "NULL" and name == instance_type:
            return gdr == "true"
        if regex != "NULL" and re.search(regex[1:-1].replace("\\\\", "\\"), instance_type):
            return gdr == "true"
    return None


def _eks_ami_families():
    rows = [line for line in (SOURCES / "eks_ml-eks-optimized-ami.md.excerpt").read_text().splitlines()
            if "NVIDIA" in line or "nvidia" in line]
    return {family.strip().lower() for row in rows for family in row.split("|")[2].split(",")}


def test_every_efa_gpudirect_rdma_fact_citing_the_nccl_plugin_follows_its_platform_table():
    cited = {pattern: fact for pattern, fact in _facts("aws", "fabric").items() if fact.source_url == OFI_NCCL}
    assert cited, "no fabric fact cites the aws-ofi-nccl platform table"
    for pattern, fact in cited.items():
        assert fact.value == "efa"
        assert fact.gpudirect_rdma == _gdr_required(pattern), pattern


def test_the_curated_efa_interface_counts_match_karpenters_table_in_the_catalog_file():
    catalog = _facts("aws", "fabric", origin="catalog")
    for pattern, fact in _facts("aws", "fabric", origin="curated").items():
        assert fact.interfaces == catalog[pattern].interfaces, pattern


@pytest.mark.parametrize("instance_type, gdr, interfaces", [
    ("p5.48xlarge", True, 32), ("p5en.48xlarge", True, 16), ("p4d.24xlarge", True, 4),
    ("p6-b200.48xlarge", True, 8), ("g5.48xlarge", False, 1), ("p3dn.24xlarge", False, 1)])
def test_the_issues_efa_examples(instance_type, gdr, interfaces):
    fact = _facts("aws", "fabric", origin="curated").get(instance_type) or _facts("aws", "fabric")[instance_type]
    assert _gdr_required(instance_type) is gdr  # the recorded source says so
    assert (fact.value, fact.gpudirect_rdma, fact.interfaces) == ("efa", gdr, interfaces)


def test_the_one_gpu_p5_is_not_called_gpudirect_rdma_from_a_tuning_pattern():
    assert _gdr_required("p5.4xlarge") is True  # the plugin's p5 regex covers it ...
    one_gpu = _facts("aws", "fabric").get("p5.4xlarge")  # ... but no source says it for one GPU
    assert one_gpu is None or one_gpu.gpudirect_rdma is None


def test_an_eks_node_family_is_yes_exactly_when_the_eks_accelerated_ami_table_lists_it():
    """The table is the complete list of GPU instance types EKS's accelerated AMIs support: a family in it is "yes",
    a GPU family of the snapshot missing from it (g4ad, g7) "no", from the same page."""
    families = _eks_ami_families()
    facts = _facts("aws", "managed_node")
    cited = {pattern: fact for pattern, fact in facts.items() if fact.source_url == EKS_AMI}
    assert cited
    for pattern, fact in cited.items():
        names = [name.strip() for name in pattern.split(",")]
        assert all(name.endswith(".*") for name in names), pattern
        assert fact.value == ("yes" if pattern[:-2] in families else "no"), pattern
    for missing in ("g4ad.xlarge", "g7.2xlarge"):
        assert missing.split(".")[0] not in families
        matching = [fact for pattern, fact in facts.items() if fnmatch(missing, pattern)]
        assert [fact.value for fact in matching] == ["no"], missing


def test_a_size_azure_lists_as_retired_is_no_aks_node_and_the_current_sizes_stay_yes():
    from providers import kubernetes as k8s

    text = (SOURCES / "azure_retired-sizes-list.md.excerpt").read_text()
    assert re.search(r"\| NCv3-Series\s*\| \*\*Retired\*\*", text) and "can't be provisioned" in text
    facts = [k8s.Fact(pattern=pattern, key="managed_node", value=fact.value, source_url=fact.source_url)
             for pattern, fact in _facts("azure", "managed_node").items()]
    for size in ("Standard_NC6s_v3", "Standard_NC24rs_v3", "Standard_NC24s_v3"):  # NCv3 and NCv3-NC24rs
        assert k8s.facts_for(size, facts)["managed_node"].value == "no", size
    for size in ("Standard_NC24ads_A100_v4", "Standard_ND96isr_H100_v5", "Standard_NC4as_T4_v3"):
        assert k8s.facts_for(size, facts)["managed_node"].value == "yes", size
    # K80 NC: Microsoft's NC-series retirement page (retired 2023-09-06) says it, not the retired-sizes list
    k80 = k8s.facts_for("Standard_NC24r", facts)["managed_node"]
    assert k80.value == "no" and "nc-series-retirement" in k80.source_url


def test_the_gke_node_types_from_the_cluster_toolkit_are_exactly_its_node_pool_table():
    table = set(re.findall(r'"([a-z0-9-]+)"\s*=\s*\{ type',
                           (SOURCES / "cluster-toolkit_gpu_definition.tf.excerpt").read_text()))
    toolkit = "https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/19416ae51b581e4730946a926910cc149293bbd6/"
    cited = {pattern for pattern, fact in _facts("gcp", "managed_node").items()
             if fact.source_url.startswith(toolkit + "modules/compute/gke-node-pool/")}
    assert "a2-ultragpu-8g" in cited and "g2-standard-96" in cited
    assert cited == table - {"a3-highgpu-8g"}  # a3-highgpu-8g has its own GKE page (the NCCL test page)
    assert not any(fnmatch("a3-highgpu-1g", pattern) for pattern in _facts("gcp", "managed_node"))  # not in it
