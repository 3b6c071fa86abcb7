"""The OpenCost CSV read with the rules of OpenCost's CSV provider (opencost/opencost
pkg/cloud/provider/csvprovider.go @ 5f6533303e3850c8635796a74bb22802d16e9090), and a round trip: for every exported
machine, its node row plus GPUs x its GPU row (as OpenCost's NodePricing adds them) equals the API's price."""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from providers import node_labels

FIELDS = ("EndTimestamp", "InstanceID", "Region", "AssetClass", "InstanceIDField", "InstanceType",
          "MarketPriceHourly", "Version")


class NotReadable(AssertionError):
    pass


def read_opencost(text: str) -> tuple[list[dict], list[str]]:
    """(rows with the offer id of the comment above each, comments). Applies the CSV provider's rules: 8 fields by
    position, a one-field record starting with # is a comment (any other record of another length is refused),
    asset classes node or gpu, GPU rows without Region, one InstanceIDField for all node rows."""
    rows, comments, offer_id = [], [], None
    for record in csv.reader(io.StringIO(text)):
        if len(record) == 1 and record[0].startswith("#"):
            comments.append(record[0])
            found = re.match(r"# offer (\d+) ", record[0])
            offer_id = int(found.group(1)) if found else offer_id
            continue
        if len(record) != len(FIELDS):
            raise NotReadable(f"expected {len(FIELDS)} fields, got {len(record)}: {record}")
        row = dict(zip(FIELDS, record, strict=True))
        if row["AssetClass"] not in {"node", "gpu"}:
            raise NotReadable(f"asset class {row['AssetClass']!r}")
        if row["AssetClass"] == "gpu" and row["Region"]:
            raise NotReadable("a GPU row with a Region is keyed region,id and never matched")
        if Decimal(row["MarketPriceHourly"]) < 0:
            raise NotReadable("negative price")
        row["offer"] = offer_id
        rows.append(row)
    node_fields = {row["InstanceIDField"] for row in rows if row["AssetClass"] == "node"}
    if len(node_fields) > 1:
        raise NotReadable(f"the reader keeps one InstanceIDField for node rows, got {node_fields}")
    keys = [(row["AssetClass"], row["Region"].lower(), row["InstanceID"].lower()) for row in rows]
    if len(keys) != len(set(keys)):
        raise NotReadable("two rows with one key: the later silently replaces the earlier")
    return rows, comments


def opencost_finds(rows: list[dict], region: str, instance_type: str) -> bool:
    """Whether OpenCost's CSVProvider.NodePricing finds a price for a node labelled with `region` and `instance_type`
    (csvprovider.go: keys stored lower-cased, region first when the row has one; the node's id is its region and
    label value as labelled, when any row has a Region; then the id without its region; then the class key of region,
    instance type and "node" as written)."""
    nodes = [row for row in rows if row["AssetClass"] == "node"]
    uses_region = any(row["Region"] for row in nodes)
    keys = {f"{row['Region'].lower()},{row['InstanceID'].lower()}" if row["Region"] else row["InstanceID"].lower()
            for row in nodes}
    classes = {f"{row['Region']},{row['InstanceType']},node" for row in nodes}
    node_id = f"{region},{instance_type}" if uses_region else instance_type
    parts = node_id.split(",")
    return node_id in keys or (len(parts) == 2 and parts[1] in keys) or f"{region},{instance_type},node" in classes


def export(query: str = "") -> str:
    response = APIClient().get(f"/api/v1/exports/opencost/?{query}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/csv")
    return b"".join(response.streaming_content).decode()


def test_the_csv_reads_by_the_csv_providers_rules(machines):
    rows, comments = read_opencost(export())
    assert {row["InstanceIDField"] for row in rows if row["AssetClass"] == "node"} == {
        "metadata.labels.node.kubernetes.io/instance-type"}
    assert any("control-plane fee" in line for line in comments)
    assert any(line.startswith("# prices in USD") for line in comments)
    assert any("filter: (none" in line for line in comments)


def test_the_reader_refuses_what_opencost_would_misread(machines):
    text = export()
    with pytest.raises(NotReadable):
        read_opencost(text + "2026-08-03,x,r,node,f,x,1,v,extra\n")
    with pytest.raises(NotReadable):
        read_opencost(text + ",nvidia-l4,us-central1,gpu,cloud.google.com/gke-accelerator,nvidia-l4,1,v\n")


def test_node_and_gpu_rows_add_up_to_the_apis_machine_price(machines):
    rows, _ = read_opencost(export())
    gpu_rows = {(row["InstanceIDField"], row["InstanceID"]): Decimal(row["MarketPriceHourly"])
                for row in rows if row["AssetClass"] == "gpu"}
    assert gpu_rows, "GKE machines carry gke-accelerator: their GPUs get GPU rows"
    nodes = [row for row in rows if row["AssetClass"] == "node"]
    assert len(nodes) >= 6
    for row in nodes:
        offer = APIClient().get(f"/api/v1/offers/{row['offer']}/").json()
        assert offer["instance_type"] == row["InstanceID"]
        provider = offer["provider"]["slug"]
        label = node_labels.accelerator_label(provider, row["InstanceID"])
        gpus = Decimal(str(offer["gpu_count"]))
        as_opencost_adds = Decimal(row["MarketPriceHourly"]) + (gpu_rows[label] * gpus if label else 0)
        assert as_opencost_adds == Decimal(str(offer["price_hour_usd"])), row


def test_machines_without_documented_labels_are_left_out_and_counted(machines):
    rows, comments = read_opencost(export())
    exported = {row["InstanceID"] for row in rows}
    assert "gpu_1x_h100_sxm5" not in exported  # lambda: instance-type label values not documented
    assert "BM.GPU H100.8" not in exported  # not a valid label value
    assert "g6f.large" not in exported  # a share of a GPU
    assert any("lambda: the instance-type label value of its nodes is not documented" in c for c in comments)
    assert any("a share of a GPU" in c for c in comments)


def test_every_node_row_is_found_by_opencost_for_a_node_of_its_machine(machines):
    for query in ("", "provider=oci", "provider=azure", "provider=aws,gcp"):
        rows, _ = read_opencost(export(query))
        for row in (row for row in rows if row["AssetClass"] == "node"):
            region = row["Region"] or "a-region-whose-label-we-cannot-name"
            assert opencost_finds(rows, region, row["InstanceID"]), (query, row)


def test_undocumented_region_values_get_no_row_that_opencost_could_never_find(machines):
    # OKE's region label values are not documented, so its rows would have no Region; OpenCost then finds a node only
    # by its lower-cased instance type, and OKE's shapes are mixed case: left out and counted, not written to miss.
    rows, comments = read_opencost(export("provider=oci"))
    assert rows == []
    assert any("price differs by region" in c for c in comments)
    assert any("found only for a lower-case instance type" in c for c in comments)
    written = [{"InstanceID": "BM.GPU.A10.4", "Region": "", "AssetClass": "node", "InstanceType": "BM.GPU.A10.4"}]
    assert not opencost_finds(written, "us-ashburn-1", "BM.GPU.A10.4")  # what the old row was worth
    lower = [{**written[0], "InstanceID": "bm.gpu.a10.4"}]
    assert opencost_finds(lower, "us-ashburn-1", "bm.gpu.a10.4")


@pytest.mark.parametrize(("tool", "query", "named"), [
    ("opencost", "gpu=nope", "gpu"), ("kueue", "spot_nodes=maybe", "spot_nodes"),
    ("skypilot", "gpu_count_min=8&gpu_count_min=1", "gpu_count_min"),  # a single-value parameter given twice
    ("kueue", "gpu_modle=h100", "gpu_modle"), ("opencost", "k8s_version=1.x", "k8s_version"),
])
def test_a_bad_filter_is_a_400_naming_it(machines, tool, query, named):
    response = APIClient().get(f"/api/v1/exports/{tool}/?{query}")
    assert response.status_code == 400
    assert named in response.json()


def test_labels_read_from_a_providers_controller_code_are_exported_and_said_to_be_inferred(machines):
    rows, comments = read_opencost(export("provider=vultr"))
    assert [(row["InstanceID"], row["Region"]) for row in rows] == [("vcg-a100-12c-120g-80vram", "ewr")]
    assert any(c.startswith("# vultr: node labels inferred from Vultr's cloud controller manager") for c in comments)


def test_an_undated_price_is_exported_only_with_unknown_include_and_is_counted_otherwise(machines):
    """A cost tool should not carry a price nobody can date: undated offers are left out and counted in the header,
    and unknown=include (the one parameter for what is unknown) exports them too."""
    undated = machines[("aws", "p5.48xlarge", "us-east-1")]
    undated.price_as_of = None
    undated.save()
    rows, comments = read_opencost(export())
    assert "p5.48xlarge" not in {row["InstanceID"] for row in rows}
    assert any("left out: 1 offer(s) whose price states no date" in comment for comment in comments)
    rows, comments = read_opencost(export("unknown=include"))
    assert "p5.48xlarge" in {row["InstanceID"] for row in rows}
    assert not any("whose price states no date" in comment for comment in comments)
