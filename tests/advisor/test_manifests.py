"""Starter manifests: valid against the Kubernetes OpenAPI schema (strict: no unknown fields) and, for JobSet and
LeaderWorkerSet, against their CRDs' schemas (bundled in tests/advisor/crds/, see its README), for every workload
kind and sharing mode; every pod asks for GPUs that fit on the chosen node type and lands on that node type.

The Kubernetes schemas ship inside the `kubernetes-validate` package, so validation needs no network.
"""

import gzip
from decimal import Decimal as D
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from advisor import engine
from advisor.manifests import build_manifest
from advisor.types import Cell, GpuData, ModelNeed, OfferData, WorkloadSpec

# The oldest Kubernetes minor still broadly offered by managed services when this was written; the manifests use
# only long-stable fields, so validating against one version is enough.
K8S_VERSION = "1.33.0"
CRDS = Path(__file__).parent / "crds"
H100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80),
               mig_profiles=("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"))
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
YES = {key: Cell(key, "yes") for key in ("mig", "time_slicing", "mps", "infiniband", "efa")}
CELLS = {"offering": Cell("offering", "managed"), "control_plane_fee": Cell("control_plane_fee", "free"),
         **YES}


def _strict(schema):
    """Reject unknown fields, as `kubectl apply --validate=strict` does, where the schema lists its properties."""
    if isinstance(schema, dict):
        if "properties" in schema and "additionalProperties" not in schema \
                and not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema["additionalProperties"] = False
        for value in schema.values():
            _strict(value)
    elif isinstance(schema, list):
        for value in schema:
            _strict(value)
    return schema


def _crd_validator(filename):
    with gzip.open(CRDS / filename, "rt") as handle:
        crd = yaml.safe_load(handle)
    (version,) = [v for v in crd["spec"]["versions"] if v["storage"]]
    schema = _strict(version["schema"]["openAPIV3Schema"])
    # metadata is an ObjectMeta, validated by the API server, not by the CRD's schema
    schema["properties"]["metadata"] = {"type": "object"}
    return f"{crd['spec']['group']}/{version['name']}", jsonschema.Draft7Validator(schema)


CRD_VALIDATORS = dict(_crd_validator(name) for name in (
    "jobset.x-k8s.io_jobsets.yaml.gz", "leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz"))


def validate(obj):
    validator = CRD_VALIDATORS.get(obj["apiVersion"])
    if validator is None:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    else:
        validator.validate(obj)


def offer_for(provider="p", gpus="8", instance="gpu-8x", gpu=H100):
    return OfferData(id=1, provider_slug=provider, provider_name=provider.upper(), instance_type=instance, region="r",
                     gpu_count=D(gpus), price_hour_usd=D("10"), gpu=gpu)


def advice_for(spec: WorkloadSpec, offer=None):
    offer = offer or offer_for()
    advice = engine.advise(spec, offers=[offer], cells={offer.provider_slug: CELLS}, per_eur={})
    assert advice.chosen is not None, "the offer should hold the workload"
    return advice


def manifest_for(spec: WorkloadSpec, offer=None):
    advice = advice_for(spec, offer)
    return build_manifest(spec, advice.chosen, advice.packing)


def assert_valid(manifest):
    assert manifest.objects
    for obj in manifest.objects:
        validate(obj)
    # The YAML a user copies is the same documents.
    assert [doc for doc in yaml.safe_load_all(manifest.yaml)] == list(manifest.objects)


def pod_specs(obj):
    """Every pod template of a Deployment, Job, JobSet or LeaderWorkerSet."""
    if obj["kind"] in ("Deployment", "Job"):
        return [obj["spec"]["template"]["spec"]]
    if obj["kind"] == "JobSet":
        return [job["template"]["spec"]["template"]["spec"] for job in obj["spec"]["replicatedJobs"]]
    if obj["kind"] == "LeaderWorkerSet":
        template = obj["spec"]["leaderWorkerTemplate"]
        return [template["leaderTemplate"]["spec"], template["workerTemplate"]["spec"]]
    return []


def pod(obj):
    (spec,) = pod_specs(obj)
    return spec


def limits(pod_spec):
    return pod_spec["containers"][0]["resources"]["limits"]


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
    "inference_70b": WorkloadSpec(kind="inference", model="llama-3.1-70b", replicas=2),
    "inference_405b_multi_node": WorkloadSpec(kind="inference", model="llama-3.1-405b", multi_node=True),
    "training": WorkloadSpec(kind="training", gpu="h100", gpus_per_node=8, nodes=4, kueue_queue="team-a"),
    "batch": WorkloadSpec(kind="batch", gpu="h100", gpus_per_node=1, nodes=5),
}
OFFERS = {
    "generic": offer_for(),
    "aws": offer_for("aws", instance="p5.48xlarge"),
    "nebius": offer_for("nebius", instance="gpu-h100-sxm_8gpu-128vcpu-1600gb"),
    "coreweave": offer_for("coreweave", instance="gd-8xh100ib-i128"),
}


@pytest.mark.parametrize("provider", OFFERS)
@pytest.mark.parametrize("name", SPECS)
def test_every_manifest_is_schema_valid_and_each_pod_fits_on_the_chosen_node_type(name, provider):
    offer = OFFERS[provider]
    advice = advice_for(SPECS[name], offer)
    manifest = build_manifest(SPECS[name], advice.chosen, advice.packing)
    assert_valid(manifest)
    pods = [spec for obj in manifest.objects for spec in pod_specs(obj)]
    assert pods
    for spec in pods:
        gpu_limits = {k: int(v) for k, v in limits(spec).items() if k.startswith("nvidia.com/")}
        assert sum(gpu_limits.values()) <= offer.whole_gpus  # never more GPUs than the node type has
        assert spec["tolerations"] == [GPU_TOLERATION]
        assert {"name": "dshm", "mountPath": "/dev/shm"} in spec["containers"][0]["volumeMounts"]
        assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in spec["volumes"]
        if provider == "aws":
            assert spec["nodeSelector"]["node.kubernetes.io/instance-type"] == "p5.48xlarge"
    requested = sorted(int(limits(s).get("nvidia.com/gpu", 0)) for s in pods)
    expected = sorted(layout.gpus_per_pod for layout in advice.chosen.layouts if not layout.shared
                      for _pod in range(2 if layout.pods_per_replica > 1 else 1))
    if not any(layout.shared for layout in advice.chosen.layouts):
        assert requested == expected  # each pod asks for exactly its replica's GPUs


def test_schema_validation_would_catch_a_broken_manifest():
    broken = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"},
              "spec": {"template": {"spec": {"containers": [{"name": "x", "image": "i", "gpus": 1}]}}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)
    (jobset,) = manifest_for(SPECS["training"]).objects
    jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["gpus"] = 1
    with pytest.raises(jsonschema.ValidationError):
        validate(jobset)
    (lws, _service) = manifest_for(SPECS["inference_405b_multi_node"]).objects
    lws["spec"]["leaderWorkerTemplate"]["sise"] = 2
    with pytest.raises(jsonschema.ValidationError):
        validate(lws)


def test_inference_without_models_is_one_deployment_per_node_of_gpus_and_a_service():
    deployment, service = manifest_for(SPECS["inference"]).objects
    assert (deployment["kind"], deployment["spec"]["replicas"]) == ("Deployment", 3)
    assert limits(pod(deployment)) == {"nvidia.com/gpu": "2"}
    # 80 GB x 1024 x 0.9 = 73728 MiB at least, i.e. greater than 73727 (no instance-type label for this provider)
    assert expressions(pod(deployment))["nvidia.com/gpu.memory"] == ("Gt", ["73727"])
    assert service["kind"] == "Service"
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    probe = pod(deployment)["containers"][0]["readinessProbe"]
    assert probe["httpGet"] == {"path": "/health", "port": 8000}


def test_70b_inference_asks_for_two_gpus_per_replica_on_the_node_type_that_has_them():
    # 70.6 B x 2 bytes = 141.2 GB; KV 2 x 80 x 8 x 128 x 2 x 8192 = 2.7 GB; (141.2 + 2.7) / 0.9 = 159.9 GB -> 2 x 80 GB
    advice = advice_for(SPECS["inference_70b"], OFFERS["aws"])
    (layout,) = advice.chosen.layouts
    assert (layout.replicas, layout.gpus_per_pod, layout.pods_per_replica) == (2, 2, 1)
    assert (advice.chosen.gpus_needed, advice.chosen.cost.instances) == (4, 1)  # both replicas on one 8-GPU node
    deployment, _service = build_manifest(SPECS["inference_70b"], advice.chosen, advice.packing).objects
    container = pod(deployment)["containers"][0]
    assert container["args"][:2] == ["--model", "meta-llama/Llama-3.1-70B-Instruct"]
    assert container["args"][4:6] == ["--tensor-parallel-size", "2"]
    # the context the sizing above assumed, not the model's default 131,072 tokens, which would not fit
    args = container["args"]
    assert args[args.index("--max-model-len") + 1] == str(SPECS["inference_70b"].context_tokens)
    assert limits(pod(deployment)) == {"nvidia.com/gpu": "2"}
    assert pod(deployment)["nodeSelector"] == {"node.kubernetes.io/instance-type": "p5.48xlarge"}


def test_a_replica_across_nodes_is_a_leader_worker_set_with_rdma_where_documented():
    # 405.9 B x 2 = 811.8 GB + KV 2 x 126 x 8 x 128 x 2 x 8192 = 4.2 GB -> 906.7 GB: two 8 x 80 GB nodes
    lws, service = manifest_for(SPECS["inference_405b_multi_node"], OFFERS["aws"]).objects
    assert lws["kind"] == "LeaderWorkerSet"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    leader, worker = pod_specs(lws)
    assert limits(leader) == limits(worker) == {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "1"}
    assert "--pipeline-parallel-size 2" in leader["containers"][0]["command"][-1]
    assert "$(LWS_LEADER_ADDRESS)" in worker["containers"][0]["command"][-1]
    assert service["spec"]["selector"] == {"leaderworkerset.sigs.k8s.io/name": "llama-3.1-405b", "role": "leader"}


def test_an_aws_pod_across_nodes_asks_for_every_efa_interface_the_instance_has():
    # EKS advertises one vpc.amazonaws.com/efa per interface; p5.48xlarge has 32 (its instance facts): asking for 1
    # would use one of them. Without the fact, 1 and a note saying to raise it.
    from dataclasses import replace

    known = replace(OFFERS["aws"], efa_interfaces=32)
    manifest = manifest_for(SPECS["training"], known)
    (spec,) = pod_specs(manifest.objects[0])
    assert limits(spec)["vpc.amazonaws.com/efa"] == "32"
    assert any(n.startswith("RDMA: vpc.amazonaws.com/efa 32, every EFA interface of p5.48xlarge")
               for n in manifest.notes)
    unknown = manifest_for(SPECS["training"], OFFERS["aws"])
    (spec,) = pod_specs(unknown.objects[0])
    assert limits(spec)["vpc.amazonaws.com/efa"] == "1"
    assert any("raise vpc.amazonaws.com/efa" in n for n in unknown.notes)


def test_training_is_a_jobset_with_rendezvous_rdma_and_an_optional_kueue_queue():
    (jobset,) = manifest_for(SPECS["training"], OFFERS["coreweave"]).objects
    assert (jobset["kind"], jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]) == ("JobSet", "team-a")
    (replicated,) = jobset["spec"]["replicatedJobs"]
    job = replicated["template"]["spec"]
    assert (job["completions"], job["parallelism"], job["completionMode"]) == (4, 4, "Indexed")
    spec = job["template"]["spec"]
    assert limits(spec) == {"nvidia.com/gpu": "8", "rdma/ib": "1"}
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in spec["containers"][0]["env"]}
    assert env["MASTER_ADDR"] == "training-workers-0-0.training"  # JobSet's pod hostname under its headless Service
    assert env["NNODES"] == "4" and env["NPROC_PER_NODE"] == "8"
    assert env["NODE_RANK"] == {"fieldRef": {
        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
    assert spec["restartPolicy"] == "Never"


def test_training_on_nebius_keeps_the_workers_on_one_infiniband_fabric():
    (jobset,) = manifest_for(SPECS["training"], OFFERS["nebius"]).objects
    (spec,) = pod_specs(jobset)
    (term,) = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "topology.nebius.com/gpu-cluster-id"
    assert term["labelSelector"] == {"matchLabels": {"jobset.sigs.k8s.io/jobset-name": "training"}}


def test_training_elsewhere_says_the_rdma_resource_is_not_documented():
    manifest = manifest_for(SPECS["training"], OFFERS["generic"])
    assert any(note.startswith("RDMA:") and "no Kubernetes resource name" in note for note in manifest.notes)
    (spec,) = pod_specs(manifest.objects[0])
    assert limits(spec) == {"nvidia.com/gpu": "8"}


def test_mig_manifest_requests_the_mixed_strategy_profile_resources():
    objects = manifest_for(SPECS["inference_mig"]).objects
    deployments = [o for o in objects if o["kind"] == "Deployment"]
    assert [d["spec"]["replicas"] for d in deployments] == [6, 2]
    assert [limits(pod(d)) for d in deployments] == [{"nvidia.com/mig-1g.10gb": "1"}, {"nvidia.com/mig-3g.40gb": "1"}]
    assert all(pod(d)["nodeSelector"] == {"nvidia.com/mig.strategy": "mixed"} for d in deployments)


@pytest.mark.parametrize("name, strategy, label, replicas", [
    ("inference_time_slicing", "timeSlicing", "time-slicing", 5),  # 35 + 35 + 9 | 9 x 5 -> at most 5 per GPU
    ("inference_mps", "mps", "mps", 2),  # floor(80 / 35)
])
def test_shared_gpu_manifest_carries_the_device_plugin_sharing_config(name, strategy, label, replicas):
    config_map, *objects = manifest_for(SPECS[name]).objects
    assert config_map["kind"] == "ConfigMap"
    (config,) = [yaml.safe_load(text) for text in config_map["data"].values()]
    assert config == {"version": "v1", "sharing": {strategy: {"resources": [
        {"name": "nvidia.com/gpu", "replicas": replicas}]}}}
    for deployment in (o for o in objects if o["kind"] == "Deployment"):
        assert limits(pod(deployment)) == {"nvidia.com/gpu": "1"}
        assert pod(deployment)["nodeSelector"] == {"nvidia.com/gpu.sharing-strategy": label}


def test_on_gke_mig_pods_select_the_node_pools_partition_size_and_ask_for_whole_gpus():
    # GKE partitions a node pool's GPUs itself: a partition is a plain nvidia.com/gpu, the pool labelled with its
    # size (providers/data/node_labels.toml, gcp.gpu_sharing); GFD's mig.strategy label is not on its nodes.
    manifest = manifest_for(SPECS["inference_mig"], offer_for("gcp", instance="a3-highgpu-8g"))
    assert_valid(manifest)
    deployments = [o for o in manifest.objects if o["kind"] == "Deployment"]
    assert [limits(pod(d)) for d in deployments] == [{"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"}]
    assert [pod(d)["nodeSelector"] for d in deployments] == [
        {"cloud.google.com/gke-gpu-partition-size": "1g.10gb", "node.kubernetes.io/instance-type": "a3-highgpu-8g"},
        {"cloud.google.com/gke-gpu-partition-size": "3g.40gb", "node.kubernetes.io/instance-type": "a3-highgpu-8g"}]
    (note,) = [n for n in manifest.notes if n.startswith("GPU partitions:")]
    assert "type=nvidia-h100-80gb,count=8,gpu-partition-size=<size>" in note and "1g.10gb, 3g.40gb" in note


@pytest.mark.parametrize("name, value, clients", [("inference_time_slicing", "time-sharing", "5"),
                                                  ("inference_mps", "mps", "2")])
def test_on_gke_shared_gpus_are_the_node_pools_setting_not_a_device_plugin_config(name, value, clients):
    manifest = manifest_for(SPECS[name], offer_for("gcp", instance="a3-highgpu-8g"))
    assert_valid(manifest)
    assert "ConfigMap" not in {o["kind"] for o in manifest.objects}  # GKE installs and configures the plugin
    for deployment in (o for o in manifest.objects if o["kind"] == "Deployment"):
        assert limits(pod(deployment)) == {"nvidia.com/gpu": "1"}
        assert pod(deployment)["nodeSelector"] == {
            "cloud.google.com/gke-gpu-sharing-strategy": value,
            "cloud.google.com/gke-max-shared-clients-per-gpu": clients,
            "node.kubernetes.io/instance-type": "a3-highgpu-8g"}
    (note,) = [n for n in manifest.notes if n.startswith("GPU sharing:")]
    assert f"gpu-sharing-strategy={value},max-shared-clients-per-gpu={clients}" in note


def test_the_node_note_never_tells_a_provider_that_runs_the_gpu_software_to_install_the_gpu_operator():
    # CoreWeave says not to install the GPU Operator on CKS; an AMD machine has no NVIDIA labels to select at all.
    note = next(n for n in manifest_for(SPECS["training"], OFFERS["coreweave"]).notes if n.startswith("Nodes:"))
    assert "GPU Feature Discovery" in note and "kubectl get nodes --show-labels" in note
    assert "install the GPU Operator" not in note
    mi300x = GpuData(slug="mi300x", name="AMD Instinct MI300X", memory_gb=D(192), vendor="amd")
    manifest = manifest_for(SPECS["batch"], offer_for("crusoe", gpus="8", instance="mi300x.8x", gpu=mi300x))
    (spec,) = pod_specs(manifest.objects[0])
    assert limits(spec) == {"amd.com/gpu": "1"} and "affinity" not in spec and "nodeSelector" not in spec
    (note,) = [n for n in manifest.notes if n.startswith("Nodes:")]
    assert note.startswith("Nodes: not selected by label") and "Feature Discovery" not in note


def test_batch_is_a_plain_parallel_job():
    (job,) = manifest_for(SPECS["batch"]).objects
    assert (job["kind"], job["spec"]["parallelism"]) == ("Job", 5)
    assert "completionMode" not in job["spec"]


def test_notebook_gets_no_manifest():
    assert manifest_for(WorkloadSpec(kind="notebook", gpu="h100")) is None


def test_an_instance_type_that_is_no_valid_label_value_selects_nodes_by_gfd_labels_instead():
    # OCI's price list names shapes with spaces ("BM.GPU H100.8"): no node carries that label value (the node-label
    # table, providers.node_labels, refuses it), so the pods select by the GPU Feature Discovery labels.
    advice = advice_for(SPECS["inference_70b"], offer_for(provider="oci", instance="BM.GPU H100.8"))
    deployment, _service = build_manifest(SPECS["inference_70b"], advice.chosen, advice.packing).objects
    assert "nodeSelector" not in pod(deployment) or "node.kubernetes.io/instance-type" not in pod(deployment)[
        "nodeSelector"]
    assert "nvidia.com/gpu.memory" in expressions(pod(deployment))
    validate(deployment)


def _flags(container):
    words = container.get("args") or container["command"][-1].split()
    return {word for word in words if word.startswith("--") and "=" not in word}


def test_every_vllm_flag_emitted_is_documented_for_the_pinned_release():
    from advisor.manifests import VLLM
    assert VLLM["image"] == f"vllm/vllm-openai:v{VLLM['version']}"
    seen = set()
    for name in ("inference", "inference_70b", "inference_405b_multi_node"):
        offer = OFFERS["aws"] if name != "inference" else None
        for obj in manifest_for(SPECS[name], offer).objects:
            for pod_spec in pod_specs(obj) if obj["kind"] != "Service" else ():
                container = pod_spec["containers"][0]
                assert container["image"] == VLLM["image"]
                if "args" in container or "api_server" in container["command"][-1]:
                    seen |= _flags(container)
    assert "--max-model-len" in seen
    assert seen <= set(VLLM["flags"]), seen - set(VLLM["flags"])


def test_70b_manifest_context_fits_the_gpu_memory_it_asks_for():
    from advisor.sizing import BYTES_PER_PARAMETER, GB, GPU_MEMORY_UTILISATION, MODEL_CARDS, kv_cache_bytes
    spec = SPECS["inference_70b"]
    deployment, _service = manifest_for(spec, OFFERS["aws"]).objects
    args = pod(deployment)["containers"][0]["args"]
    context = int(args[args.index("--max-model-len") + 1])
    gpus = int(args[args.index("--tensor-parallel-size") + 1])
    assert limits(pod(deployment))["nvidia.com/gpu"] == str(gpus)
    card = MODEL_CARDS["llama-3.1-70b"]
    weights = card.parameters_b * 10**9 * BYTES_PER_PARAMETER[spec.precision]
    needed = (weights + kv_cache_bytes(card, context * spec.concurrency)) / GPU_MEMORY_UTILISATION
    assert needed <= gpus * H100.memory_gb * GB
    # the model's default 131,072-token context would not fit on those GPUs: the flag is what makes it start
    default = (weights + kv_cache_bytes(card, 131072 * spec.concurrency)) / GPU_MEMORY_UTILISATION
    assert default > gpus * H100.memory_gb * GB


def test_vllm_reads_the_hugging_face_token_from_the_secret_the_notes_create():
    manifest = manifest_for(SPECS["inference_70b"], OFFERS["aws"])
    (env,) = pod(manifest.objects[0])["containers"][0]["env"]
    ref = env["valueFrom"]["secretKeyRef"]
    assert env["name"] == "HF_TOKEN"
    assert any(f"kubectl create secret generic {ref['name']} --from-literal={ref['key']}=" in note
               for note in manifest.notes)


def test_training_across_gke_a3_nodes_says_gpudirect_tcpx_needs_multi_networking():
    # GKE has no RDMA resource to request: a manifest that said "none documented" would hide that A3 machines need
    # GPUDirect-TCPX(O) and multi-networking to reach each other at full bandwidth.
    manifest = manifest_for(SPECS["training"], offer_for("gcp", instance="a3-megagpu-8g"))
    (fabric,) = [note for note in manifest.notes if note.startswith(("Fabric:", "RDMA:"))]
    assert "GPUDirect-TCPX" in fabric and "multi-networking" in fabric
    assert "setup-multinetwork-support-for-pods" in fabric
