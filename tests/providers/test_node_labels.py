"""The one node-label table: every provider entry is sourced and dated, and the answers refuse what no node carries."""

import tomllib

import pytest

from providers import node_labels


def table():
    with node_labels.DATA_FILE.open("rb") as handle:
        return tomllib.load(handle)


@pytest.mark.parametrize("slug", sorted(set(table()) - {"kubernetes"}))
def test_every_entry_is_sourced_dated_and_says_what_is_not_documented(slug):
    entry = table()[slug]
    assert entry["source_url"].startswith("https://") and str(entry["verified_on"]) == "2026-12-04"
    assert entry["instance_type_values"] in {"instance_type", "unknown"}
    assert entry["region_values"] in {"region", "unknown"}
    assert entry.get("none_documented"), "say what was looked for and not found"
    for key in ("spot", "accelerator", "topology"):
        for item in entry.get(key, []):
            assert item["source_url"].startswith("https://") and str(item["verified_on"]) == "2026-12-04"
    if entry.get("confidence") == "inferred":
        assert entry["basis"]


def test_the_providers_the_brief_names_are_covered():
    assert {"aws", "gcp", "azure", "oci", "coreweave", "nebius", "digitalocean", "linode", "vultr", "scaleway",
            "ovhcloud"} <= set(table())


def test_instance_type_labels_only_where_documented_and_valid():
    assert node_labels.instance_type_label("aws", "p5.48xlarge") == {"node.kubernetes.io/instance-type": "p5.48xlarge"}
    assert node_labels.instance_type_label("lambda", "gpu_1x_h100") is None  # not in the table
    assert node_labels.instance_type_label("coreweave", "NVIDIA HGX H100 x8") is None  # values not documented
    assert node_labels.instance_type_label("oci", "BM.GPU H100.8") is None  # a space: no valid label value
    assert node_labels.instance_type_label("aws", "x" * 64) is None  # over 63 characters
    assert node_labels.instance_type_label("vultr", "vcg-a100-12c-120g-80vram") is not None  # inferred
    assert node_labels.instance_type_label("vultr", "vcg-a100-12c-120g-80vram", documented_only=True) is None


def test_region_values_accelerator_values_and_the_aks_spot_taint():
    assert node_labels.region_value("gcp", "us-central1") == "us-central1"
    assert node_labels.region_value("oci", "us-ashburn-1") is None
    # an AWS Local Zone or Wavelength Zone group is not a region label value: its nodes carry the parent Region
    assert [node_labels.region_value("aws", region) for region in (
        "us-east-1", "us-gov-west-1", "us-west-2-lax-1", "eu-west-3-wl1-cmn1")] == [
        "us-east-1", "us-gov-west-1", None, None]
    assert node_labels.accelerator_label("gcp", "a3-megagpu-8g") == ("cloud.google.com/gke-accelerator",
                                                                     "nvidia-h100-mega-80gb")
    assert node_labels.accelerator_label("gcp", "n1-standard-4") is None
    spot = node_labels.provider_labels("azure").spot
    assert (spot.key, spot.value) == ("kubernetes.azure.com/scalesetpriority", "spot")
    assert spot.taint == node_labels.Taint("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule")
    assert node_labels.provider_labels("gcp").spot.taint is None  # GKE does not taint Spot nodes itself
    assert "topology.k8s.aws/network-node-layer-1" in node_labels.provider_labels("aws").topology_keys
    assert "oci.oraclecloud.com/rdma.local_block_id" in node_labels.provider_labels("oci").topology_keys
    assert "backend.coreweave.cloud/leafgroup" in node_labels.provider_labels("coreweave").topology_keys
