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
