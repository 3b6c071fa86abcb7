"""The advisor's engine: pure functions over plain data (no database, no request), shared by the page and the API.

Given a workload (`WorkloadSpec`), the candidate offers (`OfferData`), each provider's capability cells (`Cell`) and
the ECB rates, `advise()` turns the workload kind into requirements with reasons, judges every requirement against
the provider's sourced answer (met / missing / unknown, never guessing), packs inference models onto GPUs (whole
GPUs, MIG with the GPU's real profiles, time-slicing, MPS), costs each offer per month on Kubernetes (GPU nodes x hours
x price, plus the control-plane fee, plus the nodes that stay up when a pool cannot scale to zero) and ranks them.

Nothing is invented: a fee we do not know is left out of the total and the cost is flagged incomplete; a
scale-to-zero answer we do not know is costed as "no" and flagged; a requirement whose answer is unknown is never
counted as met. Every judgement carries the capability cells it was read from, with their source URLs.

User-facing text is kept as lazy translations plus parameters (`Note`), so the same result renders in the language
of whoever reads it, and tests compare codes and numbers rather than prose.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal
from typing import Any

from django.utils.translation import gettext_lazy as _

from providers.capabilities import RDMA_FABRICS, UNKNOWN
from providers.curated import CapabilityRecord
from scrapers.normalize import to_usd

# A month is 365 * 24 / 12 = 730 hours, the figure the hyperscalers' price calculators use.
HOURS_PER_MONTH = Decimal("730")
CENT = Decimal("0.01")

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
}

REQUIRED, PREFERRED = "required", "preferred"
MET, MISSING = "met", "missing"  # and UNKNOWN ("unknown"), shared with providers.capabilities

# MIG partitions a GPU into compute slices (7 on A100/H100/H200/B200, 4 on A30 and RTX PRO 6000: the `g` of the
# largest profile) and 8 memory slices; a profile can be placed as many times as both counts allow
# (NVIDIA MIG User Guide, "Supported MIG Profiles": e.g. H100 80GB allows 7x 1g.10gb, 4x 1g.20gb, 3x 2g.20gb,
# 2x 3g.40gb, 1x 4g.40gb). https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
MIG_MEMORY_SLICES = 8
MIG_USER_GUIDE_URL = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/"
_MIG_PROFILE = re.compile(r"^(?P<g>\d+)g\.(?P<mem>\d+)gb$")


# --- plain data in -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelNeed:
    """`count` replicas of a model that needs `memory_gb` of GPU memory each (weights, KV cache, activations)."""

    count: int
    memory_gb: Decimal


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


# One provider's answer to one capability question, as stored (providers.models.Capability): the same record the
# curated files are read into.
Cell = CapabilityRecord


@dataclass(frozen=True)
class GpuData:
    slug: str
    name: str
    memory_gb: Decimal
    mig_profiles: tuple[str, ...] = ()
    mig_source_url: str = ""
    source_url: str = ""


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
    country: str = ""
    continent: str = ""
    availability: str = UNKNOWN
    source_name: str = ""
    source_url: str = ""
    last_seen: datetime | None = None

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
class Option:
    rank: int
    offer: OfferData
    cost: Cost
    judgements: tuple[Judgement, ...]
    tier: int  # 0: every required requirement met; 1: some required ones unknown
    gpus_needed: int

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
    options: tuple[Option, ...]
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
    manifest: Any = None  # manifests.Manifest for `chosen`, set by the selector (manifests import this module)

    @property
    def excluded_by_requirement(self) -> list[tuple[Any, int]]:
        """(requirement label, offers left out because the provider lacks it), for the page."""
        return [(REQUIREMENT_LABELS[key], count) for key, count in self.excluded_missing.items()]


# --- input rules shared by the page's form and the API's serializer ----------------------------------------------


def spec_errors(spec: WorkloadSpec) -> dict[str, str]:
    """Rules across fields, as {field: message}; each interface checks types and ranges itself."""
    errors: dict[str, str] = {}
    if spec.hours_per_month is not None and spec.utilisation_percent is not None:
        errors["hours_per_month"] = str(_("Give hours per month or a utilisation, not both."))
    if spec.models and spec.kind != INFERENCE:
        errors["models"] = str(_("Models to pack apply to inference serving only."))
    if spec.sharing != WHOLE and spec.kind != INFERENCE:
        errors["sharing"] = str(_("GPU sharing applies to inference serving only."))
    elif spec.sharing != WHOLE and not spec.models:
        errors["sharing"] = str(_("Give the models to pack to share GPUs."))
    if spec.gpu and spec.gpu_family:
        errors["gpu_family"] = str(_("Give a GPU model or a GPU family, not both."))
    sized_by_models = spec.kind == INFERENCE and bool(spec.models)
    if not (spec.gpu or spec.gpu_family) and spec.gpu_memory_min_gb is None and not sized_by_models:
        errors["gpu"] = str(_("Name a GPU model, a GPU family or a minimum memory per GPU."))
    if spec.purchase_price_usd is not None:
        for name in ("power_usd_month", "operations_usd_month"):
            if getattr(spec, name) is None:
                errors[name] = str(_("Needed with a purchase price to compare renting with owning (0 if none)."))
    return errors


def monthly_hours(spec: WorkloadSpec) -> Decimal:
    if spec.hours_per_month is not None:
        return spec.hours_per_month
    if spec.utilisation_percent is not None:
        return HOURS_PER_MONTH * spec.utilisation_percent / 100
    return HOURS_PER_MONTH


def needs_kubernetes(spec: WorkloadSpec) -> bool:
    return spec.kind != NOTEBOOK


def min_gpu_memory_gb(spec: WorkloadSpec) -> Decimal | None:
    """The memory per GPU an offer must have: the user's minimum, else (inference) the largest model that must fit
    on one GPU when GPUs are shared."""
    if spec.gpu_memory_min_gb is not None:
        return spec.gpu_memory_min_gb
    if spec.kind == INFERENCE and spec.models and spec.sharing != WHOLE:
        return max(model.memory_gb for model in spec.models)
    return None


# --- requirements ------------------------------------------------------------------------------------------------


def requirements_for(spec: WorkloadSpec) -> tuple[Requirement, ...]:
    """The workload kind turned into requirements, each with the reason it matters; must-haves become required."""
    reqs: dict[str, Requirement] = {}

    def add(key: str, importance: str, code: str, text, **params):
        current = reqs.get(key)
        if current is None or (current.importance == PREFERRED and importance == REQUIRED):
            reqs[key] = Requirement(key, importance, Note(code, text, params))

    if spec.kind != NOTEBOOK:
        add("kubernetes", REQUIRED, "kubernetes",
            _("The workload runs on Kubernetes, so the provider must offer it: a managed control plane, or GPU "
              "machines you join to a cluster you run."))
    if spec.kind == INFERENCE:
        add("node_autoscaling", PREFERRED, "inference_autoscaling",
            _("Inference traffic rises and falls; node autoscaling adds GPU nodes at peaks and removes them after."))
        add("scale_to_zero", PREFERRED, "inference_scale_to_zero",
            _("When no requests come, a GPU node pool that scales to zero stops paying for idle GPUs."))
        if spec.sharing == WHOLE:
            add("gpu_sharing", PREFERRED, "inference_sharing",
                _("Small models can share a GPU (MIG, time-slicing, MPS or the provider's own scheme), so fewer "
                  "GPUs are paid for."))
    elif spec.kind == TRAINING:
        if spec.nodes > 1:
            add("rdma", REQUIRED, "training_rdma",
                _("Distributed training exchanges gradients between nodes at every step; without an RDMA fabric "
                  "(InfiniBand, RoCE, EFA or GPUDirect-TCPX) the network becomes the bottleneck."))
            add("gang_scheduling", REQUIRED, "training_gang",
                _("All %(nodes)s workers must start together; gang scheduling (Kueue, Volcano, ...) keeps a "
                  "half-started job from holding GPUs while it waits."), nodes=spec.nodes)
        add("rwx_storage", REQUIRED, "training_rwx",
            _("Workers read the same dataset and write checkpoints; ReadWriteMany shared storage gives them one "
              "copy."))
    elif spec.kind == BATCH:
        add("spot_nodes", PREFERRED, "batch_spot",
            _("Batch jobs can be retried, so interruptible spot GPU nodes are usually the cheapest way to run them."))
        add("scale_to_zero", PREFERRED, "batch_scale_to_zero",
            _("Between batches nothing runs; a node pool that scales to zero costs nothing in between."))
    if spec.sharing in (MIG, TIME_SLICING, MPS):
        add(spec.sharing, REQUIRED, "sharing_chosen",
            _("You chose %(mode)s to share GPUs, so the provider must support it on Kubernetes."),
            mode=SHARING_MODES[spec.sharing])
    if spec.spot_ok and spec.kind != NOTEBOOK:
        add("spot_nodes", PREFERRED, "spot_tolerated",
            _("You tolerate interruptions; spot GPU nodes in Kubernetes make the spot price usable."))
    for key in spec.must_haves:
        add(key, REQUIRED, "must_have", _("You listed it as a must-have."))
    return tuple(reqs.values())


def _cell(cells: dict[str, Cell], key: str) -> Cell:
    return cells.get(key) or Cell(key=key, value=UNKNOWN)


def _yes_no(cell: Cell) -> str:
    if cell.value == "yes":
        return MET
    if cell.value in ("no", "n/a"):
        return MISSING
    return UNKNOWN


def judge(requirement: Requirement, cells: dict[str, Cell], gpu: GpuData | None) -> Judgement:
    """Met, missing or unknown, read only from the provider's cells (and for MIG the GPU catalog).

    "n/a" counts as missing (the provider says the question does not apply, e.g. no Kubernetes); an absent cell or
    "unknown" stays unknown. For an "any of" requirement one sourced "yes" is enough, and it is missing only when
    every alternative is sourced as no or n/a.
    """
    key = requirement.key
    if key in ("kubernetes", "managed_control_plane"):
        cell = _cell(cells, "offering")
        accepted = ("managed", "byo") if key == "kubernetes" else ("managed",)
        status = MET if cell.value in accepted else UNKNOWN if cell.value == UNKNOWN else MISSING
        return Judgement(requirement, status, (cell,))
    if key == "gpu_operator":
        cell = _cell(cells, key)
        status = (MET if cell.value in ("preinstalled", "add_on")
                  else UNKNOWN if cell.value == UNKNOWN else MISSING)
        return Judgement(requirement, status, (cell,))
    if key == MIG:
        cell = _cell(cells, MIG)
        if gpu is not None and not gpu.mig_profiles:
            note = Note("gpu_without_mig", _("%(gpu)s has no MIG profiles in NVIDIA's MIG User Guide."),
                        {"gpu": gpu.name}, MIG_USER_GUIDE_URL)
            return Judgement(requirement, MISSING, (cell,), note)
        if gpu is None:
            return Judgement(requirement, UNKNOWN, (cell,), Note("gpu_unknown", _("The GPU model is not known.")))
        return Judgement(requirement, _yes_no(cell), (cell,))
    if key in ("rdma", "gpu_sharing"):
        keys = RDMA_FABRICS if key == "rdma" else (MIG, TIME_SLICING, MPS, "vendor_sharing")
        alternatives = [_cell(cells, k) for k in keys]
        if key == "gpu_sharing" and gpu is not None and not gpu.mig_profiles:
            alternatives = [c for c in alternatives if c.key != MIG]
        met = [c for c in alternatives if c.value == "yes"]
        if met:
            return Judgement(requirement, MET, tuple(met))
        status = MISSING if all(c.value in ("no", "n/a") for c in alternatives) else UNKNOWN
        return Judgement(requirement, status, tuple(alternatives))
    cell = _cell(cells, key)
    return Judgement(requirement, _yes_no(cell), (cell,))


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


def pack_models(models: tuple[ModelNeed, ...], gpu_memory_gb: Decimal, mig_profiles: tuple[str, ...]) -> PackingPlan:
    """GPUs needed for the model replicas on GPUs of `gpu_memory_gb`, by memory only.

    Whole GPUs: one GPU per replica (ceil(memory / GPU memory) for a replica larger than a GPU).
    MIG: each replica gets the smallest profile that holds it, and each GPU carries one profile size only, which is a
      valid layout under the device plugin's mixed strategy (an upper bound: a mixed layout may use fewer GPUs).
    Time-slicing: first-fit decreasing by memory (replicas share memory without isolation).
    MPS: the device plugin gives each of a GPU's `replicas` clients an equal share of its memory, so the largest
      replica sets the number of clients per GPU.
    A replica larger than one GPU is counted as whole GPUs under every mode.
    """
    sizes = sorted((m.memory_gb for m in models for _i in range(m.count)), reverse=True)
    fitting = [s for s in sizes if s <= gpu_memory_gb]
    oversized = [s for s in sizes if s > gpu_memory_gb]
    oversized_gpus = sum(_ceil_div(s, gpu_memory_gb) for s in oversized)
    whole = len(fitting) + oversized_gpus

    mig_gpus: int | None = None
    uses: list[MigUse] = []
    if mig_profiles:
        by_size = sorted(mig_profiles, key=lambda p: (mig_profile_size(p)[1], mig_profile_size(p)[0]))
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
    )


def slice_prices(plan: PackingPlan, price_per_gpu_hour_usd: Decimal) -> tuple[SlicePrice, ...]:
    """The effective price of one MIG instance-hour: the GPU-hour price split over the instances one GPU holds."""
    return tuple(
        SlicePrice(use.profile, use.per_gpu, (price_per_gpu_hour_usd / use.per_gpu).quantize(Decimal("0.0001")))
        for use in plan.mig_uses
    )


# --- cost --------------------------------------------------------------------------------------------------------


def control_plane_fee(cells: dict[str, Cell], per_eur: dict[str, Decimal]) -> tuple[Decimal | None, Note | None]:
    """USD per month for one cluster (730 cluster-hours), or None with a flag when it is not known."""
    offering = _cell(cells, "offering")
    if offering.value == "byo":
        return Decimal(0), Note("self_managed_control_plane",
                                _("You run the control plane yourself; the machines it needs are not costed."),
                                source_url=offering.source_url)
    fee = _cell(cells, "control_plane_fee")
    if fee.value == "free" or (fee.value == "n/a" and offering.value == "managed"):
        return Decimal(0), None
    if fee.value == "paid" and fee.amount is not None:
        usd = to_usd(fee.amount, fee.currency or "USD", per_eur)
        if usd is None:
            return None, Note("fee_no_rate", _("No exchange rate for the control-plane fee in %(currency)s."),
                              {"currency": fee.currency}, fee.source_url)
        return (usd * HOURS_PER_MONTH).quantize(CENT), None
    return None, Note("fee_unknown", _("Control-plane fee unknown: not included in the total."),
                      source_url=fee.source_url)


def monthly_cost(*, offer: OfferData, instances: int, hours: Decimal, kubernetes: bool, spot_ok: bool,
                 cells: dict[str, Cell], per_eur: dict[str, Decimal], min_nodes_kept: int) -> Cost:
    """GPU nodes x hours x price (spot where tolerated and usable), plus, on Kubernetes, the control-plane fee and
    the nodes that stay up for the rest of the month when the pool cannot scale to zero.

    `offer.price_hour_usd` must be set (offers without a price are not costed). A spot price is used only when the
    user tolerates interruptions, the offer has one and (on Kubernetes) the provider's `spot_nodes` cell is "yes";
    scale-to-zero "no", "n/a" or unknown keeps `min_nodes_kept` nodes up while idle, and unknown is flagged.
    """
    assert offer.price_hour_usd is not None
    flags: list[Note] = []
    price, price_kind = offer.price_hour_usd, "on_demand"
    if spot_ok and offer.spot_price_hour_usd is not None:
        spot_cell = _cell(cells, "spot_nodes")
        if not kubernetes or spot_cell.value == "yes":
            price, price_kind = offer.spot_price_hour_usd, "spot"
        else:
            flags.append(Note("spot_not_usable",
                              _("A spot price exists, but spot GPU nodes in Kubernetes are %(value)s here: costed at "
                                "the on-demand price."), {"value": spot_cell.value}, spot_cell.source_url))
    gpu_nodes = instances * hours * price

    fee: Decimal | None = Decimal(0)
    idle_nodes, idle_hours = 0, Decimal(0)
    if kubernetes:
        fee, fee_flag = control_plane_fee(cells, per_eur)
        if fee_flag:
            flags.append(fee_flag)
        idle_hours = max(Decimal(0), HOURS_PER_MONTH - hours)
        scale_cell = _cell(cells, "scale_to_zero")
        if idle_hours and scale_cell.value != "yes":
            idle_nodes = min(min_nodes_kept, instances)
            if scale_cell.value == UNKNOWN:
                flags.append(Note("scale_to_zero_unknown",
                                  _("Scale to zero unknown: %(nodes)s node(s) costed as staying up when idle."),
                                  {"nodes": idle_nodes}))
            elif idle_nodes:
                flags.append(Note("no_scale_to_zero",
                                  _("No scale to zero: %(nodes)s node(s) stay up when idle."),
                                  {"nodes": idle_nodes}, scale_cell.source_url))
    idle = idle_nodes * idle_hours * price
    total = gpu_nodes + idle + (fee or 0)
    return Cost(
        hours=hours, instances=instances, price_kind=price_kind, price_hour_usd=price,
        gpu_nodes_usd=gpu_nodes.quantize(CENT), control_plane_usd=fee, idle_nodes=idle_nodes,
        idle_hours=idle_hours, idle_usd=idle.quantize(CENT), total_usd=total.quantize(CENT),
        complete=fee is not None, flags=tuple(flags),
    )


def break_even(*, purchase_usd: Decimal, own_monthly_usd: Decimal, rent_monthly_usd: Decimal | None) -> BreakEven:
    """Months after which buying (price + monthly power and operations) costs less than renting the best option."""
    if rent_monthly_usd is None:
        return BreakEven(purchase_usd, own_monthly_usd, None, None,
                         Note("no_rental", _("No ranked option with a complete monthly cost to compare with.")))
    saving = rent_monthly_usd - own_monthly_usd
    if saving <= 0:
        return BreakEven(purchase_usd, own_monthly_usd, rent_monthly_usd, None,
                         Note("never", _("Running your own server costs at least as much per month as renting: "
                                         "buying never breaks even.")))
    months = (purchase_usd / saving).quantize(Decimal("0.1"), ROUND_HALF_UP)
    return BreakEven(purchase_usd, own_monthly_usd, rent_monthly_usd, months,
                     Note("months", _("Buying breaks even after %(months)s months against the best rental option."),
                          {"months": months}))


# --- the whole advice --------------------------------------------------------------------------------------------


def _gpus_and_instances(spec: WorkloadSpec, offer: OfferData, plan: PackingPlan | None) -> tuple[int, int] | None:
    """(GPUs needed, instances to rent) or None when the offer cannot hold the workload."""
    if plan is not None:
        needed = plan.gpus(spec.sharing)
        if needed is None or offer.whole_gpus < 1:
            return None
        return needed, max(1, _ceil_div(needed, offer.whole_gpus))
    if offer.gpu_count < spec.gpus_per_node:
        return None
    return spec.gpus_per_node * spec.nodes, spec.nodes


def _kind_note(spec: WorkloadSpec) -> Note:
    if spec.kind == NOTEBOOK:
        return Note("notebook", _("A single notebook or fine-tune runs on one machine: Kubernetes adds a control "
                                  "plane to pay for and operate without much benefit. The options below are plain "
                                  "GPU instances; stop them when you are done."))
    if spec.kind == TRAINING and spec.nodes == 1:
        return Note("training_single_node", _("One node: gradients stay inside the node (NVLink or PCIe), so no "
                                              "RDMA fabric or gang scheduling is needed."))
    return Note(spec.kind, KINDS[spec.kind])


def _assumptions(spec: WorkloadSpec, hours: Decimal, kubernetes: bool) -> tuple[Note, ...]:
    notes = [Note("month", _("A month is 730 hours (365 x 24 / 12)."))]
    if spec.hours_per_month is not None:
        notes.append(Note("hours", _("The GPU nodes run %(hours)s hours a month."), {"hours": hours}))
    elif spec.utilisation_percent is not None:
        notes.append(Note("utilisation", _("%(percent)s%% utilisation of 730 hours: the GPU nodes run %(hours)s "
                                           "hours a month."), {"percent": spec.utilisation_percent, "hours": hours}))
    else:
        notes.append(Note("always_on", _("No hours or utilisation given: the GPU nodes are costed as running all "
                                         "month (730 hours).")))
    if kubernetes:
        notes.append(Note("fee_month", _("The control-plane fee is charged for one cluster all month (730 "
                                         "cluster-hours); an unknown fee is left out of the total and flagged.")))
        notes.append(Note("idle_nodes", _("Where a GPU node pool cannot scale to zero, or we do not know whether it "
                                          "can, %(nodes)s node(s) are costed as staying up for the idle hours; "
                                          "unknown is costed this way and flagged."), {"nodes": spec.min_nodes_kept}))
    else:
        notes.append(Note("plain_instances", _("Plain instances are costed for the hours they run: no control plane "
                                               "and no idle nodes.")))
    notes.append(Note("spot", _("A spot price is used only when you tolerate interruptions, the offer has one and, on "
                                "Kubernetes, the provider documents spot GPU nodes; otherwise the on-demand price.")))
    notes.append(Note("prices", _("Prices are the stored list prices in USD; storage, network egress, CPU system "
                                  "nodes and taxes are not included.")))
    notes.append(Note("ranking", _("Ranking: offers that meet every required item first, then those where a "
                                   "required item is unknown; within each, a complete cost before an incomplete one, "
                                   "then the lowest total. An offer missing a required item is left out.")))
    if spec.models:
        notes.append(Note("packing", _("GPU packing counts memory only, one MIG profile size per GPU; throughput "
                                       "may need more GPUs. With models to pack, the GPU count comes from the "
                                       "packing, not from GPUs per node x nodes.")))
    return tuple(notes)


def advise(spec: WorkloadSpec, *, offers: list[OfferData], cells: dict[str, dict[str, Cell]],
           per_eur: dict[str, Decimal]) -> Advice:
    """Rank `offers` (already narrowed to the GPU, GPU count and location asked for) for `spec`.

    `cells` maps provider slug -> capability key -> Cell. Offers without an hourly price cannot be costed and are
    counted, not ranked; so are offers whose memory per GPU is below the minimum or not known (neither reported by
    the source nor in the catalog); offers missing a required item are counted per item, not ranked.
    """
    hours = monthly_hours(spec)
    kubernetes = needs_kubernetes(spec)
    requirements = requirements_for(spec)
    plans: dict[tuple[Decimal, tuple[str, ...]], PackingPlan] = {}
    excluded: Counter[str] = Counter()
    unpriced = too_small = memory_unknown = 0
    min_memory = min_gpu_memory_gb(spec)
    scored: list[tuple[tuple, OfferData, Cost, tuple[Judgement, ...], int, int]] = []

    for offer in offers:
        if offer.price_hour_usd is None:
            unpriced += 1
            continue
        memory = offer.memory_per_gpu_gb
        if min_memory is not None and (memory is None or memory < min_memory):
            if memory is None:
                memory_unknown += 1
            else:
                too_small += 1
            continue
        plan = None
        if spec.kind == INFERENCE and spec.models:
            if memory is None:
                memory_unknown += 1
                continue
            profiles = offer.gpu.mig_profiles if offer.gpu else ()
            plan = plans.setdefault((memory, profiles), pack_models(spec.models, memory, profiles))
        sizing = _gpus_and_instances(spec, offer, plan)
        provider_cells = cells.get(offer.provider_slug, {})
        judgements = tuple(judge(req, provider_cells, offer.gpu) for req in requirements)
        missing = [j.requirement.key for j in judgements
                   if j.requirement.importance == REQUIRED and j.status == MISSING]
        if missing:
            excluded.update(missing)
            continue
        if sizing is None:
            too_small += 1
            continue
        gpus_needed, instances = sizing
        tier = int(any(j.requirement.importance == REQUIRED and j.status == UNKNOWN for j in judgements))
        cost = monthly_cost(offer=offer, instances=instances, hours=hours, kubernetes=kubernetes, spot_ok=spec.spot_ok,
                            cells=provider_cells, per_eur=per_eur, min_nodes_kept=spec.min_nodes_kept)
        key = (tier, not cost.complete, cost.total_usd, offer.id)
        scored.append((key, offer, cost, judgements, tier, gpus_needed))

    scored.sort(key=lambda item: item[0])
    options = [Option(rank, offer, cost, judgements, tier, gpus)
               for rank, (_key, offer, cost, judgements, tier, gpus) in enumerate(scored, start=1)]
    shown = options[: spec.limit]
    chosen = next((o for o in options if o.offer.id == spec.offer_id), None) if spec.offer_id else None
    chosen = chosen or (shown[0] if shown else None)

    packing, prices = None, ()
    if chosen is not None and spec.kind == INFERENCE and spec.models:
        memory = chosen.offer.memory_per_gpu_gb
        profiles = chosen.offer.gpu.mig_profiles if chosen.offer.gpu else ()
        packing = plans[(memory, profiles)]
        prices = slice_prices(packing, chosen.price_per_gpu_hour_usd)

    verdict = None
    if spec.purchase_price_usd is not None:
        best = next((o for o in options if o.tier == 0 and o.cost.complete), None)
        verdict = break_even(
            purchase_usd=spec.purchase_price_usd,
            own_monthly_usd=(spec.power_usd_month or 0) + (spec.operations_usd_month or 0),
            rent_monthly_usd=best.cost.total_usd if best else None,
        )

    return Advice(
        spec=spec, hours=hours, kubernetes_needed=kubernetes, kind_note=_kind_note(spec), requirements=requirements,
        options=tuple(shown), candidates=len(offers), ranked=len(options), excluded_missing=dict(excluded),
        excluded_unpriced=unpriced, excluded_too_small=too_small, excluded_memory_unknown=memory_unknown,
        chosen=chosen, packing=packing,
        slice_prices=prices, break_even=verdict, assumptions=_assumptions(spec, hours, kubernetes),
    )

