"""The advisor's vocabulary and plain data: what a workload is (`WorkloadSpec`, `ModelNeed`), what an offer is
(`OfferData`, `GpuData`, its capability cells `Cell` and Kubernetes answers `OfferAnswer`), and what advice is made of
(`Requirement`, `Judgement`, `PackingPlan`, `Cost`, `ReplicaLayout`, `Option`, `Advice`, the translatable `Note`).

Frozen dataclasses only, no rules: the rules live in `requirements` (what a workload needs, and the verdicts),
`placement` (GPU packing and nodes) and `engine` (costing and ranking). Imports nothing else of the advisor but
`sizing`, so every other advisor module can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext_lazy as _

from providers.capabilities import UNKNOWN
from providers.curated import CapabilityRecord

from . import sizing

# A month is 365 * 24 / 12 = 730 hours, the figure the hyperscalers' price calculators use.
HOURS_PER_MONTH = Decimal("730")

INFERENCE, TRAINING, BATCH, NOTEBOOK = "inference", "training", "batch", "notebook"
KINDS = {
    INFERENCE: _("Inference serving"),
    TRAINING: _("Multi-node distributed training"),
    BATCH: _("Batch / pipeline jobs"),
    NOTEBOOK: _("A single notebook or fine-tune"),
}

WHOLE, MIG, TIME_SLICING, MPS = "whole", "mig", "time_slicing", "mps"
SHARING_MODES = {
    WHOLE: _("Whole GPUs"),
    MIG: _("MIG (Multi-Instance GPU)"),
    TIME_SLICING: _("Time-slicing"),
    MPS: _("MPS (Multi-Process Service)"),
}

# What a user may insist on. Each key is judged by `judge()` below against the capability cells.
MUST_HAVES = {
    "managed_control_plane": _("Managed control plane"),
    "rdma": _("RDMA fabric (InfiniBand, RoCE, EFA or GPUDirect-TCPX)"),
    "infiniband": _("InfiniBand fabric"),
    "gang_scheduling": _("Gang / queue scheduling"),
    "rwx_storage": _("Shared RWX storage"),
    "node_autoscaling": _("Node autoscaling"),
    "scale_to_zero": _("Scale to zero"),
    "spot_nodes": _("Spot GPU nodes"),
    "mig": _("MIG"),
    "time_slicing": _("Time-slicing"),
    "mps": _("MPS"),
    "gpu_operator": _("GPU driver / Operator installed by the provider"),
}

REQUIREMENT_LABELS = {
    **MUST_HAVES,
    "kubernetes": _("Kubernetes offered"),
    "gpu_sharing": _("GPU sharing"),
    "engine_gpu": _("A GPU the serving engine (vLLM) supports"),
    "precision_gpu": _("A GPU that runs the chosen precision (its quantisation kernels, or FP8 training)"),
    "node_cuda": _("A node driver that runs the engine's CUDA image"),
    "host_resources": _("Host RAM to load the weights and a vCPU per GPU"),
    "gpu_resource": _("An accelerator the manifests can request (nvidia.com/gpu or amd.com/gpu)"),
}

REQUIRED, PREFERRED = "required", "preferred"
MET, MISSING = "met", "missing"  # and UNKNOWN ("unknown"), shared with providers.capabilities

# --- plain data in -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelNeed:
    """`count` replicas of a model that needs `memory_gb` of GPU memory each (weights, KV cache, activations).

    A replica larger than one GPU is split by tensor parallelism over the smallest degree in `tp_degrees` whose GPUs
    hold it, on one node (or, when the user allows it, over several whole nodes)."""

    count: int
    memory_gb: Decimal
    tp_degrees: tuple[int, ...] = sizing.TP_DEGREES
    name: str = ""
    hf_id: str = ""
    weights_gb: Decimal | None = None  # the weights alone, where sized (host RAM must hold a pod's share to load it)


@dataclass(frozen=True)
class WorkloadSpec:
    kind: str
    gpu: str | None = None
    gpu_family: str | None = None
    gpu_memory_min_gb: Decimal | None = None
    gpus_per_node: int = 1
    nodes: int = 1
    hours_per_month: Decimal | None = None
    utilisation_percent: Decimal | None = None
    models: tuple[ModelNeed, ...] = ()
    sharing: str = WHOLE
    spot_ok: bool = False
    countries: tuple[str, ...] = ()
    continents: tuple[str, ...] = ()
    must_haves: tuple[str, ...] = ()
    min_nodes_kept: int = 1
    purchase_price_usd: Decimal | None = None
    power_usd_month: Decimal | None = None
    operations_usd_month: Decimal | None = None
    offer_id: int | None = None
    limit: int = 20
    # Sizing from what people know (advisor.sizing): a listed model or a parameter count, its precision, and for
    # inference the context and concurrency per replica, for training the optimizer and method.
    model: str | None = None
    parameters_b: Decimal | None = None
    precision: str = sizing.FP16
    context_tokens: int = 8192
    concurrency: int = 1
    replicas: int = 1
    optimizer: str = sizing.ADAM
    method: str = sizing.FULL
    adapter_percent: Decimal | None = None
    multi_node: bool = False  # inference: a replica may span several nodes (a LeaderWorkerSet)
    kueue_queue: str = ""

    @property
    def sized(self) -> bool:
        return bool(self.model or self.parameters_b is not None)


# One provider's answer to one capability question, as stored (providers.models.Capability): the same record the
# curated files are read into.
Cell = CapabilityRecord


@dataclass(frozen=True)
class OfferAnswer:
    """One offer's answer to one Kubernetes question (providers.selectors.offer_kubernetes_answers' shape): state
    "yes", "no", "unknown", "n/a" or "not_on_this_machine", why, and the pages it was read from."""

    key: str
    state: str
    reason: str = ""
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class GpuData:
    slug: str
    name: str
    memory_gb: Decimal
    vendor: str = "nvidia"
    mig_profiles: tuple[str, ...] = ()
    mig_source_url: str = ""
    source_url: str = ""
    family: str = ""


@dataclass(frozen=True)
class OfferData:
    id: int
    provider_slug: str
    provider_name: str
    instance_type: str
    region: str
    gpu_count: Decimal
    price_hour_usd: Decimal | None
    gpu: GpuData | None = None
    gpu_name: str = ""
    gpu_memory_gb: Decimal | None = None
    spot_price_hour_usd: Decimal | None = None
    provider_name_zh: str = ""
    provider_kind: str = ""
    country: str = ""
    continent: str = ""
    availability: str = UNKNOWN
    source_name: str = ""
    source_url: str = ""
    last_seen: datetime | None = None
    vcpus: Decimal | None = None  # the machine's host resources, where the source states them
    ram_gb: Decimal | None = None
    form_factor: str = ""  # sxm / pcie / nvl where the machine's sources state it
    efa_interfaces: int | None = None  # AWS: the instance type's EFA interfaces, where its facts state them

    @property
    def memory_per_gpu_gb(self) -> Decimal | None:
        """The offer's reported memory per GPU, else the catalog's (the same GPU model)."""
        if self.gpu_memory_gb:
            return self.gpu_memory_gb
        return self.gpu.memory_gb if self.gpu else None

    @property
    def whole_gpus(self) -> int:
        """GPUs a pod can request on one node: fractional marketplace shares (0.5 GPU) count as none."""
        return int(self.gpu_count)


# --- plain data out ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Note:
    """A user-facing sentence: a lazy translation and its parameters, rendered in the reader's language."""

    code: str
    text: Any
    params: dict[str, Any] = field(default_factory=dict)
    source_url: str = ""

    def __str__(self) -> str:
        text = str(self.text)
        return text % self.params if self.params else text


@dataclass(frozen=True)
class Requirement:
    key: str
    importance: str
    reason: Note

    @property
    def label(self):
        return REQUIREMENT_LABELS[self.key]


@dataclass(frozen=True)
class Judgement:
    requirement: Requirement
    status: str
    evidence: tuple[Cell, ...]
    note: Note | None = None


@dataclass(frozen=True)
class MigUse:
    profile: str
    replicas: int
    per_gpu: int
    gpus: int

    @property
    def resource_name(self) -> str:
        # Under the device plugin's "mixed" MIG strategy every profile is its own resource, nvidia.com/mig-<profile>
        # (NVIDIA k8s-device-plugin README, "MIG support"; GFD README, "MIG 'mixed' strategy").
        return f"nvidia.com/mig-{self.profile}"


@dataclass(frozen=True)
class PackingPlan:
    """How many GPUs of `gpu_memory_gb` the inference models need under each way of sharing a GPU."""

    gpu_memory_gb: Decimal
    replicas: int
    oversized: int  # replicas larger than one GPU: whole GPUs (tensor parallel) under every mode
    whole_gpus: int
    mig_gpus: int | None  # None: the GPU has no MIG profiles
    mig_uses: tuple[MigUse, ...]
    time_slicing_gpus: int
    time_slicing_replicas: int
    mps_gpus: int
    mps_replicas: int
    oversized_gpus: int = 0  # GPUs of the replicas larger than one GPU (tensor parallel), counted in every mode

    def gpus(self, mode: str) -> int | None:
        return {WHOLE: self.whole_gpus, MIG: self.mig_gpus, TIME_SLICING: self.time_slicing_gpus,
                MPS: self.mps_gpus}[mode]


@dataclass(frozen=True)
class Cost:
    hours: Decimal
    instances: int
    price_kind: str  # "on_demand" | "spot"
    price_hour_usd: Decimal
    gpu_nodes_usd: Decimal
    control_plane_usd: Decimal | None  # None: unknown, left out of the total
    idle_nodes: int
    idle_hours: Decimal
    idle_usd: Decimal
    total_usd: Decimal  # the sum of the known parts
    complete: bool
    flags: tuple[Note, ...]


@dataclass(frozen=True)
class ReplicaLayout:
    """How one model line (or, without models, the workload) lands on the offer's nodes: `replicas` replicas of
    `pods_per_replica` pods, each pod asking for `gpus_per_pod` of `resource` on one node."""

    name: str
    replicas: int
    gpus_per_pod: int
    pods_per_replica: int = 1
    resource: str = "nvidia.com/gpu"
    shared: str = ""  # "", or the sharing mode when the pod asks for a share of a GPU
    hf_id: str = ""

    @property
    def gpus(self) -> int:
        return 0 if self.shared else self.replicas * self.pods_per_replica * self.gpus_per_pod


@dataclass(frozen=True)
class Option:
    rank: int
    offer: OfferData
    cost: Cost
    judgements: tuple[Judgement, ...]
    tier: int  # 0: verified (every required item met by the offer's answers, the whole cost known); 1: unverified
    gpus_needed: int
    layouts: tuple[ReplicaLayout, ...] = ()
    also_in: tuple[str, ...] = ()  # other regions of the same SKU in the same group, all at least as dear
    unverified: tuple[str, ...] = ()  # requirement keys left unknown, and "control_plane_fee" when the fee is

    @property
    def verified(self) -> bool:
        return self.tier == 0

    @property
    def also_in_regions(self) -> int:
        return len(self.also_in)

    @property
    def price_per_gpu_hour_usd(self) -> Decimal:
        return self.cost.price_hour_usd / self.offer.gpu_count


@dataclass(frozen=True)
class SlicePrice:
    profile: str
    per_gpu: int
    usd_per_slice_hour: Decimal


@dataclass(frozen=True)
class BreakEven:
    purchase_usd: Decimal
    own_monthly_usd: Decimal
    rent_monthly_usd: Decimal | None
    months: Decimal | None
    note: Note


@dataclass(frozen=True)
class Advice:
    spec: WorkloadSpec
    hours: Decimal
    kubernetes_needed: bool
    kind_note: Note
    requirements: tuple[Requirement, ...]
    options: tuple[Option, ...]  # verified, cheapest first, one row per SKU
    unverified: tuple[Option, ...]  # "may also fit (unverified)", cheapest known part first, one row per SKU
    candidates: int
    ranked: int
    excluded_missing: dict[str, int]
    excluded_unpriced: int
    excluded_too_small: int
    excluded_memory_unknown: int
    chosen: Option | None
    packing: PackingPlan | None
    slice_prices: tuple[SlicePrice, ...]
    break_even: BreakEven | None
    assumptions: tuple[Note, ...]
    estimate: sizing.Estimate | None = None
    manifest: Any = None  # manifests.Manifest for `chosen`, set by the selector (manifests import these types)

    @property
    def excluded_by_requirement(self) -> list[tuple[Any, int]]:
        """(requirement label, offers left out because the provider lacks it), for the page."""
        return [(REQUIREMENT_LABELS[key], count) for key, count in self.excluded_missing.items()]
