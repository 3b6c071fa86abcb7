"""The shipped Google Cloud machine-type facts (issue #36): a regression in a sourced GKE fact fails here."""

import pytest

from providers import kubernetes as k8s
from providers.curated import load_instance_types


@pytest.fixture(scope="module")
def gcp_facts():
    return [k8s.Fact(pattern=f.pattern, key=f.key, value=f.value, number=f.number, source_url=f.source_url,
                     confidence=f.confidence, origin=file.origin, interfaces=f.interfaces,
                     bandwidth_gbps=f.bandwidth_gbps)
            for file in load_instance_types() if file.provider == "gcp" for f in file.facts]


@pytest.mark.parametrize(("machine_type", "fabric"), [("a3-highgpu-8g", "gpudirect_tcpx"),
                                                      ("a3-megagpu-8g", "gpudirect_tcpxo"),
                                                      ("a3-ultragpu-8g", "roce")])
def test_a3_machine_types_are_gke_nodes_with_their_documented_fabric(gcp_facts, machine_type, fabric):
    facts = k8s.facts_for(machine_type, gcp_facts)
    assert facts["managed_node"].value == "yes"
    assert facts["fabric"].value == fabric
    assert facts["fabric"].source_url.startswith("https://")


@pytest.mark.parametrize("machine_type", ["a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g", "g4-standard-48",
                                          "g4-standard-384", "tpu-v5e (per chip)", "tpu-v6e (per chip)"])
def test_a3_high_small_sizes_g4_and_gke_tpu_generations_are_gke_nodes_from_googles_cluster_toolkit(gcp_facts,
                                                                                                  machine_type):
    node = k8s.facts_for(machine_type, gcp_facts)["managed_node"]
    assert node.value == "yes"
    assert "GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a" in node.source_url


def test_g4_is_documented_and_the_orchestrator_mappings_are_inferred(gcp_facts):
    assert k8s.facts_for("g4-standard-96", gcp_facts)["managed_node"].confidence == "documented"
    assert k8s.facts_for("a3-highgpu-1g", gcp_facts)["managed_node"].confidence == "inferred"


@pytest.mark.parametrize("price_row, value", [("tpu-v2 pod (per chip)", "no"), ("tpu-v2 device (per chip)", "no"),
                                              ("tpu-v3 device (per chip)", "yes"), ("tpu-v3 pod (per chip)", "yes")])
def test_tpu_v2_and_v3_are_answered_by_googles_own_tpu_pages(gcp_facts, price_row, value):
    """TPU v3: "supported using Google Kubernetes Engine"; TPU v2: "only supported using the Cloud TPU API"."""
    node = k8s.facts_for(price_row, gcp_facts)["managed_node"]
    assert (node.value, node.confidence) == (value, "documented")
    assert node.source_url == f"https://docs.cloud.google.com/tpu/docs/{price_row[4:6]}"


@pytest.mark.parametrize("machine_type", ["a2-highgpu-1g", "a2-megagpu-16g", "a2-ultragpu-8g", "g2-standard-96",
                                          "g4-standard-384", "a3-highgpu-4g"])
def test_a2_g2_g4_and_small_a3_high_have_a_plain_network_as_googles_networking_table_says(gcp_facts, machine_type):
    fabric = k8s.facts_for(machine_type, gcp_facts)["fabric"]
    assert fabric.value == "none"
    assert fabric.source_url.startswith("https://docs.cloud.google.com/compute/docs/")
    assert k8s.fabric_class(fabric.value) == k8s.PLAIN_CLASS


def test_a2_a100s_are_sxm_from_their_nvlink_full_mesh_and_only_multi_gpu_a2_types_state_a_gpu_link(gcp_facts):
    for machine_type in ("a2-highgpu-1g", "a2-highgpu-8g", "a2-megagpu-16g", "a2-ultragpu-4g"):
        form = k8s.facts_for(machine_type, gcp_facts)["form_factor"]
        assert (form.value, form.confidence) == ("sxm", "inferred"), machine_type
    assert k8s.facts_for("a2-highgpu-8g", gcp_facts)["gpu_link"].value == "nvlink"
    assert "gpu_link" not in k8s.facts_for("a2-highgpu-1g", gcp_facts)  # one GPU: no link to state
    assert "form_factor" not in k8s.facts_for("g2-standard-96", gcp_facts)  # L4: not in the target, not stated
