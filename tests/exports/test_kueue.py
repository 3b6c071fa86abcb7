"""Kueue objects validated with jsonschema against the openAPIV3Schema of Kueue v0.19.2's CRDs (recorded in
exports/schemas/, sources in SOURCES.md): every exported object passes, and an object that breaks the CRD fails."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from rest_framework.test import APIClient

SCHEMAS = Path(__file__).resolve().parents[2] / "exports" / "schemas"


def closed(schema):
    """The CRD schema with unknown fields refused: the API server prunes a field a structural schema does not
    declare (the object is accepted without it), so a misspelt field would pass plain validation and vanish."""
    if isinstance(schema, dict):
        schema = {key: closed(value) for key, value in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema and key_is_not_metadata(schema):
            schema["additionalProperties"] = False
    elif isinstance(schema, list):
        schema = [closed(item) for item in schema]
    return schema


def key_is_not_metadata(schema) -> bool:
    return "apiVersion" not in schema["properties"] or "spec" in schema["properties"]


def crd_schema(kind: str) -> dict:
    return closed(json.loads((SCHEMAS / f"kueue-{kind}-v1beta2.json").read_text()))


def validate(obj: dict) -> None:
    jsonschema.Draft7Validator(crd_schema(obj["kind"])).validate(obj)


def export(query: str = "") -> tuple[list[dict], str]:
    response = APIClient().get(f"/api/v1/exports/kueue/?{query}")
    assert response.status_code == 200, response.content
    text = response.content.decode()
    document = yaml.safe_load(text)
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")  # what kubectl apply -f takes as one file
    return document["items"], text


def test_every_object_passes_the_crd_schema(machines):
    objects, _ = export("gpu_quota=16&namespace=team-a&queue=gpus")
    kinds = [obj["kind"] for obj in objects]
    assert kinds.count("ClusterQueue") == 1 and kinds.count("LocalQueue") == 1 and "ResourceFlavor" in kinds
    for obj in objects:
        validate(obj)
    local = objects[-1]
    assert local["metadata"] == {"name": "gpus", "namespace": "team-a"} and local["spec"]["clusterQueue"] == "gpus"


def test_an_object_that_breaks_the_crd_fails(machines):
    objects, _ = export()
    flavour = next(obj for obj in objects if obj["kind"] == "ResourceFlavor")
    nine = copy.deepcopy(flavour)
    nine["spec"]["nodeLabels"] = {f"example.com/label-{n}": "x" for n in range(9)}
    with pytest.raises(jsonschema.ValidationError):
        validate(nine)
    queue = copy.deepcopy(next(obj for obj in objects if obj["kind"] == "ClusterQueue"))
    queue["spec"]["resourceGroups"][0]["flavors"][0]["name"] = "Not_A_Name"
    with pytest.raises(jsonschema.ValidationError):
        validate(queue)
    misspelt = copy.deepcopy(flavour)
    misspelt["spec"]["nodeLabel"] = misspelt["spec"].pop("nodeLabels")
    with pytest.raises(jsonschema.ValidationError):
        validate(misspelt)


def test_flavours_are_listed_cheapest_per_gpu_first_and_unknown_labels_are_left_out(machines):
    objects, text = export()
    queue = next(obj for obj in objects if obj["kind"] == "ClusterQueue")
    names = [flavor["name"] for flavor in queue["spec"]["resourceGroups"][0]["flavors"]]
    # on-demand flavours first, cheapest per GPU first, then the spot ones (capacity that can be taken back only
    # once the on-demand quota is used up)
    spot = [name.endswith("-spot") for name in names]
    assert any(spot) and spot == sorted(spot)
    assert names.index("aws-p5.48xlarge") < names.index("gcp-a3-highgpu-8g")  # 6.88 < 11.06 per GPU
    assert names.index("gcp-g2-standard-4-spot") < names.index("azure-standard-nc24ads-a100-v4-spot")  # 0.3 < 0.404
    # mixed: by price alone, spot among the others (g2 spot at 0.3 per GPU first); none: no spot flavour at all
    mixed, _ = export("spot_flavors=mixed")
    mixed_names = [f["name"] for f in next(o for o in mixed if o["kind"] == "ClusterQueue")["spec"][
        "resourceGroups"][0]["flavors"]]
    assert mixed_names[0] == "gcp-g2-standard-4-spot"
    assert names.index("azure-standard-nc24ads-a100-v4-spot") > names.index("gcp-g2-standard-4")
    assert sorted(mixed_names) == sorted(names)
    without, _ = export("spot_flavors=none")
    assert [o["metadata"]["name"] for o in without if o["kind"] == "ResourceFlavor"] == [
        name for name in names if not name.endswith("-spot")]
    assert not any(name.startswith("lambda") for name in names)
    assert "lambda: the instance-type label value of its nodes is not documented" in text
    assert "not an NVIDIA GPU" in text
    flavours = {obj["metadata"]["name"]: obj for obj in objects if obj["kind"] == "ResourceFlavor"}
    assert flavours["aws-p5.48xlarge"]["spec"] == {"nodeLabels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}}


def test_aks_spot_flavour_carries_the_taint_aks_sets_and_its_toleration(machines):
    objects, _ = export("provider=azure")
    spot = next(obj for obj in objects if obj["metadata"]["name"] == "azure-standard-nc24ads-a100-v4-spot")
    taint = {"key": "kubernetes.azure.com/scalesetpriority", "value": "spot", "effect": "NoSchedule"}
    assert spot["spec"]["nodeLabels"]["kubernetes.azure.com/scalesetpriority"] == "spot"
    assert spot["spec"]["nodeTaints"] == [taint]
    assert spot["spec"]["tolerations"] == [{**taint, "operator": "Equal"}]


def test_in_stock_order_moves_a_rarely_available_flavour_down(machines):
    by_price, _ = export("provider=azure,aws")
    by_stock, _ = export("provider=azure,aws&order=in_stock")

    def order(objects):
        queue = next(obj for obj in objects if obj["kind"] == "ClusterQueue")
        return [flavor["name"] for flavor in queue["spec"]["resourceGroups"][0]["flavors"]]

    # azure on-demand 3.673/GPU in stock 20% -> 18.37; aws 6.88/GPU in stock 90% -> 7.64
    assert order(by_price).index("azure-standard-nc24ads-a100-v4") < order(by_price).index("aws-p5.48xlarge")
    assert order(by_stock).index("azure-standard-nc24ads-a100-v4") > order(by_stock).index("aws-p5.48xlarge")


@pytest.mark.parametrize("query, name", [("gpu_quota=ten", "gpu_quota"), ("order=cheap", "order"),
                                         ("spot_flavors=first", "spot_flavors"),
                                         ("namespace=Team_A", "namespace"), ("context=x", "context")])
def test_bad_options_are_a_400_naming_them(machines, query, name):
    response = APIClient().get(f"/api/v1/exports/kueue/?{query}")
    assert response.status_code == 400
    assert name in response.json()
