"""Placing a workload on an offer's GPUs and nodes: how many GPUs the inference models need under each way of sharing
a GPU (whole GPUs, MIG with the GPU's real profiles, time-slicing, MPS), how a replica larger than one GPU is split
(tensor parallel on one node, or over whole nodes when allowed), and how many nodes the pods take (first-fit
decreasing, a group of equal pods at a time, within `MAX_NODES`).

Pure arithmetic over the plain data in `advisor.types`; memory only, never throughput.
"""

from __future__ import annotations

import re
from collections import Counter
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from .types import (
    BATCH,
    MIG,
    TRAINING,
    WHOLE,
    MigUse,
    ModelNeed,
    OfferData,
    PackingPlan,
    ReplicaLayout,
    SlicePrice,
    WorkloadSpec,
)

# The most nodes one workload may span: far above any real single workload, and the bound that keeps placing it cheap
# (advisor.inputs reads it for the form's and the API's limits).
MAX_NODES = 1000

# MIG partitions a GPU into compute slices (7 on A100/H100/H200/B200, 4 on A30 and RTX PRO 6000: the `g` of the
# largest profile) and 8 memory slices; a profile can be placed as many times as both counts allow
# (NVIDIA MIG User Guide, "Supported MIG Profiles": e.g. H100 80GB allows 7x 1g.10gb, 4x 1g.20gb, 3x 2g.20gb,
# 2x 3g.40gb, 1x 4g.40gb). https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
MIG_MEMORY_SLICES = 8
MIG_USER_GUIDE_URL = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/"
_MIG_PROFILE = re.compile(r"^(?P<g>\d+)g\.(?P<mem>\d+)gb$")


# --- GPU sharing arithmetic --------------------------------------------------------------------------------------


def mig_profile_size(profile: str) -> tuple[int, Decimal]:
    """("3g.40gb") -> (3 compute slices, 40 GB)."""
    match = _MIG_PROFILE.match(profile)
    if not match:
        raise ValueError(f"not a MIG profile name: {profile!r}")
    return int(match["g"]), Decimal(match["mem"])


def mig_instances_per_gpu(profile: str, profiles: tuple[str, ...]) -> int:
    """How many instances of `profile` fit on one GPU whose profiles are `profiles` (see MIG_MEMORY_SLICES)."""
    sizes = [mig_profile_size(p) for p in profiles]
    compute_slices = max(g for g, _mem in sizes)
    full_memory = max(mem for _g, mem in sizes)
    g, mem = mig_profile_size(profile)
    memory_slices = max(1, int((mem / full_memory * MIG_MEMORY_SLICES).quantize(Decimal(1), ROUND_HALF_UP)))
    return min(compute_slices // g, MIG_MEMORY_SLICES // memory_slices)


def _ceil_div(a: int | Decimal, b: int | Decimal) -> int:
    return int((Decimal(a) / Decimal(b)).to_integral_value(ROUND_CEILING))


def tp_gpus(memory_gb: Decimal, degrees: tuple[int, ...], gpu_memory_gb: Decimal) -> int:
    """GPUs one replica is split over: the smallest tensor-parallel degree whose GPUs hold it; beyond the largest
    degree (more than one node), whole multiples of it."""
    for degree in degrees:
        if degree * gpu_memory_gb >= memory_gb:
            return degree
    largest = max(degrees)
    return largest * _ceil_div(memory_gb, largest * gpu_memory_gb)


def pack_models(models: tuple[ModelNeed, ...], gpu_memory_gb: Decimal, mig_profiles: tuple[str, ...]) -> PackingPlan:
    """GPUs needed for the model replicas on GPUs of `gpu_memory_gb`, by memory only.

    Whole GPUs: one GPU per replica that fits on one; a larger replica is split by tensor parallelism over the
      smallest degree (1, 2, 4, 8, or those dividing the model's attention heads) whose GPUs hold it.
    MIG: each replica gets the smallest profile that holds it, and each GPU carries one profile size only, which is a
      valid layout under the device plugin's mixed strategy (an upper bound: a mixed layout may use fewer GPUs).
    Time-slicing: first-fit decreasing by memory (replicas share memory without isolation).
    MPS: the device plugin gives each of a GPU's `replicas` clients an equal share of its memory, so the largest
      replica sets the number of clients per GPU.
    A replica larger than one GPU is counted as whole GPUs (tensor parallel) under every mode.
    """
    sizes = sorted((m.memory_gb for m in models for _i in range(m.count)), reverse=True)
    fitting = [s for s in sizes if s <= gpu_memory_gb]
    oversized_gpus = sum(tp_gpus(m.memory_gb, m.tp_degrees, gpu_memory_gb) * m.count
                         for m in models if m.memory_gb > gpu_memory_gb)
    oversized = [s for s in sizes if s > gpu_memory_gb]
    whole = len(fitting) + oversized_gpus

    mig_gpus: int | None = None
    uses: list[MigUse] = []
    by_size = sorted(mig_profiles, key=lambda p: (mig_profile_size(p)[1], mig_profile_size(p)[0]))
    # A source may report more memory than the catalog's largest profile (e.g. a GPU sold with more memory than the
    # variant NVIDIA's table lists); a replica no profile holds cannot use MIG, so MIG gets no count.
    if by_size and all(mig_profile_size(by_size[-1])[1] >= size for size in fitting):
        counts: Counter[str] = Counter()
        for size in fitting:
            counts[next(p for p in by_size if mig_profile_size(p)[1] >= size)] += 1
        for profile in by_size:
            if counts[profile]:
                per_gpu = mig_instances_per_gpu(profile, tuple(mig_profiles))
                uses.append(MigUse(profile, counts[profile], per_gpu, _ceil_div(counts[profile], per_gpu)))
        mig_gpus = sum(use.gpus for use in uses) + oversized_gpus

    free: list[Decimal] = []
    per_gpu_count: list[int] = []
    for size in fitting:
        for index, room in enumerate(free):
            if room >= size:
                free[index] -= size
                per_gpu_count[index] += 1
                break
        else:
            free.append(gpu_memory_gb - size)
            per_gpu_count.append(1)

    mps_replicas = int(gpu_memory_gb // fitting[0]) if fitting else 1
    return PackingPlan(
        gpu_memory_gb=gpu_memory_gb,
        replicas=len(sizes),
        oversized=len(oversized),
        whole_gpus=whole,
        mig_gpus=mig_gpus,
        mig_uses=tuple(uses),
        time_slicing_gpus=len(free) + oversized_gpus,
        time_slicing_replicas=max(per_gpu_count, default=1),
        mps_gpus=(_ceil_div(len(fitting), mps_replicas) if fitting else 0) + oversized_gpus,
        mps_replicas=mps_replicas,
        oversized_gpus=oversized_gpus,
    )


def slice_prices(plan: PackingPlan, price_per_gpu_hour_usd: Decimal) -> tuple[SlicePrice, ...]:
    """The effective price of one MIG instance-hour: the GPU-hour price split over the instances one GPU holds."""
    return tuple(
        SlicePrice(use.profile, use.per_gpu, (price_per_gpu_hour_usd / use.per_gpu).quantize(Decimal("0.0001")))
        for use in plan.mig_uses
    )


# --- replicas on nodes -------------------------------------------------------------------------------------------


GPU_RESOURCE = "nvidia.com/gpu"
# AMD's device plugin advertises `amd.com/gpu` (https://github.com/ROCm/k8s-device-plugin).
GPU_RESOURCES = {"nvidia": GPU_RESOURCE, "amd": "amd.com/gpu"}


def gpu_resource(offer: OfferData) -> str:
    return GPU_RESOURCES.get(offer.gpu.vendor if offer.gpu else "nvidia", GPU_RESOURCE)


def replica_fit(memory_gb: Decimal, degrees: tuple[int, ...], gpu_memory_gb: Decimal, node_gpus: int,
                multi_node: bool) -> tuple[int, int] | None:
    """(GPUs per pod, pods per replica) for a replica on nodes of `node_gpus` GPUs, or None when it does not fit.

    On one node: the smallest allowed tensor-parallel degree whose GPUs hold it, no larger than the node. Across
    nodes (only when asked for): every GPU of each node (tensor parallel inside a node, pipeline stages between
    nodes), which needs the node's GPU count to be an allowed degree.
    """
    for degree in degrees:
        if degree <= node_gpus and degree * gpu_memory_gb >= memory_gb:
            return degree, 1
    if multi_node and node_gpus in degrees:
        return node_gpus, _ceil_div(memory_gb, node_gpus * gpu_memory_gb)
    return None


def nodes_for(pods_gpus: dict[int, int], node_gpus: int, *, limit: int = MAX_NODES) -> int | None:
    """Nodes needed for pods asking for these GPU counts ({GPUs per pod: pods}), first-fit decreasing (a pod never
    spans nodes), or None when more than `limit` nodes would be needed.

    Identical pods are placed a group at a time: first-fit puts a run of equal pods into the first node with room
    until it is full, then the next, so a group fills each node's room in turn and then opens new nodes, which is
    the same packing one pod at a time gives, in time bounded by groups x nodes rather than by pods squared.
    """
    rooms: list[int] = []
    for gpus in sorted(pods_gpus, reverse=True):
        left = pods_gpus[gpus]
        if left < 1 or gpus < 1:
            continue
        for index, room in enumerate(rooms):
            if left == 0:
                break
            take = min(left, room // gpus)
            rooms[index] -= take * gpus
            left -= take
        if left:
            per_node = node_gpus // gpus
            if per_node < 1:
                return None
            new_nodes = -(-left // per_node)
            if len(rooms) + new_nodes > limit:
                return None
            full, last = divmod(left, per_node)
            rooms += [node_gpus - per_node * gpus] * full
            if last:
                rooms.append(node_gpus - last * gpus)
    return len(rooms)


def placement(spec: WorkloadSpec, models: tuple[ModelNeed, ...], offer: OfferData,
              plan: PackingPlan | None) -> tuple[tuple[ReplicaLayout, ...], int, int] | None:
    """(layouts, GPUs needed, instances to rent) for `offer`, or None when it cannot hold the workload.

    A pod asks for whole GPUs of one node, so an offer with fewer whole GPUs than a replica needs (or a fractional
    marketplace share) cannot hold it; the node must also have the GPUs per node asked for.
    """
    node_gpus = offer.whole_gpus
    resource = gpu_resource(offer)
    if node_gpus < 1 or node_gpus < spec.gpus_per_node:
        return None
    if plan is None:
        name = {TRAINING: "training", BATCH: "batch"}.get(spec.kind, "server")
        layout = ReplicaLayout(name, spec.nodes, spec.gpus_per_node, resource=resource)
        return (layout,), spec.gpus_per_node * spec.nodes, spec.nodes
    layouts: list[ReplicaLayout] = []
    pods: dict[int, int] = {}
    shared_mode = spec.sharing != WHOLE
    if shared_mode and plan.gpus(spec.sharing) is None:
        return None  # MIG asked for, and this GPU has no MIG profile that holds the replicas
    for index, model in enumerate(models, start=1):
        name = model.name or f"model-{index}"
        if shared_mode and model.memory_gb <= plan.gpu_memory_gb:
            shared_resource = resource
            if spec.sharing == MIG:
                # the smallest profile that holds it: the one pack_models counted this model under
                profile = next(use.profile for use in plan.mig_uses
                               if mig_profile_size(use.profile)[1] >= model.memory_gb)
                shared_resource = f"nvidia.com/mig-{profile}"
            layouts.append(ReplicaLayout(name, model.count, 1, 1, shared_resource, spec.sharing, model.hf_id))
            continue
        fit = replica_fit(model.memory_gb, model.tp_degrees, plan.gpu_memory_gb, node_gpus, spec.multi_node)
        if fit is None:
            return None
        gpus_per_pod, pods_per_replica = fit
        layouts.append(ReplicaLayout(name, model.count, gpus_per_pod, pods_per_replica, resource, "", model.hf_id))
        pods[gpus_per_pod] = pods.get(gpus_per_pod, 0) + model.count * pods_per_replica
    shared_gpus = 0
    if shared_mode:
        mode_gpus = plan.gpus(spec.sharing)
        if mode_gpus is None:
            return None
        shared_gpus = mode_gpus - plan.oversized_gpus
    gpus = sum(size * count for size, count in pods.items()) + shared_gpus
    if shared_gpus:
        pods[1] = pods.get(1, 0) + shared_gpus
    nodes = nodes_for(pods, node_gpus)
    if nodes is None:
        return None  # more nodes than any single workload the advisor sizes (MAX_NODES)
    return tuple(layouts), gpus, max(1, nodes)
