"""Starter manifests: valid against the Kubernetes OpenAPI schema (strict: no unknown fields) for every workload
kind and sharing mode, asking for the right GPU resource, on the right GFD-labelled nodes, tolerating GPU taints.

The schemas ship inside the `kubernetes-validate` package, so validation needs no network.
"""

from decimal import Decimal as D

import kubernetes_validate
import pytest
import yaml

from advisor import engine
from advisor.engine import GpuData, ModelNeed, OfferData, WorkloadSpec
from advisor.manifests import build_manifest

# The oldest Kubernetes minor still broadly offered by managed services when this was written; the manifests use
# only long-stable fields, so validating against one version is enough.
K8S_VERSION = "1.33.0"
H100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80),
               mig_profiles=("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"))
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def manifest_for(spec: WorkloadSpec, gpus="8"):
    offer = OfferData(id=1, provider_slug="p", provider_name="P", instance_type="gpu-8x", region="r",
                      gpu_count=D(gpus), price_hour_usd=D("10"), gpu=H100)
    cells = {"p": {"offering": engine.Cell("offering", "managed"), "mig": engine.Cell("mig", "yes"),
                   "time_slicing": engine.Cell("time_slicing", "yes"), "mps": engine.Cell("mps", "yes")}}
    advice = engine.advise(spec, offers=[offer], cells=cells, per_eur={})
    return build_manifest(spec, advice.chosen, advice.packing)


def assert_valid(manifest):
    assert manifest.objects
    for obj in manifest.objects:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    # The YAML a user copies is the same documents.
    assert [doc for doc in yaml.safe_load_all(manifest.yaml)] == list(manifest.objects)


def pod(obj):
    return obj["spec"]["template"]["spec"]


def expressions(pod_spec):
    terms = pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return {e["key"]: (e["operator"], e["values"]) for e in terms["nodeSelectorTerms"][0]["matchExpressions"]}


MODELS = (ModelNeed(6, D(9)), ModelNeed(2, D(35)))

SPECS = {
    "inference": WorkloadSpec(kind="inference", gpu="h100", gpus_per_node=2, nodes=3),
    "inference_whole": WorkloadSpec(kind="inference", models=MODELS),
    "inference_mig": WorkloadSpec(kind="inference", models=MODELS, sharing="mig"),
    "inference_time_slicing": WorkloadSpec(kind="inference", models=MODELS, sharing="time_slicing"),
    "inference_mps": WorkloadSpec(kind="inference", models=MODELS, sharing="mps"),
    "training": WorkloadSpec(kind="training", gpu="h100", gpus_per_node=8, nodes=4),
    "batch": WorkloadSpec(kind="batch", gpu="h100", gpus_per_node=1, nodes=5),
}


@pytest.mark.parametrize("name", SPECS)
def test_every_manifest_is_schema_valid_and_tolerates_gpu_taints(name):
    manifest = manifest_for(SPECS[name])
    assert_valid(manifest)
    for obj in manifest.objects:
        if obj["kind"] in ("Deployment", "Job"):
            assert pod(obj)["tolerations"] == [GPU_TOLERATION]


def test_schema_validation_would_catch_a_broken_manifest():
    broken = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"},
              "spec": {"template": {"spec": {"containers": [{"name": "x", "image": "i", "gpus": 1}]}}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_inference_without_models_is_one_deployment_per_node_of_gpus():
    (deployment,) = manifest_for(SPECS["inference"]).objects
    assert (deployment["kind"], deployment["spec"]["replicas"]) == ("Deployment", 3)
    assert pod(deployment)["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "2"}
    # 80 GB x 1024 x 0.9 = 73728 MiB at least, i.e. greater than 73727
    assert expressions(pod(deployment))["nvidia.com/gpu.memory"] == ("Gt", ["73727"])


def test_mig_manifest_requests_the_mixed_strategy_profile_resources():
    deployments = manifest_for(SPECS["inference_mig"]).objects
    assert [d["spec"]["replicas"] for d in deployments] == [6, 2]
    assert [pod(d)["containers"][0]["resources"]["limits"] for d in deployments] == [
        {"nvidia.com/mig-1g.10gb": "1"}, {"nvidia.com/mig-3g.40gb": "1"}]
    assert all(pod(d)["nodeSelector"] == {"nvidia.com/mig.strategy": "mixed"} for d in deployments)


@pytest.mark.parametrize("name, strategy, label, replicas", [
    ("inference_time_slicing", "timeSlicing", "time-slicing", 5),  # 35 + 35 + 9 | 9 x 5 -> at most 5 per GPU
    ("inference_mps", "mps", "mps", 2),  # floor(80 / 35)
])
def test_shared_gpu_manifest_carries_the_device_plugin_sharing_config(name, strategy, label, replicas):
    config_map, *deployments = manifest_for(SPECS[name]).objects
    assert config_map["kind"] == "ConfigMap"
    (config,) = [yaml.safe_load(text) for text in config_map["data"].values()]
    assert config == {"version": "v1", "sharing": {strategy: {"resources": [
        {"name": "nvidia.com/gpu", "replicas": replicas}]}}}
    for deployment in deployments:
        assert pod(deployment)["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1"}
        assert pod(deployment)["nodeSelector"] == {"nvidia.com/gpu.sharing-strategy": label}


def test_training_is_an_indexed_job_with_one_pod_per_node_on_nodes_with_enough_gpus():
    (job,) = manifest_for(SPECS["training"]).objects
    assert job["kind"] == "Job"
    assert (job["spec"]["completions"], job["spec"]["parallelism"], job["spec"]["completionMode"]) == (4, 4, "Indexed")
    assert pod(job)["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "8"}
    assert expressions(pod(job))["nvidia.com/gpu.count"] == ("Gt", ["7"])
    assert pod(job)["restartPolicy"] == "Never"


def test_batch_is_a_plain_parallel_job():
    (job,) = manifest_for(SPECS["batch"]).objects
    assert (job["kind"], job["spec"]["parallelism"]) == ("Job", 5)
    assert "completionMode" not in job["spec"]


def test_notebook_gets_no_manifest():
    assert manifest_for(WorkloadSpec(kind="notebook", gpu="h100")) is None
