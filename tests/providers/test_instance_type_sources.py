"""The shipped instance-type facts agree with the sources they cite (recorded excerpts in tests/providers/sources/,
see its README), so a fact that drifts from its source fails here."""
import re
from fnmatch import fnmatch
from pathlib import Path

import pytest

from providers.curated import load_instance_types

SOURCES = Path(__file__).parent / "sources"
OFI_NCCL = "https://github.com/aws/aws-ofi-nccl/blob/45197dfad429db8e9fbc2da408d7c906c76dda2d/src/platform-aws.cpp"
# The plugin's table at a later commit (2026-08-12): adds p5.4xlarge (false) and g7e (8xlarge false, 12/24/48 true).
OFI_NCCL_2026 = "https://github.com/aws/aws-ofi-nccl/blob/2daf7d303aa139a03140aa530957d10521e4478d/src/platform-aws.cpp"
EXCERPTS = {OFI_NCCL: "aws-ofi-nccl_platform-aws.cpp.excerpt",
            OFI_NCCL_2026: "aws-ofi-nccl_platform-aws.cpp.2daf7d30.excerpt"}
EKS_AMI = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html"


def _facts(provider, key, origin=None):
    return {fact.pattern: fact for file in load_instance_types() if file.provider == provider
            and (origin is None or file.origin == origin) for fact in file.facts if fact.key == key}


def _gdr_required(instance_type, source=OFI_NCCL):
    """aws-ofi-nccl's platform table: the first entry whose name (regex NULL) or POSIX regex matches wins."""
    text = (SOURCES / EXCERPTS[source]).read_text()
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
    for source in EXCERPTS:
        cited = {pattern: fact for pattern, fact in _facts("aws", "fabric").items() if fact.source_url == source}
        assert cited, f"no fabric fact cites the aws-ofi-nccl platform table at {source}"
        for pattern, fact in cited.items():
            assert fact.value == "efa"
            assert fact.gpudirect_rdma == _gdr_required(pattern, source), pattern


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
    assert _gdr_required("p5.4xlarge") is True  # the plugin's p5 regex covered it at first ...
    assert _gdr_required("p5.4xlarge", OFI_NCCL_2026) is False  # ... its own entry later says no
    one_gpu = _facts("aws", "fabric", origin="curated")["p5.4xlarge"]
    assert (one_gpu.gpudirect_rdma, one_gpu.source_url) == (False, OFI_NCCL_2026)


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
    # not in that table: a3-highgpu-1g/2g/4g cite the toolkit's later GKE orchestrator map instead
    assert not any(fnmatch("a3-highgpu-1g", pattern) for pattern in cited)


def test_the_later_cluster_toolkit_facts_follow_its_machine_map_and_g4_blueprint():
    later = "https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/"
    mapped = set(re.findall(r':\s*"([a-z0-9-]+)",', (SOURCES / "cluster-toolkit_hardware.go.excerpt").read_text()))
    facts = _facts("gcp", "managed_node")
    from_map = [name.strip() for pattern, fact in facts.items() if fact.source_url == later + "pkg/config/hardware.go"
                for name in pattern.split(",") if not name.strip().startswith("tpu-")]
    assert from_map and set(from_map) <= mapped
    assert {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"} <= set(from_map)
    readme = (SOURCES / "cluster-toolkit_gke-g4_README.md.excerpt").read_text()
    assert "G4 node pool" in readme and "required GKE version for G4 support" in readme
    g4 = [pattern for pattern, fact in facts.items() if fact.source_url == later + "examples/gke-g4/README.md"]
    assert g4 and all(name.strip().startswith("g4-standard-") for pattern in g4 for name in pattern.split(","))



def test_seeweb_h200_h100_and_a100_plans_are_sxm_as_seewebs_page_states_and_no_other_plan_is():
    """Seeweb's Cloud Server GPU page gives its H200, H100 and A100 cards as 'GPU SXM'; its L40S, L4, RTX and A30
    plans get no form factor from that page."""
    facts = _facts("seeweb", "form_factor")
    assert facts and all((fact.value, fact.confidence) == ("sxm", "documented") for fact in facts.values())
    assert all("seeweb_cloud_server_gpu.html" in fact.source_url for fact in facts.values())
    plans = ("ECS1GPU10", "ECS4GPU10", "ECS1GPU8", "ECS2GPU3", "ECS1GPU7", "ECS1GPU6", "ECS1GPU11", "ECS1GPU2",
             "ECS1GPU", "ECS4GPU12")
    sxm = {plan for plan in plans if any(fnmatch(plan, pattern) for pattern in facts)}
    assert sxm == {"ECS1GPU10", "ECS4GPU10", "ECS1GPU8", "ECS2GPU3"}
