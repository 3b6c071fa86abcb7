"""Starter Kubernetes manifests for the offer the advisor chose: plain dicts (validated against the Kubernetes
OpenAPI schema in tests) and their YAML text. Pure functions.

What a manifest relies on, and where it is documented:
- GPUs are requested as the extended resource `nvidia.com/gpu`; under the device plugin's "mixed" MIG strategy each
  MIG profile is its own resource `nvidia.com/mig-<profile>`, e.g. `nvidia.com/mig-1g.10gb`
  (NVIDIA k8s-device-plugin README, "MIG support": https://github.com/NVIDIA/k8s-device-plugin#mig-support).
- Nodes are chosen by the labels NVIDIA GPU Feature Discovery sets: `nvidia.com/gpu.memory` (MiB per GPU),
  `nvidia.com/gpu.count`, `nvidia.com/mig.strategy` and, when a GPU is shared, `nvidia.com/gpu.sharing-strategy`
  (`time-slicing` or `mps`) (GFD README, "Generated Labels":
  https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md; GPU Operator,
  "Time-Slicing GPUs in Kubernetes": https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html).
  We do not pin `nvidia.com/gpu.product`: its value is the driver's product string (e.g. NVIDIA-H100-80GB-HBM3),
  which our catalog does not record, so guessing it could match no node.
- GPU node pools are commonly tainted `nvidia.com/gpu` with effect NoSchedule (GKE and AKS add it to GPU pools,
  NVIDIA's own device-plugin DaemonSet tolerates it); an `Exists` toleration matches any value of that key
  (https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/).
- Time-slicing and MPS are switched on by the device plugin's config file,
  `version: v1` / `sharing: {timeSlicing|mps: {resources: [{name: nvidia.com/gpu, replicas: N}]}}`, handed to the
  GPU Operator as a ConfigMap (`devicePlugin.config.name`, one key per configuration)
  (k8s-device-plugin README, "Shared Access to GPUs"; GPU Operator "Time-Slicing GPUs in Kubernetes").
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import yaml

from .engine import (
    BATCH,
    INFERENCE,
    MIG,
    MPS,
    TIME_SLICING,
    TRAINING,
    WHOLE,
    Option,
    PackingPlan,
    WorkloadSpec,
    mig_profile_size,
)

GPU_RESOURCE = "nvidia.com/gpu"
GPU_TOLERATION = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
LABEL_MEMORY = "nvidia.com/gpu.memory"
LABEL_COUNT = "nvidia.com/gpu.count"
LABEL_MIG_STRATEGY = "nvidia.com/mig.strategy"
LABEL_SHARING = "nvidia.com/gpu.sharing-strategy"
# Drivers report a little less than the marketing size (an "80GB" H100 shows 81559 MiB, a "24GB" L4 23034 MiB), so
# the node must report at least 90% of the catalog size in MiB: the same 10% tolerance the GPU-name normaliser uses.
MEMORY_LABEL_TOLERANCE = Decimal("0.9")
IMAGE_PLACEHOLDER = "REPLACE-ME/your-image:tag"
SHARING_CONFIGMAP = "advisor-gpu-sharing"
SHARING_CONFIG_KEY = "shared"
SHARING_STRATEGY_LABEL_VALUES = {TIME_SLICING: "time-slicing", MPS: "mps"}


class _NoAliasDumper(yaml.SafeDumper):
    """Writes repeated label maps out in full: `&id001` anchors are valid YAML but puzzle people reading it."""

    def ignore_aliases(self, data):
        return True


@dataclass(frozen=True)
class Manifest:
    objects: tuple[dict, ...]
    yaml: str


def memory_threshold_mib(memory_gb: Decimal) -> int:
    return int(memory_gb * 1024 * MEMORY_LABEL_TOLERANCE)


def device_plugin_sharing_config(mode: str, replicas: int) -> dict:
    """The device plugin's config for time-slicing or MPS: every GPU is advertised as `replicas` nvidia.com/gpu."""
    strategy = {TIME_SLICING: "timeSlicing", MPS: "mps"}[mode]
    return {"version": "v1", "sharing": {strategy: {"resources": [{"name": GPU_RESOURCE, "replicas": replicas}]}}}


def _node_affinity(expressions: list[dict]) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}


def _pod_spec(*, name: str, resources: dict[str, int], node_selector: dict[str, str], expressions: list[dict],
              restart_policy: str) -> dict:
    limits = {resource: str(count) for resource, count in resources.items()}
    spec: dict = {
        "containers": [{"name": name, "image": IMAGE_PLACEHOLDER, "resources": {"limits": limits}}],
        "tolerations": [dict(GPU_TOLERATION)],
        "restartPolicy": restart_policy,
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    if expressions:
        spec["affinity"] = _node_affinity(expressions)
    return spec


def _memory_expression(memory_gb: Decimal) -> dict:
    # Gt compares the label as an integer; "at least N" is "greater than N - 1".
    return {"key": LABEL_MEMORY, "operator": "Gt", "values": [str(memory_threshold_mib(memory_gb) - 1)]}


def _deployment(name: str, replicas: int, pod: dict) -> dict:
    labels = {"app.kubernetes.io/name": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": pod}},
    }


def _job(name: str, pods: int, pod: dict, *, indexed: bool) -> dict:
    labels = {"app.kubernetes.io/name": name}
    spec: dict = {"completions": pods, "parallelism": pods,
                  "template": {"metadata": {"labels": labels}, "spec": pod}}
    if indexed:
        # Each worker gets its rank from JOB_COMPLETION_INDEX, what torchrun-style launchers need.
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": labels}, "spec": spec}


def _inference_objects(spec: WorkloadSpec, option: Option, plan: PackingPlan | None) -> list[dict]:
    memory = option.offer.memory_per_gpu_gb
    if plan is None:  # no models listed: one Deployment, one node's worth of GPUs per replica
        expressions = [_memory_expression(memory)] if memory else []
        pod = _pod_spec(name="server", resources={GPU_RESOURCE: spec.gpus_per_node}, node_selector={},
                        expressions=expressions, restart_policy="Always")
        return [_deployment("inference", spec.nodes, pod)]

    objects: list[dict] = []
    mode = spec.sharing
    if mode in (TIME_SLICING, MPS):
        replicas = plan.time_slicing_replicas if mode == TIME_SLICING else plan.mps_replicas
        objects.append({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": SHARING_CONFIGMAP, "namespace": "gpu-operator"},
            "data": {SHARING_CONFIG_KEY: yaml.safe_dump(device_plugin_sharing_config(mode, replicas),
                                                        sort_keys=False)},
        })
    for index, model in enumerate(spec.models, start=1):
        name = f"model-{index}"
        selector: dict[str, str] = {}
        expressions: list[dict] = []
        if model.memory_gb > plan.gpu_memory_gb or mode == WHOLE:
            per_replica = -(-model.memory_gb // plan.gpu_memory_gb)  # ceil: a larger model spans GPUs
            resources = {GPU_RESOURCE: int(per_replica)}
            expressions.append(_memory_expression(plan.gpu_memory_gb))
        elif mode == MIG:
            profile = next(use.profile for use in plan.mig_uses if mig_profile_size(use.profile)[1] >= model.memory_gb)
            resources = {f"nvidia.com/mig-{profile}": 1}
            selector[LABEL_MIG_STRATEGY] = "mixed"
        else:
            resources = {GPU_RESOURCE: 1}
            selector[LABEL_SHARING] = SHARING_STRATEGY_LABEL_VALUES[mode]
            expressions.append(_memory_expression(plan.gpu_memory_gb))
        pod = _pod_spec(name=name, resources=resources, node_selector=selector, expressions=expressions,
                        restart_policy="Always")
        objects.append(_deployment(name, model.count, pod))
    return objects


def _job_objects(spec: WorkloadSpec, option: Option) -> list[dict]:
    memory = option.offer.memory_per_gpu_gb
    expressions = [_memory_expression(memory)] if memory else []
    if spec.gpus_per_node > 1:
        expressions.append({"key": LABEL_COUNT, "operator": "Gt", "values": [str(spec.gpus_per_node - 1)]})
    pod = _pod_spec(name="worker", resources={GPU_RESOURCE: spec.gpus_per_node}, node_selector={},
                    expressions=expressions, restart_policy="Never")
    if spec.kind == TRAINING:
        return [_job("training", spec.nodes, pod, indexed=True)]
    return [_job("batch", spec.nodes, pod, indexed=False)]


def build_manifest(spec: WorkloadSpec, option: Option, plan: PackingPlan | None) -> Manifest | None:
    """A Deployment per model (inference) or one Job (training, batch) for `option`; None for a notebook, which
    does not need Kubernetes."""
    if spec.kind == INFERENCE:
        objects = _inference_objects(spec, option, plan)
    elif spec.kind in (TRAINING, BATCH):
        objects = _job_objects(spec, option)
    else:
        return None
    # MIG needs no object of ours: the node's MIG layout is set by the GPU Operator's MIG manager (or the provider),
    # and the pods above only ask for the profile resources it advertises.
    header = (f"# Starter manifest for {option.offer.provider_name} {option.offer.instance_type} "
              f"({option.offer.region}); replace the image and review before applying.\n")
    return Manifest(tuple(objects), header + yaml.dump_all(objects, Dumper=_NoAliasDumper, sort_keys=False))
