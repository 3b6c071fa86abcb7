"""Starter Kubernetes manifests for the offer the advisor chose: plain dicts (validated offline against the Kubernetes
OpenAPI schema, and the JobSet / LeaderWorkerSet CRD schemas, in tests) and their YAML text. Pure functions.

Every pod asks for exactly the GPUs of its `ReplicaLayout` (never more than the chosen node type has), on that node
type, and gets a memory-backed /dev/shm (NCCL and PyTorch data loaders use shared memory; a container's default is
64 MiB). What a manifest relies on, and where it is documented:
- GPUs are the extended resource `nvidia.com/gpu` (`amd.com/gpu` for AMD); under the device plugin's "mixed" MIG
  strategy each MIG profile is its own resource `nvidia.com/mig-<profile>`
  (https://github.com/NVIDIA/k8s-device-plugin#mig-support; https://github.com/ROCm/k8s-device-plugin).
- The node type: on the providers whose managed Kubernetes runs the cloud's controller manager (EKS, GKE, AKS, OKE),
  nodes carry the well-known label `node.kubernetes.io/instance-type` with the instance type we price
  (https://kubernetes.io/docs/reference/labels-annotations-taints/#nodekubernetesioinstance-type). Elsewhere the pods
  select nodes by the labels NVIDIA GPU Feature Discovery sets, `nvidia.com/gpu.memory` (MiB per GPU) and
  `nvidia.com/gpu.count` (https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md),
  which needs GFD (the GPU Operator installs it); MIG and shared GPUs use GFD's `nvidia.com/mig.strategy` and
  `nvidia.com/gpu.sharing-strategy`, except where the provider partitions or shares GPUs itself per node pool (GKE:
  its own labels, whole `nvidia.com/gpu` requests, no ConfigMap; the node-label table's `gpu_sharing`).
- GPU node pools are commonly tainted `nvidia.com/gpu` (GKE adds `nvidia.com/gpu=present:NoSchedule`); an `Exists`
  toleration matches any value (https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/).
- RDMA, where the provider documents the resource a pod requests: EKS's EFA device plugin advertises
  `vpc.amazonaws.com/efa` (https://docs.aws.amazon.com/eks/latest/userguide/device-management-efa.html); CoreWeave's
  InfiniBand nodes `rdma/ib`, requested as 1 ("used as a boolean")
  (https://docs.coreweave.com/products/networking/hpc-interconnect/use-gpudirect-rdma). Nebius labels GPU nodes with
  their InfiniBand fabric, `topology.nebius.com/gpu-cluster-id`, so workers are kept on one fabric by pod affinity
  (https://docs.nebius.com/kubernetes/gpu/topology-aware-scheduling). Elsewhere the manifest says the resource is
  not documented rather than guess one.
- Inference runs vLLM's OpenAI-compatible server (image `vllm/vllm-openai`, port 8000, `GET /health` answers 200
  once the model is loaded: https://docs.vllm.ai/en/latest/deployment/docker.html,
  https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html). A replica across nodes is a
  LeaderWorkerSet (https://lws.sigs.k8s.io/docs/), its workers joining the leader's Ray cluster through
  `LWS_LEADER_ADDRESS` with the script vLLM's image ships, as LWS's own vLLM example does (Llama 3.1 405B, tensor
  parallel 8 inside a node, pipeline parallel 2 across nodes:
  https://github.com/kubernetes-sigs/lws/blob/main/docs/examples/vllm/GPU/lws.yaml).
- Training is a JobSet (https://jobset.sigs.k8s.io/docs/overview/): one indexed Job of one pod per node; JobSet
  gives each pod the hostname `<jobset>-<job>-<job index>-<pod index>` under a headless Service named after the
  JobSet, so rank 0 is `training-workers-0-0.training`, and the pod's index is its
  `batch.kubernetes.io/job-completion-index` annotation; torchrun reads them as its rendezvous, as JobSet's PyTorch
  example does (https://github.com/kubernetes-sigs/jobset/blob/main/site/static/examples/pytorch/cnn-mnist/mnist.yaml).
  The optional `kueue.x-k8s.io/queue-name` label hands the JobSet to a Kueue LocalQueue
  (https://kueue.sigs.k8s.io/docs/tasks/run/jobsets/).
- Time-slicing and MPS are switched on by the device plugin's config file, handed to the GPU Operator as a ConfigMap
  (k8s-device-plugin README, "Shared Access to GPUs";
  https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path

import yaml

from nodesoftware import compat
from providers import node_labels

from .placement import mig_instances_per_gpu
from .sizing import GPU_MEMORY_UTILISATION
from .types import (
    BATCH,
    INFERENCE,
    MPS,
    TIME_SLICING,
    TRAINING,
    Option,
    PackingPlan,
    ReplicaLayout,
    WorkloadSpec,
)

GPU_RESOURCE = "nvidia.com/gpu"
LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
LABEL_MEMORY = "nvidia.com/gpu.memory"
LABEL_COUNT = "nvidia.com/gpu.count"
LABEL_MIG_STRATEGY = "nvidia.com/mig.strategy"
LABEL_SHARING = "nvidia.com/gpu.sharing-strategy"
LABEL_QUEUE = "kueue.x-k8s.io/queue-name"
# Drivers report a little less than the marketing size (an "80GB" H100 shows 81559 MiB, a "24GB" L4 23034 MiB), so
# the node must report at least 90% of the catalog size in MiB: the same 10% tolerance the GPU-name normaliser uses.
MEMORY_LABEL_TOLERANCE = Decimal("0.9")
IMAGE_PLACEHOLDER = "REPLACE-ME/your-image:tag"
VLLM_FIXTURE = Path(__file__).parent / "data" / "vllm.toml"
VLLM = tomllib.loads(VLLM_FIXTURE.read_text())  # the pinned release and the flags we emit, with their sources
VLLM_IMAGE = VLLM["image"]
VLLM_PORT = 8000
HF_TOKEN_SECRET = "hf-token"
HF_TOKEN_URL = "https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hftoken"
RENDEZVOUS_PORT = 29500
SHARING_CONFIGMAP = "advisor-gpu-sharing"
SHARING_CONFIG_KEY = "shared"
SHARING_STRATEGY_LABEL_VALUES = {TIME_SLICING: "time-slicing", MPS: "mps"}
APP_LABEL = "app.kubernetes.io/name"

# Which providers' nodes carry our instance type in `node.kubernetes.io/instance-type` (EKS, GKE, AKS, OKE run the
# cloud's controller manager, which sets it) is the one node-label table's answer (providers.node_labels), which
# also refuses an instance type that is not a valid label value (a price-list name with spaces).
WELL_KNOWN_LABELS_URL = "https://kubernetes.io/docs/reference/labels-annotations-taints/#nodekubernetesioinstance-type"


@dataclass(frozen=True)
class Rdma:
    resource: str
    count: int
    source_url: str
    note: str


EFA_RESOURCE = "vpc.amazonaws.com/efa"
RDMA_RESOURCES = {
    "aws": Rdma(EFA_RESOURCE, 1, "https://docs.aws.amazon.com/eks/latest/userguide/device-management-efa.html",
                "EFA: raise vpc.amazonaws.com/efa to the instance's number of EFA interfaces to use them all."),
    "coreweave": Rdma("rdma/ib", 1, "https://docs.coreweave.com/products/networking/hpc-interconnect/use-gpudirect-rdma",
                      "InfiniBand: rdma/ib 1 schedules the pod on an InfiniBand node."),
}
# GKE's A3 machines reach other nodes at full bandwidth only through GPUDirect-TCPX/TCPXO, which needs GKE's
# multi-networking (Network and GKENetworkParamSet objects per GPU NIC) and the TCPX(O) daemon and sidecar: more than
# a resource request, so the manifest says what to add rather than wire half of it.
GKE_GPUDIRECT_URL = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx"
GKE_MULTINETWORK_URL = "https://cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods"
NEBIUS_FABRIC_LABEL = "topology.nebius.com/gpu-cluster-id"
NEBIUS_TOPOLOGY_URL = "https://docs.nebius.com/kubernetes/gpu/topology-aware-scheduling"


class _NoAliasDumper(yaml.SafeDumper):
    """Writes repeated label maps out in full: `&id001` anchors are valid YAML but puzzle people reading it."""

    def ignore_aliases(self, data):
        return True


@dataclass(frozen=True)
class Manifest:
    objects: tuple[dict, ...]
    yaml: str
    notes: tuple[str, ...] = ()


def memory_threshold_mib(memory_gb: Decimal) -> int:
    return int(memory_gb * 1024 * MEMORY_LABEL_TOLERANCE)


def device_plugin_sharing_config(mode: str, replicas: int) -> dict:
    """The device plugin's config for time-slicing or MPS: every GPU is advertised as `replicas` nvidia.com/gpu."""
    strategy = {TIME_SLICING: "timeSlicing", MPS: "mps"}[mode]
    return {"version": "v1", "sharing": {strategy: {"resources": [{"name": GPU_RESOURCE, "replicas": replicas}]}}}


def _gt(key: str, at_least: int) -> dict:
    # Gt compares the label as an integer; "at least N" is "greater than N - 1".
    return {"key": key, "operator": "Gt", "values": [str(at_least - 1)]}


@dataclass(frozen=True)
class _Target:
    """Where the chosen offer's pods go, and what they need there."""

    option: Option
    rdma: Rdma | None
    fabric_affinity: bool
    shares_per_gpu: int = 1  # pods sharing one GPU by time-slicing or MPS

    @property
    def offer(self):
        return self.option.offer

    @property
    def rdma_count(self) -> int:
        """How many of the RDMA resource a pod asks for: every EFA interface of the instance where its facts state
        them (EKS advertises one vpc.amazonaws.com/efa per interface), else the resource's documented count."""
        if self.rdma is not None and self.rdma.resource == EFA_RESOURCE and self.offer.efa_interfaces:
            return self.offer.efa_interfaces
        return self.rdma.count if self.rdma is not None else 0

    @property
    def provider_sharing(self) -> node_labels.GpuSharingLabels | None:
        """The provider's own GPU partitioning and sharing labels (GKE), or None: NVIDIA's device plugin and GFD."""
        return node_labels.gpu_sharing_labels(self.offer.provider_slug)

    @property
    def by_instance_type(self) -> bool:
        return node_labels.instance_type_label(self.offer.provider_slug, self.offer.instance_type,
                                               documented_only=True) is not None


def mig_profile(layout: ReplicaLayout) -> str:
    """The MIG profile of a layout sharing GPUs by MIG (its resource is the device plugin's
    `nvidia.com/mig-<profile>`)."""
    return layout.resource.removeprefix("nvidia.com/mig-")


def gpu_request(target: _Target, layout: ReplicaLayout) -> str:
    """The extended resource a pod asks for: a MIG slice is `nvidia.com/mig-<profile>` under the device plugin's mixed
    strategy, but a whole `nvidia.com/gpu` where the provider partitions the GPUs itself (GKE)."""
    if layout.shared == "mig" and target.provider_sharing is not None:
        return GPU_RESOURCE
    return layout.resource


def _placement(target: _Target, layout: ReplicaLayout) -> tuple[dict, list[dict]]:
    """(nodeSelector, node-affinity expressions) that put a pod on the chosen node type."""
    selector: dict[str, str] = {}
    expressions: list[dict] = []
    own = target.provider_sharing
    if layout.shared == "mig":
        if own is not None:
            selector[own.partition_label] = mig_profile(layout)
        else:
            selector[LABEL_MIG_STRATEGY] = "mixed"
    elif layout.shared in SHARING_STRATEGY_LABEL_VALUES:
        if own is not None:
            selector[own.strategy_label] = own.strategy_values[layout.shared]
            selector[own.clients_label] = str(target.shares_per_gpu)
        else:
            selector[LABEL_SHARING] = SHARING_STRATEGY_LABEL_VALUES[layout.shared]
    if target.by_instance_type:
        selector[LABEL_INSTANCE_TYPE] = target.offer.instance_type
    elif layout.resource == GPU_RESOURCE:
        memory = target.offer.memory_per_gpu_gb
        if memory:
            expressions.append(_gt(LABEL_MEMORY, memory_threshold_mib(memory)))
        if layout.gpus_per_pod > 1 and not layout.shared:
            expressions.append(_gt(LABEL_COUNT, layout.gpus_per_pod))
    return selector, expressions


# A pod asks for its GPUs' share of the machine's vCPUs and RAM, less this part, left to the kubelet, the system
# daemons and what the provider reserves on each node (EKS, GKE and AKS reserve CPU and memory on a sliding scale:
# https://kubernetes.io/docs/tasks/administer-cluster/reserve-compute-resources/).
HOST_RESERVE = Decimal("0.2")


def host_requests(target: _Target, layout: ReplicaLayout) -> dict[str, str]:
    """CPU and memory requests from the machine's host resources where the source states them (else none: the
    scheduler then places the pod by its GPUs alone)."""
    offer = target.offer
    if not offer.whole_gpus:
        return {}
    pods_per_gpu = 1
    if layout.shared == "mig" and offer.gpu is not None:
        pods_per_gpu = mig_instances_per_gpu(mig_profile(layout), offer.gpu.mig_profiles)
    elif layout.shared in SHARING_STRATEGY_LABEL_VALUES:
        pods_per_gpu = target.shares_per_gpu
    share = Decimal(layout.gpus_per_pod) / offer.whole_gpus / pods_per_gpu
    requests = {}
    if offer.vcpus:
        requests["cpu"] = str(max(1, int(offer.vcpus * share * (1 - HOST_RESERVE))))
    if offer.ram_gb:
        requests["memory"] = f"{max(1, int(offer.ram_gb * share * (1 - HOST_RESERVE)))}Gi"
    return requests


def _pod_spec(target: _Target, layout: ReplicaLayout, *, container: dict, restart_policy: str,
              rdma: bool, group_label: tuple[str, str] | None = None) -> dict:
    limits = {gpu_request(target, layout): str(layout.gpus_per_pod)}
    if rdma and target.rdma is not None:
        limits[target.rdma.resource] = str(target.rdma_count)
    resources: dict = {"limits": limits}
    requests = host_requests(target, layout)
    if requests:
        resources["requests"] = requests
    container = {**container, "resources": resources,
                 "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}
    vendor_key = layout.resource if layout.resource in (GPU_RESOURCE, "amd.com/gpu") else GPU_RESOURCE
    spec: dict = {
        "containers": [container],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
        "tolerations": [{"key": vendor_key, "operator": "Exists", "effect": "NoSchedule"}],
        "restartPolicy": restart_policy,
    }
    selector, expressions = _placement(target, layout)
    if selector:
        spec["nodeSelector"] = selector
    affinity: dict = {}
    if expressions:
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": expressions}]}}
    if rdma and target.fabric_affinity and group_label is not None:
        key, value = group_label
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {key: value}}, "topologyKey": NEBIUS_FABRIC_LABEL}]}
    if affinity:
        spec["affinity"] = affinity
    return spec


def served_model(layout: ReplicaLayout, precision: str) -> str:
    """The weights vLLM serves: the model's own for FP16/BF16; for a quantised precision a pre-quantised checkpoint
    of it, named as a placeholder to replace (vLLM reads the method from the checkpoint's config)."""
    checkpoint = VLLM["precision"].get(precision, {}).get("checkpoint")
    model = layout.hf_id or "REPLACE-ME/model"
    if not checkpoint:
        return model
    return f"REPLACE-ME/{model.rsplit('/', 1)[-1]}-{checkpoint}"


def engine_args(target: _Target, layout: ReplicaLayout, precision: str) -> list[str]:
    """--dtype (FP16 where the GPU has no BF16) and --gpu-memory-utilization (the sizing's 0.9, split between the
    pods that share a GPU by time-slicing or MPS: each vLLM would otherwise claim 90% of the same GPU)."""
    offer = target.offer
    dtype = "auto"
    if offer.gpu is not None and offer.gpu.vendor == "nvidia":
        gpu = compat.accelerator(offer.gpu.slug, offer.gpu.family)
        if compat.dtypes(gpu)["bf16"] == compat.NO:
            dtype = "half"
    utilisation = GPU_MEMORY_UTILISATION
    if layout.shared in SHARING_STRATEGY_LABEL_VALUES and target.shares_per_gpu > 1:
        utilisation = (utilisation / target.shares_per_gpu).quantize(Decimal("0.01"), ROUND_FLOOR)
    return ["--dtype", dtype, "--gpu-memory-utilization", str(utilisation)]


def _vllm_container(target: _Target, layout: ReplicaLayout, spec: WorkloadSpec, *,
                    command: list[str] | None = None) -> dict:
    image = VLLM_IMAGE if layout.resource != "amd.com/gpu" else IMAGE_PLACEHOLDER
    container: dict = {"name": "vllm", "image": image}
    if command is not None:
        container["command"] = command
    else:
        container["args"] = ["--model", served_model(layout, spec.precision), "--port", str(VLLM_PORT),
                             "--tensor-parallel-size", str(layout.gpus_per_pod if not layout.shared else 1),
                             "--max-model-len", str(spec.context_tokens),
                             *engine_args(target, layout, spec.precision)]
    # Gated models (Llama, Gemma) download only with a Hugging Face token; optional, so open models start without it.
    container["env"] = [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {
        "name": HF_TOKEN_SECRET, "key": "token", "optional": True}}}]
    container["ports"] = [{"name": "http", "containerPort": VLLM_PORT}]
    return container


def _readiness() -> dict:
    return {"httpGet": {"path": "/health", "port": VLLM_PORT}, "periodSeconds": 10, "failureThreshold": 3}


def _service(name: str, selector: dict[str, str]) -> dict:
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "labels": {APP_LABEL: name}},
        "spec": {"selector": selector, "ports": [{"name": "http", "port": VLLM_PORT, "targetPort": VLLM_PORT}]},
    }


def _deployment(target: _Target, layout: ReplicaLayout, spec: WorkloadSpec) -> list[dict]:
    labels = {APP_LABEL: layout.name}
    container = {**_vllm_container(target, layout, spec), "readinessProbe": _readiness()}
    pod = _pod_spec(target, layout, container=container, restart_policy="Always", rdma=False)
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": layout.name, "labels": labels},
        "spec": {"replicas": layout.replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": pod}},
    }
    return [deployment, _service(layout.name, labels)]


def _leader_worker_set(target: _Target, layout: ReplicaLayout, spec: WorkloadSpec) -> list[dict]:
    """One replica = one leader and `pods_per_replica - 1` workers, each pod on a whole node; tensor parallel inside
    a node, pipeline parallel across nodes, Ray joining them (LWS's vLLM example)."""
    group = ("leaderworkerset.sigs.k8s.io/name", layout.name)
    script = "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh"
    serve = (f"{script} leader --ray_cluster_size=$(LWS_GROUP_SIZE); python3 -m vllm.entrypoints.openai.api_server "
             f"--port {VLLM_PORT} --model {served_model(layout, spec.precision)} "
             f"--tensor-parallel-size {layout.gpus_per_pod} --pipeline-parallel-size {layout.pods_per_replica} "
             f"--max-model-len {spec.context_tokens} {' '.join(engine_args(target, layout, spec.precision))}")
    join = f"{script} worker --ray_address=$(LWS_LEADER_ADDRESS)"
    leader_container = {**_vllm_container(target, layout, spec, command=["sh", "-c", serve]),
                        "readinessProbe": _readiness()}
    worker_container = _vllm_container(target, layout, spec, command=["sh", "-c", join])
    leader = _pod_spec(target, layout, container=leader_container, restart_policy="Always", rdma=True,
                       group_label=group)
    worker = _pod_spec(target, layout, container=worker_container, restart_policy="Always", rdma=True,
                       group_label=group)
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
        "metadata": {"name": layout.name, "labels": {APP_LABEL: layout.name}},
        "spec": {
            "replicas": layout.replicas,
            "leaderWorkerTemplate": {
                "size": layout.pods_per_replica,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": {"metadata": {"labels": {"role": "leader"}}, "spec": leader},
                "workerTemplate": {"spec": worker},
            },
        },
    }
    return [lws, _service(layout.name, {group[0]: layout.name, "role": "leader"})]


def _inference_objects(spec: WorkloadSpec, target: _Target, plan: PackingPlan | None) -> list[dict]:
    objects: list[dict] = []
    if plan is not None and spec.sharing in (TIME_SLICING, MPS) and target.provider_sharing is None:
        replicas = plan.time_slicing_replicas if spec.sharing == TIME_SLICING else plan.mps_replicas
        objects.append({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": SHARING_CONFIGMAP, "namespace": "gpu-operator"},
            "data": {SHARING_CONFIG_KEY: yaml.safe_dump(device_plugin_sharing_config(spec.sharing, replicas),
                                                        sort_keys=False)},
        })
    for layout in target.option.layouts:
        objects += (_leader_worker_set(target, layout, spec) if layout.pods_per_replica > 1
                    else _deployment(target, layout, spec))
    return objects


def _training_objects(spec: WorkloadSpec, target: _Target) -> list[dict]:
    (layout,) = target.option.layouts
    name, job = "training", "workers"
    env = [
        {"name": "MASTER_ADDR", "value": f"{name}-{job}-0-0.{name}"},
        {"name": "MASTER_PORT", "value": str(RENDEZVOUS_PORT)},
        {"name": "NNODES", "value": str(layout.replicas)},
        {"name": "NPROC_PER_NODE", "value": str(layout.gpus_per_pod)},
        {"name": "NODE_RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
    ]
    container = {
        "name": "trainer", "image": IMAGE_PLACEHOLDER,
        "command": ["torchrun", "--nnodes=$(NNODES)", "--nproc-per-node=$(NPROC_PER_NODE)",
                    "--node-rank=$(NODE_RANK)", "--master-addr=$(MASTER_ADDR)", "--master-port=$(MASTER_PORT)",
                    "train.py"],
        "env": env,
        "ports": [{"name": "rendezvous", "containerPort": RENDEZVOUS_PORT}],
    }
    multi = layout.replicas > 1
    pod = _pod_spec(target, layout, container=container, restart_policy="Never", rdma=multi,
                    group_label=("jobset.sigs.k8s.io/jobset-name", name))
    labels = {APP_LABEL: name}
    if spec.kueue_queue:
        labels[LABEL_QUEUE] = spec.kueue_queue
    return [{
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "network": {"enableDNSHostnames": True},
            "replicatedJobs": [{"name": job, "replicas": 1, "template": {"spec": {
                "parallelism": layout.replicas, "completions": layout.replicas, "completionMode": "Indexed",
                "backoffLimit": 0, "template": {"spec": pod}}}}],
        },
    }]


def _batch_objects(spec: WorkloadSpec, target: _Target) -> list[dict]:
    (layout,) = target.option.layouts
    container = {"name": "worker", "image": IMAGE_PLACEHOLDER}
    pod = _pod_spec(target, layout, container=container, restart_policy="Never", rdma=False)
    labels = {APP_LABEL: "batch"}
    if spec.kueue_queue:
        labels[LABEL_QUEUE] = spec.kueue_queue
    return [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "labels": labels},
             "spec": {"completions": layout.replicas, "parallelism": layout.replicas,
                      "template": {"metadata": {"labels": {APP_LABEL: "batch"}}, "spec": pod}}}]


def _notes(spec: WorkloadSpec, target: _Target, objects: list[dict]) -> list[str]:
    offer = target.offer
    notes = [f"Starter manifest for {offer.provider_name} {offer.instance_type} ({offer.region}); review before "
             "applying."]
    kinds = {obj["kind"] for obj in objects}
    if kinds & {"Deployment", "LeaderWorkerSet"}:
        notes.append(f"vLLM {VLLM['version']} ({VLLM_IMAGE}); its flags as documented for that release.")
        quantised = VLLM["precision"].get(spec.precision, {})
        if quantised.get("checkpoint"):
            notes.append(f"{quantised['method']}: replace the REPLACE-ME model with a pre-quantised "
                         f"{quantised['checkpoint']} checkpoint of the model (vLLM reads its quantisation from the "
                         "checkpoint's config); quantising online first loads the 16-bit weights, which the GPUs "
                         f"sized here cannot hold ({quantised['source']}).")
        notes.append(f"Gated models need a Hugging Face token: kubectl create secret generic {HF_TOKEN_SECRET} "
                     f"--from-literal=token=<your token> (read as HF_TOKEN: {HF_TOKEN_URL}).")
    if "LeaderWorkerSet" in kinds:
        notes.append("Needs the LeaderWorkerSet controller: https://lws.sigs.k8s.io/docs/installation/")
    if "JobSet" in kinds:
        notes.append("Needs the JobSet controller: https://jobset.sigs.k8s.io/docs/installation/")
    if spec.kueue_queue:
        notes.append(f"Kueue admits it through the LocalQueue {spec.kueue_queue}.")
    own = target.provider_sharing
    if own is not None and spec.sharing in ("mig", *SHARING_STRATEGY_LABEL_VALUES):
        notes.append(_provider_sharing_note(spec, target, own))
    if target.by_instance_type:
        notes.append(f"Nodes: {LABEL_INSTANCE_TYPE} ({WELL_KNOWN_LABELS_URL}).")
    elif any(layout.resource == GPU_RESOURCE or layout.shared for layout in target.option.layouts):
        notes.append(f"Nodes: by the labels NVIDIA GPU Feature Discovery sets ({LABEL_MEMORY}, {LABEL_COUNT}; the "
                     "GPU Operator installs GFD). Check that your nodes carry them (kubectl get nodes --show-labels); "
                     f"where {offer.provider_name} runs the GPU software itself and its nodes do not, select its own "
                     "node labels instead.")
    else:
        notes.append(f"Nodes: not selected by label: {offer.provider_name} documents no node label naming this "
                     "machine type that we found, so the pods go to any node with free GPUs of their resource; add "
                     "a nodeSelector for the node pool you create.")
    spans_nodes = (spec.kind == TRAINING and spec.nodes > 1) or any(
        layout.pods_per_replica > 1 for layout in target.option.layouts)
    if spans_nodes:
        if target.rdma is not None and target.rdma_count != target.rdma.count:
            notes.append(f"RDMA: {EFA_RESOURCE} {target.rdma_count}, every EFA interface of {offer.instance_type} "
                         f"({target.rdma.source_url}).")
        elif target.rdma is not None:
            notes.append(f"RDMA: {target.rdma.note} ({target.rdma.source_url})")
        elif offer.provider_slug == "gcp":
            notes.append("Fabric: on GKE, pods on A3 machines talk across nodes at full bandwidth only through "
                         f"GPUDirect-TCPX/TCPXO ({GKE_GPUDIRECT_URL}), which needs GKE multi-networking "
                         f"({GKE_MULTINETWORK_URL}) and the TCPX(O) daemon and sidecar: add them to these pods; "
                         "without them NCCL falls back to the primary network.")
        elif target.fabric_affinity:
            notes.append(f"RDMA: pods kept on one InfiniBand fabric by {NEBIUS_FABRIC_LABEL} ({NEBIUS_TOPOLOGY_URL}).")
        else:
            notes.append(f"RDMA: {offer.provider_name} documents no Kubernetes resource name for its fabric that we "
                         "found; add its device plugin's resource here.")
    return notes


def _provider_sharing_note(spec: WorkloadSpec, target: _Target, own: node_labels.GpuSharingLabels) -> str:
    """How to create the node pool whose partitioned or shared GPUs the pods select (GKE sets it per pool)."""
    accelerator = node_labels.accelerator_label(target.offer.provider_slug, target.offer.instance_type)
    gpu_type = accelerator[1] if accelerator else "<gpu type>"
    count = target.offer.whole_gpus or "<gpus>"
    partition_url, sharing_url, mps_url = own.source_urls
    if spec.sharing == "mig":
        sizes = sorted({mig_profile(layout) for layout in target.option.layouts if layout.shared})
        mixed = (" The packing above may put two sizes on one GPU, which one pool cannot: count a pool's GPUs per "
                 "size." if len(sizes) > 1 else "")
        return (f"GPU partitions: {target.offer.provider_name} partitions GPUs per node pool, one size a pool; the "
                f"pods select {own.partition_label} and ask for {GPU_RESOURCE}: 1. Create a pool per size "
                f"({', '.join(sizes)}): --accelerator type={gpu_type},count={count},gpu-partition-size=<size> "
                f"({partition_url}).{mixed}")
    value = own.strategy_values[spec.sharing]
    return (f"GPU sharing: {target.offer.provider_name} shares GPUs per node pool (no device-plugin ConfigMap); the "
            f"pods select {own.strategy_label}={value} and {own.clients_label}={target.shares_per_gpu}. Create the "
            f"pool with --accelerator type={gpu_type},count={count},gpu-sharing-strategy={value},"
            f"max-shared-clients-per-gpu={target.shares_per_gpu} ({mps_url if spec.sharing == MPS else sharing_url}).")


def build_manifest(spec: WorkloadSpec, option: Option, plan: PackingPlan | None) -> Manifest | None:
    """Deployments and Services (or LeaderWorkerSets) for inference, a JobSet for training, a Job for batch, each
    pod asking for the GPUs its layout has on the chosen node type; None for a notebook, which does not need
    Kubernetes."""
    shares = 1
    if plan is not None and spec.sharing in SHARING_STRATEGY_LABEL_VALUES:
        shares = plan.time_slicing_replicas if spec.sharing == TIME_SLICING else plan.mps_replicas
    target = _Target(option, RDMA_RESOURCES.get(option.offer.provider_slug),
                     fabric_affinity=option.offer.provider_slug == "nebius", shares_per_gpu=max(1, shares))
    if spec.kind == INFERENCE:
        objects = _inference_objects(spec, target, plan)
    elif spec.kind == TRAINING:
        objects = _training_objects(spec, target)
    elif spec.kind == BATCH:
        objects = _batch_objects(spec, target)
    else:
        return None
    # MIG needs no object of ours: the node's MIG layout is set by the GPU Operator's MIG manager (or the provider),
    # and the pods above only ask for the profile resources it advertises.
    notes = _notes(spec, target, objects)
    header = "".join(f"# {note}\n" for note in notes)
    return Manifest(tuple(objects), header + yaml.dump_all(objects, Dumper=_NoAliasDumper, sort_keys=False),
                    tuple(notes))
