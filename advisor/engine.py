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

import time
from collections import Counter
from dataclasses import replace
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from django.utils.translation import gettext_lazy as _

from providers.capabilities import RDMA_FABRICS, UNKNOWN
from scrapers.normalize import to_usd

from . import sizing
from .placement import MIG_USER_GUIDE_URL, pack_models, placement, slice_prices
from .types import (
    BATCH,
    HOURS_PER_MONTH,
    INFERENCE,
    KINDS,
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
    Advice,
    BreakEven,
    Cell,
    Cost,
    GpuData,
    Judgement,
    ModelNeed,
    Note,
    OfferAnswer,
    OfferData,
    Option,
    PackingPlan,
    Requirement,
    WorkloadSpec,
)


class AdviceOverBudget(Exception):
    """Ranking went past its time budget (settings.ADVISOR_BUDGET_SECONDS): the request is answered 503 rather than
    holding a web worker for as long as an unusual input takes."""


CENT = Decimal("0.01")


# --- input rules shared by the page's form and the API's serializer ----------------------------------------------


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
        return (ModelNeed(spec.replicas, estimate.memory_gb, estimate.tp_degrees, name, card.hf_id if card else ""),)
    return spec.models


def spec_errors(spec: WorkloadSpec) -> dict[str, str]:
    """Rules across fields, as {field: message}; each interface checks types and ranges itself."""
    errors: dict[str, str] = {}
    if spec.hours_per_month is not None and spec.utilisation_percent is not None:
        errors["hours_per_month"] = str(_("Give hours per month or a utilisation, not both."))
    if spec.model and spec.parameters_b is not None:
        errors["parameters_b"] = str(_("Pick a listed model or give a parameter count, not both."))
    elif spec.model and spec.model not in sizing.MODEL_CARDS:
        errors["model"] = str(_("Not a listed model."))
    if spec.sized and spec.models:
        errors["models"] = str(_("Size from a model or list models to pack as GB, not both."))
    elif spec.models and spec.kind != INFERENCE:
        errors["models"] = str(_("Models to pack apply to inference serving only."))
    if spec.sized and spec.kind == BATCH:
        errors["model"] = str(_("Sizing from a model applies to inference, training and fine-tunes."))
    full_low_bits = spec.method == sizing.FULL and spec.precision != sizing.FP16
    if spec.kind in (TRAINING, NOTEBOOK) and spec.sized and full_low_bits:
        errors["precision"] = str(_("A full fine-tune is costed as mixed-precision FP16/BF16 training; 8- and 4-bit "
                                    "precisions apply to the frozen base of LoRA."))
    if spec.multi_node and spec.kind != INFERENCE:
        errors["multi_node"] = str(_("Replicas across nodes apply to inference; training spans nodes with Nodes."))
    has_models = bool(spec.models) or (spec.kind == INFERENCE and spec.sized)
    if spec.sharing != WHOLE and spec.kind != INFERENCE:
        errors["sharing"] = str(_("GPU sharing applies to inference serving only."))
    elif spec.sharing != WHOLE and not has_models:
        errors["sharing"] = str(_("Give the models to pack to share GPUs."))
    if spec.gpu and spec.gpu_family:
        errors["gpu_family"] = str(_("Give a GPU model or a GPU family, not both."))
    sized_by_models = (spec.kind == INFERENCE and has_models) or (spec.kind in (TRAINING, NOTEBOOK) and spec.sized)
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


def _cell(cells: dict[str, Cell], key: str) -> Cell:
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
        evidence.append(_cell(cells, "vendor_sharing"))
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


def judge(requirement: Requirement, cells: dict[str, Cell], gpu: GpuData | None,
          answers: dict[str, OfferAnswer] | None = None) -> Judgement:
    """Met, missing or unknown, read from the offer's own Kubernetes answers where there is one for the
    requirement, else from the provider's cells (and for MIG the GPU catalog).

    "n/a" (and "not_on_this_machine") counts as missing; an absent answer or "unknown" stays unknown. For an "any of"
    requirement one sourced "yes" is enough, and it is missing only when every alternative is answered no.
    """
    if answers:
        judged = _judge_by_answers(requirement, answers, cells)
        if judged is not None:
            return judged
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


def _kind_note(spec: WorkloadSpec) -> Note:
    if spec.kind == NOTEBOOK:
        return Note("notebook", _("A single notebook or fine-tune runs on one machine: Kubernetes adds a control "
                                  "plane to pay for and operate without much benefit. The options below are plain "
                                  "GPU instances; stop them when you are done."))
    if spec.kind == TRAINING and spec.nodes == 1:
        return Note("training_single_node", _("One node: gradients stay inside the node (NVLink or PCIe), so no "
                                              "RDMA fabric or gang scheduling is needed."))
    return Note(spec.kind, KINDS[spec.kind])


def _assumptions(spec: WorkloadSpec, hours: Decimal, kubernetes: bool,
                 models: tuple[ModelNeed, ...]) -> tuple[Note, ...]:
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
    notes.append(Note("ranking", _("Ranking: by total monthly cost among the offers whose own answers meet every "
                                   "required item and whose whole cost is known. An offer with a required item or "
                                   "the control-plane fee unknown is listed apart under \"may also fit "
                                   "(unverified)\", never above a verified one, fewest unknowns first; an offer "
                                   "missing a required item is left out. One row per instance type, in its cheapest "
                                   "region.")))
    if models:
        notes.append(Note("packing", _("GPU packing counts memory only, one MIG profile size per GPU; throughput "
                                       "may need more GPUs. A replica lives on one node, split over 1, 2, 4 or 8 "
                                       "GPUs (tensor parallel) unless you allow replicas across nodes; a fractional "
                                       "GPU is never offered for a replica that needs whole GPUs.")))
    return tuple(notes)


def _sku(offer: OfferData) -> tuple:
    return (offer.provider_slug, offer.instance_type, offer.gpu.slug if offer.gpu else offer.gpu_name,
            offer.gpu_count)


def _one_row_per_sku(options: list[Option]) -> list[Option]:
    """Keep each SKU's first (cheapest) row, naming the other regions it is also offered in."""
    rows: dict[tuple, Option] = {}
    others: dict[tuple, list[str]] = {}
    for option in options:
        key = _sku(option.offer)
        if key in rows:
            others[key].append(option.offer.region)
        else:
            rows[key] = option
            others[key] = []
    return [replace(row, rank=rank, also_in=tuple(others[key]))
            for rank, (key, row) in enumerate(rows.items(), start=1)]


def advise(spec: WorkloadSpec, *, offers: list[OfferData], cells: dict[str, dict[str, Cell]],
           per_eur: dict[str, Decimal], answers: dict[int, dict[str, OfferAnswer]] | None = None,
           deadline: float | None = None) -> Advice:
    """Rank `offers` (already narrowed to the GPU, GPU count and location asked for) for `spec`.

    `cells` maps provider slug -> capability key -> Cell; `answers` maps offer id -> the offer's own Kubernetes
    answers (see OfferAnswer), which decide a requirement wherever they answer it. Offers without an hourly price
    cannot be costed and are counted, not ranked; so are offers whose memory per GPU is below the minimum or not
    known, offers that cannot hold a replica on one node, and offers missing a required item (counted per item).

    Verified options (every required item met, the whole cost known) are ranked by total monthly cost; the others
    form the "may also fit (unverified)" group, ranked apart: fewest unknowns first, then the known part of their
    cost. Each group keeps one row per SKU (provider, instance type, GPU and count), in its cheapest region.

    `deadline` (a time.monotonic() value) bounds the work: past it, AdviceOverBudget is raised.
    """
    answers = answers or {}
    hours = monthly_hours(spec)
    kubernetes = needs_kubernetes(spec)
    requirements = requirements_for(spec)
    estimate = estimate_for(spec)
    models = workload_models(spec, estimate)
    plans: dict[tuple[Decimal, tuple[str, ...]], PackingPlan] = {}
    excluded: Counter[str] = Counter()
    unpriced = too_small = memory_unknown = 0
    min_memory = min_gpu_memory_gb(spec, estimate, models)
    scored: list[tuple[tuple, Option]] = []

    for number, offer in enumerate(offers):
        if deadline is not None and number % 64 == 0 and time.monotonic() > deadline:
            raise AdviceOverBudget
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
        if models:
            if memory is None:
                memory_unknown += 1
                continue
            profiles = offer.gpu.mig_profiles if offer.gpu else ()
            plan = plans.setdefault((memory, profiles), pack_models(models, memory, profiles))
        offer_answers = answers.get(offer.id, {})
        provider_cells = offer_cells(cells.get(offer.provider_slug, {}), offer_answers)
        judgements = tuple(judge(req, provider_cells, offer.gpu, offer_answers) for req in requirements)
        missing = [j.requirement.key for j in judgements
                   if j.requirement.importance == REQUIRED and j.status == MISSING]
        if missing:
            excluded.update(missing)
            continue
        placed = placement(spec, models, offer, plan)
        if placed is None:
            too_small += 1
            continue
        layouts, gpus_needed, instances = placed
        cost = monthly_cost(offer=offer, instances=instances, hours=hours, kubernetes=kubernetes, spot_ok=spec.spot_ok,
                            cells=provider_cells, per_eur=per_eur, min_nodes_kept=spec.min_nodes_kept)
        unverified = [j.requirement.key for j in judgements
                      if j.requirement.importance == REQUIRED and j.status == UNKNOWN]
        if not cost.complete:
            unverified.append("control_plane_fee")
        tier = int(bool(unverified))
        option = Option(0, offer, cost, judgements, tier, gpus_needed, layouts, unverified=tuple(unverified))
        # Verified: cheapest first. Unverified: fewest unknowns first (an offer whose only unknown is its fee before
        # one that may lack a must-have), then cheapest; the groups never mix.
        scored.append(((tier, len(unverified), cost.total_usd, offer.id), option))

    scored.sort(key=lambda item: item[0])
    verified = _one_row_per_sku([o for _key, o in scored if o.tier == 0])
    unverified_rows = _one_row_per_sku([o for _key, o in scored if o.tier == 1])
    shown, shown_unverified = verified[: spec.limit], unverified_rows[: spec.limit]
    chosen = None
    if spec.offer_id:
        chosen = next((o for _key, o in scored if o.offer.id == spec.offer_id), None)
    chosen = chosen or (shown[0] if shown else shown_unverified[0] if shown_unverified else None)

    packing, prices = None, ()
    if chosen is not None and models:
        memory = chosen.offer.memory_per_gpu_gb
        profiles = chosen.offer.gpu.mig_profiles if chosen.offer.gpu else ()
        packing = plans[(memory, profiles)]
        prices = slice_prices(packing, chosen.price_per_gpu_hour_usd)

    verdict = None
    if spec.purchase_price_usd is not None:
        best = verified[0] if verified else None
        verdict = break_even(
            purchase_usd=spec.purchase_price_usd,
            own_monthly_usd=(spec.power_usd_month or 0) + (spec.operations_usd_month or 0),
            rent_monthly_usd=best.cost.total_usd if best else None,
        )

    assumptions = _assumptions(spec, hours, kubernetes, models)
    if models and not scored and too_small and not spec.multi_node:
        assumptions += (Note("allow_multi_node", _("No offer holds a replica on one node: allow a replica to span "
                                                   "several nodes to consider them.")),)
    return Advice(
        spec=spec, hours=hours, kubernetes_needed=kubernetes, kind_note=_kind_note(spec), requirements=requirements,
        options=tuple(shown), unverified=tuple(shown_unverified), candidates=len(offers), ranked=len(scored),
        excluded_missing=dict(excluded), excluded_unpriced=unpriced, excluded_too_small=too_small,
        excluded_memory_unknown=memory_unknown, chosen=chosen, packing=packing, slice_prices=prices,
        break_even=verdict, assumptions=assumptions, estimate=estimate,
    )
