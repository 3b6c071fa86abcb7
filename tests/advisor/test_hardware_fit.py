"""Issue #39 items 1-3: the hardware the software needs, read from data (advisor/data/vllm.toml for the pinned vLLM
release, nodesoftware/data/cuda.toml for compute capabilities, node_images.toml for the node's driver), and the
arguments and host requests the manifests carry because of it."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from advisor import engine
from advisor.manifests import VLLM, build_manifest
from advisor.types import GpuData, ModelNeed, WorkloadSpec

from .test_engine import MANAGED_PAID, offer

V100 = GpuData(slug="v100", name="NVIDIA V100", memory_gb=D(32))
T4 = GpuData(slug="t4", name="NVIDIA T4", memory_gb=D(16))
A100 = GpuData(slug="a100-80gb", name="NVIDIA A100 80GB", memory_gb=D(80))
L40S = GpuData(slug="l40s", name="NVIDIA L40S", memory_gb=D(48))
H100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80))


def advise(spec, offers, provider="p"):
    return engine.advise(spec, offers=offers, cells={provider: MANAGED_PAID}, per_eur={})


def args_of(advice, spec):
    deployment = build_manifest(spec, advice.chosen, advice.packing).objects[0]
    return deployment["spec"]["template"]["spec"]["containers"][0]


def flag(container, name):
    args = container["args"]
    return args[args.index(name) + 1]


@pytest.mark.parametrize("precision, kept, left_out", [
    # FP8: W8A8 from Ada (8.9), weight-only through Marlin on Ampere (8.0), nothing below (vLLM's FP8 page).
    ("fp8", {"a100-80gb", "l40s", "h100"}, {"v100", "t4"}),
    # INT8 W8A8 from Turing (7.5); GPTQ 4-bit from Volta (7.0) (vLLM's supported-hardware table).
    ("int8", {"t4", "a100-80gb", "l40s", "h100"}, {"v100"}),
    ("int4", {"v100", "t4", "a100-80gb", "l40s", "h100"}, set()),
    ("fp16", {"v100", "t4", "a100-80gb", "l40s", "h100"}, set()),
])
def test_a_quantised_precision_leaves_out_the_gpus_its_kernels_do_not_run_on(precision, kept, left_out):
    gpus = [V100, T4, A100, L40S, H100]
    offers = [offer(n, gpu=gpu, gpus="4", price=str(n)) for n, gpu in enumerate(gpus, start=1)]
    spec = WorkloadSpec(kind="inference", model="llama-3.1-8b", precision=precision)
    advice = advise(spec, offers)
    ranked = {o.offer.gpu.slug for o in advice.options + advice.unverified}
    assert ranked == kept
    assert advice.excluded_missing.get("precision_gpu", 0) == len(left_out)


def test_fp8_training_needs_a_gpu_with_fp8():
    offers = [offer(1, gpu=A100, gpus="8"), offer(2, gpu=H100, gpus="8", price="3")]
    advice = advise(WorkloadSpec(kind="training", gpu="", gpus_per_node=8, nodes=1, precision="fp8"), offers)
    assert [o.offer.gpu.slug for o in advice.options + advice.unverified] == ["h100"]
    assert advice.excluded_missing == {"precision_gpu": 1}


def test_a_quantised_precision_serves_a_pre_quantised_checkpoint_and_says_why():
    spec = WorkloadSpec(kind="inference", model="llama-3.1-8b", precision="fp8")
    advice = advise(spec, [offer(1, gpu=H100)])
    container = args_of(advice, spec)
    assert flag(container, "--model") == "REPLACE-ME/Llama-3.1-8B-Instruct-FP8"
    notes = build_manifest(spec, advice.chosen, advice.packing).notes
    assert any("pre-quantised FP8 checkpoint" in note and VLLM["precision"]["fp8"]["source"] in note
               for note in notes)
    # FP16 serves the model's own weights.
    plain = WorkloadSpec(kind="inference", model="llama-3.1-8b")
    assert flag(args_of(advise(plain, [offer(1, gpu=H100)]), plain), "--model") == "meta-llama/Llama-3.1-8B-Instruct"


def test_dtype_is_half_where_the_gpu_has_no_bf16():
    spec = WorkloadSpec(kind="inference", model="llama-3.1-8b")
    assert flag(args_of(advise(spec, [offer(1, gpu=T4, gpus="2")]), spec), "--dtype") == "half"  # 7.5 < 8.0
    assert flag(args_of(advise(spec, [offer(1, gpu=H100)]), spec), "--dtype") == "auto"


@pytest.mark.parametrize("sharing", ["time_slicing", "mps", "whole"])
def test_pods_sharing_a_gpu_split_the_memory_vllm_claims(sharing):
    # 35 + 35 + 9 GB models on an 80 GB GPU: each vLLM would otherwise claim 90% of the same GPU.
    models = (ModelNeed(2, D(35)), ModelNeed(1, D(9)))
    spec = WorkloadSpec(kind="inference", models=models, sharing=sharing)
    advice = advise(spec, [offer(1, gpu=H100, gpus="8")])
    per_gpu = {"time_slicing": advice.packing.time_slicing_replicas, "mps": advice.packing.mps_replicas,
               "whole": 1}[sharing]
    objects = build_manifest(spec, advice.chosen, advice.packing).objects
    shares = {D(flag(o["spec"]["template"]["spec"]["containers"][0], "--gpu-memory-utilization"))
              for o in objects if o["kind"] == "Deployment"}
    assert shares == {(D("0.9") / per_gpu).quantize(D("0.01"), rounding="ROUND_FLOOR")}
    assert max(shares) * per_gpu <= D("0.9")
    if sharing != "whole":
        assert per_gpu > 1


def test_host_ram_must_hold_a_pods_share_of_the_weights_and_each_gpu_needs_a_vcpu():
    # Llama 3.1 405B FP16: 811.8 GB of weights, a replica over two 8-GPU nodes -> 405.9 GB per pod.
    spec = WorkloadSpec(kind="inference", model="llama-3.1-405b", multi_node=True)
    small = offer(1, gpu=H100, gpus="8", price="1", ram_gb=D(64), vcpus=D(96))
    few_cpus = offer(2, gpu=H100, gpus="8", price="2", ram_gb=D(2048), vcpus=D(4))
    fits = offer(3, gpu=H100, gpus="8", price="3", ram_gb=D(2048), vcpus=D(192))
    unknown = offer(4, gpu=H100, gpus="8", price="4")
    advice = engine.advise(spec, offers=[small, few_cpus, fits, unknown],
                           cells={"p": {**MANAGED_PAID, **_fabric()}}, per_eur={})
    assert {o.offer.id for o in advice.options + advice.unverified} == {3, 4}
    assert advice.excluded_missing == {"host_resources": 2}


def _fabric():
    from .test_engine import cells
    return cells(infiniband="yes", rdma="yes")


def test_pods_request_their_share_of_the_hosts_cpu_and_memory_less_a_reserve():
    spec = WorkloadSpec(kind="inference", model="llama-3.1-70b", replicas=2)
    advice = advise(spec, [offer(1, gpu=H100, gpus="8", vcpus=D(192), ram_gb=D(2048))])
    container = args_of(advice, spec)
    # 2 of 8 GPUs per pod: a quarter of 192 vCPUs and 2048 GB, less 20%.
    assert container["resources"]["requests"] == {"cpu": "38", "memory": "409Gi"}
    unknown = advise(spec, [offer(1, gpu=H100, gpus="8")])
    assert "requests" not in args_of(unknown, spec)["resources"]


def test_a_node_driver_that_cannot_run_the_engine_image_rules_the_offer_out(monkeypatch):
    # EKS's default AL2023 image has driver 580 (nodesoftware/data/node_images.toml), which runs CUDA 12.4 on a
    # V100. Were the pinned image built on CUDA 13, which dropped Volta, the V100 would be ruled out on EKS, and an
    # H100 kept: the answer comes from the one compatibility table, not from a list here.
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(1, D(10)),))
    offers = [offer(1, provider="aws", gpu=V100), offer(2, provider="aws", gpu=H100, price="3")]
    before = engine.advise(spec, offers=offers, cells={"aws": MANAGED_PAID}, per_eur={})
    assert {o.offer.id for o in before.options + before.unverified} == {1, 2}
    monkeypatch.setitem(VLLM, "cuda", "13.0")
    after = engine.advise(spec, offers=offers, cells={"aws": MANAGED_PAID}, per_eur={})
    assert {o.offer.id for o in after.options + after.unverified} == {2}
    assert after.excluded_missing == {"node_cuda": 1}
    # A provider without recorded node software is unknown, never ruled out.
    elsewhere = [offer(3, provider="p", gpu=V100)]
    assert engine.advise(spec, offers=elsewhere, cells={"p": MANAGED_PAID}, per_eur={}).options


def test_mig_pods_request_their_slices_share_of_the_host_so_all_of_them_fit_on_the_node():
    # Seven 1g.10gb slices per H100 (placement.mig_instances_per_gpu): each pod asks for 1/7 of one GPU's share of
    # the host, so the pods that fill the node's slices ask for no more than the node has.
    h100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80),
                   mig_profiles=("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"))
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(14, D(9)),), sharing="mig")
    advice = advise(spec, [offer(1, gpu=h100, gpus="8", vcpus=D(224), ram_gb=D(1792))])
    (deployment, _service) = build_manifest(spec, advice.chosen, advice.packing).objects
    pod = deployment["spec"]["template"]["spec"]["containers"][0]
    assert pod["resources"]["limits"] == {"nvidia.com/mig-1g.10gb": "1"}
    # 224 vCPUs / 8 GPUs / 7 slices x 0.8 = 3.2 -> 3; 1792 GB / 8 / 7 x 0.8 = 25.6 -> 25Gi
    assert pod["resources"]["requests"] == {"cpu": "3", "memory": "25Gi"}
    assert 8 * 7 * 3 <= 224 and 8 * 7 * 25 <= 1792
