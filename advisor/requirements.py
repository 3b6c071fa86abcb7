"""What a workload needs and whether an offer has it.

Needs: the memory estimate from a listed model or a parameter count (`advisor.sizing`), the model replicas to place,
the memory per GPU an offer must have, whether Kubernetes is needed at all, and the workload kind turned into
requirements (RDMA fabric, gang scheduling, RWX storage, GPU sharing, scale to zero, ...) each with the reason it
matters. Verdicts: each requirement judged met, missing or unknown against the offer's own Kubernetes answers where
there is one, else the provider's sourced capability cells (and for MIG the GPU catalog). An absent answer or
"unknown" is never counted as met, nor as missing; every judgement carries the cells it was read from.

Pure functions over the plain data in `advisor.types`.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import ROUND_CEILING, Decimal

from django.utils.translation import gettext_lazy as _

from providers.capabilities import RDMA_FABRICS, UNKNOWN

from . import sizing
from .placement import MIG_USER_GUIDE_URL
from .types import (
    BATCH,
    INFERENCE,
    MET,
    MIG,
    MISSING,
    MPS,
    NOTEBOOK,
    PREFERRED,
    REQUIRED,
    SHARING_MODES,
    TIME_SLICING,
    TRAINING,
    WHOLE,
    Cell,
    GpuData,
    Judgement,
    ModelNeed,
    Note,
    OfferAnswer,
    Requirement,
    WorkloadSpec,
)

# --- what the workload needs -------------------------------------------------------------------------------------


def model_card(spec: WorkloadSpec) -> sizing.ModelCard | None:
    return sizing.MODEL_CARDS.get(spec.model) if spec.model else None


def estimate_for(spec: WorkloadSpec) -> sizing.Estimate | None:
    """The memory estimate from a listed model or a parameter count: per replica for inference, for the whole job
    for training or a fine-tune in a notebook; None when the user gave neither."""
    if not spec.sized or spec.kind == BATCH:
        return None
    card = model_card(spec)
    if spec.model and card is None:
        return None
    if spec.kind == INFERENCE:
        return sizing.inference_estimate(card=card, parameters_b=spec.parameters_b, precision=spec.precision,
                                         context_tokens=spec.context_tokens, concurrency=spec.concurrency)
    return sizing.training_estimate(card=card, parameters_b=spec.parameters_b, precision=spec.precision,
                                    optimizer=spec.optimizer, method=spec.method, adapter_percent=spec.adapter_percent)


def workload_models(spec: WorkloadSpec, estimate: sizing.Estimate | None) -> tuple[ModelNeed, ...]:
    """The inference replicas to place: the sized model's, else the expert's `count x GB` lines."""
    if spec.kind != INFERENCE:
        return ()
    if estimate is not None:
        card = model_card(spec)
        name = card.slug if card else f"model-{spec.parameters_b}b"
        return (ModelNeed(spec.replicas, estimate.memory_gb, estimate.tp_degrees, name, card.hf_id if card else "",
                          estimate.weights_gb),)
    return spec.models


def needs_kubernetes(spec: WorkloadSpec) -> bool:
    return spec.kind != NOTEBOOK


def min_gpu_memory_gb(spec: WorkloadSpec, estimate: sizing.Estimate | None = None,
                      models: tuple[ModelNeed, ...] = ()) -> Decimal | None:
    """The memory per GPU an offer must have: the user's minimum; else (inference, shared GPUs) the largest model
    that must fit on one GPU; else (training sized from a model) the model states sharded over every GPU."""
    if spec.gpu_memory_min_gb is not None:
        return spec.gpu_memory_min_gb
    if spec.kind == INFERENCE and models and spec.sharing != WHOLE:
        return max(model.memory_gb for model in models)
    if spec.kind in (TRAINING, NOTEBOOK) and estimate is not None:
        gpus = spec.gpus_per_node * spec.nodes
        return (estimate.memory_gb / gpus).quantize(Decimal("0.1"), ROUND_CEILING)
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
        if spec.multi_node:
            add("rdma", PREFERRED, "inference_multi_node_rdma",
                _("A replica spread over several nodes exchanges activations between them for every token; an RDMA "
                  "fabric keeps that from becoming the bottleneck."))
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


def cell_or_unknown(cells: dict[str, Cell], key: str) -> Cell:
    """The cell for `key`, or an unknown one where there is none: an absent answer is unknown, never no."""
    return cells.get(key) or Cell(key=key, value=UNKNOWN)


def _yes_no(cell: Cell) -> str:
    if cell.value == "yes":
        return MET
    if cell.value in ("no", "n/a"):
        return MISSING
    return UNKNOWN


# Which per-offer Kubernetes answers decide a requirement (any "yes" meets it); the rest (gang scheduling, RWX
# storage, the vendors' own sharing schemes) are provider-wide and read from the provider's cells.
ANSWER_KEYS = {
    "kubernetes": ("managed_node", "byo"),
    "managed_control_plane": ("managed_node",),
    "rdma": ("rdma",),
    "gpu_sharing": (MIG, TIME_SLICING, MPS),
    MIG: (MIG,),
    TIME_SLICING: (TIME_SLICING,),
    MPS: (MPS,),
    "scale_to_zero": ("scale_to_zero",),
    "spot_nodes": ("spot_nodes",),
    "node_autoscaling": ("node_autoscaling",),
    "gpu_operator": ("gpu_operator",),
}
NOT_THERE = ("no", "n/a", "not_on_this_machine")


def answer_cell(answer: OfferAnswer) -> Cell:
    """An offer's answer in the shape of a capability cell, so judgements cite it the same way."""
    return Cell(key=answer.key, value=answer.state, detail=answer.reason,
                source_url=answer.sources[0] if answer.sources else "", confidence="offer")


def offer_cells(cells: dict[str, Cell], answers: dict[str, OfferAnswer]) -> dict[str, Cell]:
    """The provider's cells with this offer's answers laid over the ones costing reads (managed or your own
    control plane, spot nodes, scale to zero)."""
    merged = dict(cells)
    for key in ("scale_to_zero", "spot_nodes"):
        if key in answers:
            answer = answers[key]
            value = "no" if answer.state == "not_on_this_machine" else answer.state
            merged[key] = replace(answer_cell(answer), value=value)
    managed, byo = answers.get("managed_node"), answers.get("byo")
    if managed is not None and managed.state == "yes":
        merged["offering"] = replace(answer_cell(managed), key="offering", value="managed")
    elif byo is not None and byo.state == "yes":
        merged["offering"] = replace(answer_cell(byo), key="offering", value="byo")
    return merged


def _judge_by_answers(requirement: Requirement, answers: dict[str, OfferAnswer],
                      cells: dict[str, Cell]) -> Judgement | None:
    keys = ANSWER_KEYS.get(requirement.key)
    present = [answers[k] for k in keys or () if k in answers]
    if not present:
        return None
    evidence = [answer_cell(a) for a in present]
    if requirement.key == "gpu_sharing":
        evidence.append(cell_or_unknown(cells, "vendor_sharing"))
    met = [c for c in evidence if c.value == "yes"]
    if met:
        if requirement.key == "rdma" and "fabric" in answers:
            fabric = answers["fabric"]
            # name the fabric (e.g. "infiniband") where the answer's reason is that name
            named = fabric.reason if fabric.reason and len(fabric.reason) <= 40 else fabric.state
            met.append(replace(answer_cell(fabric), value=named))
        return Judgement(requirement, MET, tuple(met))
    answered_all = len(present) == len(keys or ())
    status = MISSING if answered_all and all(c.value in NOT_THERE for c in evidence) else UNKNOWN
    return Judgement(requirement, status, tuple(evidence))


def _judge_infiniband(requirement: Requirement, cells: dict[str, Cell], answers: dict[str, OfferAnswer]) -> Judgement:
    """A named fabric, read from the offer's own answer where there is one: met where the machine's RDMA fabric is
    InfiniBand, missing where it has none or another one (RoCE, EFA or GPUDirect-TCPX do not count), unknown where
    its fabric is unknown, even if the provider has InfiniBand on other machines ("some GPU instance types"). Only
    an offer with no answer of its own is judged by the provider's sourced `infiniband` cell."""
    rdma, fabric = answers.get("rdma"), answers.get("fabric")
    if rdma is None:
        cell = cell_or_unknown(cells, "infiniband")
        return Judgement(requirement, _yes_no(cell), (cell,))
    if rdma.state in NOT_THERE:
        return Judgement(requirement, MISSING, (answer_cell(rdma),))
    if rdma.state == "yes" and fabric is not None and fabric.state not in (UNKNOWN, ""):
        named = replace(answer_cell(fabric), value=fabric.state)
        return Judgement(requirement, MET if fabric.state == "infiniband" else MISSING, (answer_cell(rdma), named))
    return Judgement(requirement, UNKNOWN, tuple(answer_cell(a) for a in (rdma, fabric) if a is not None))


def judge(requirement: Requirement, cells: dict[str, Cell], gpu: GpuData | None,
          answers: dict[str, OfferAnswer] | None = None) -> Judgement:
    """Met, missing or unknown, read from the offer's own Kubernetes answers where there is one for the
    requirement, else from the provider's cells (and for MIG the GPU catalog).

    "n/a" (and "not_on_this_machine") counts as missing; an absent answer or "unknown" stays unknown. For an "any of"
    requirement one sourced "yes" is enough, and it is missing only when every alternative is answered no.
    """
    if requirement.key == "infiniband":
        return _judge_infiniband(requirement, cells, answers or {})
    if answers:
        judged = _judge_by_answers(requirement, answers, cells)
        if judged is not None:
            return judged
    key = requirement.key
    if key in ("kubernetes", "managed_control_plane"):
        cell = cell_or_unknown(cells, "offering")
        accepted = ("managed", "byo") if key == "kubernetes" else ("managed",)
        status = MET if cell.value in accepted else UNKNOWN if cell.value == UNKNOWN else MISSING
        return Judgement(requirement, status, (cell,))
    if key == "gpu_operator":
        cell = cell_or_unknown(cells, key)
        status = (MET if cell.value in ("preinstalled", "add_on")
                  else UNKNOWN if cell.value == UNKNOWN else MISSING)
        return Judgement(requirement, status, (cell,))
    if key == MIG:
        cell = cell_or_unknown(cells, MIG)
        if gpu is not None and not gpu.mig_profiles:
            note = Note("gpu_without_mig", _("%(gpu)s has no MIG profiles in NVIDIA's MIG User Guide."),
                        {"gpu": gpu.name}, MIG_USER_GUIDE_URL)
            return Judgement(requirement, MISSING, (cell,), note)
        if gpu is None:
            return Judgement(requirement, UNKNOWN, (cell,), Note("gpu_unknown", _("The GPU model is not known.")))
        return Judgement(requirement, _yes_no(cell), (cell,))
    if key in ("rdma", "gpu_sharing"):
        keys = RDMA_FABRICS if key == "rdma" else (MIG, TIME_SLICING, MPS, "vendor_sharing")
        alternatives = [cell_or_unknown(cells, k) for k in keys]
        if key == "gpu_sharing" and gpu is not None and not gpu.mig_profiles:
            alternatives = [c for c in alternatives if c.key != MIG]
        met = [c for c in alternatives if c.value == "yes"]
        if met:
            return Judgement(requirement, MET, tuple(met))
        status = MISSING if all(c.value in ("no", "n/a") for c in alternatives) else UNKNOWN
        return Judgement(requirement, status, tuple(alternatives))
    cell = cell_or_unknown(cells, key)
    return Judgement(requirement, _yes_no(cell), (cell,))
