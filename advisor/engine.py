"""The advisor's engine: `advise()`, pure functions over plain data (no database, no request), shared by the page and
the API.

Given a workload (`WorkloadSpec`), the candidate offers (`OfferData`), each provider's capability cells (`Cell`) and
the ECB rates, `advise()` turns the workload kind into requirements with reasons and judges every requirement against
the provider's sourced answer (met / missing / unknown, never guessing: `requirements`), packs inference models onto
GPUs and the pods onto nodes (whole GPUs, MIG with the GPU's real profiles, time-slicing, MPS: `placement`), costs
each offer per month on Kubernetes (GPU nodes x hours x price, plus the control-plane fee, plus the nodes that stay
up when a pool cannot scale to zero: `cost`) and ranks them: verified first, one row per SKU. The plain data in and
out is in `types`; the rules across input fields in `inputs`.

Nothing is invented: a fee we do not know is left out of the total and the cost is flagged incomplete; a
scale-to-zero answer we do not know is costed as "no" and flagged; a requirement whose answer is unknown is never
counted as met. Every judgement carries the capability cells it was read from, with their source URLs.

User-facing text is kept as lazy translations plus parameters (`Note`), so the same result renders in the language
of whoever reads it, and tests compare codes and numbers rather than prose.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from dataclasses import replace
from datetime import date
from decimal import Decimal

from django.utils.translation import gettext_lazy as _

from nodesoftware import compat, fit
from providers.capabilities import UNKNOWN

from . import sizing
from .cost import break_even, monthly_cost, monthly_hours
from .manifests import VLLM
from .placement import GPU_RESOURCES, pack_models, placement, slice_prices
from .requirements import (
    estimate_for,
    judge,
    min_gpu_memory_gb,
    needs_kubernetes,
    offer_cells,
    requirements_for,
    workload_models,
)
from .types import (
    INFERENCE,
    KINDS,
    MISSING,
    NOTEBOOK,
    REQUIRED,
    TRAINING,
    Advice,
    Cell,
    ModelNeed,
    Note,
    OfferAnswer,
    OfferData,
    Option,
    PackingPlan,
    ReplicaLayout,
    WorkloadSpec,
)


class AdviceRefused(Exception):
    """An advice not given now: both doors (page and API) answer 503 with `message` and Retry-After `retry_after`."""

    message = ""
    retry_after = 30


class AdviceOverBudget(AdviceRefused):
    """Ranking went past its time budget (settings.ADVISOR_BUDGET_SECONDS): the request is answered 503 rather than
    holding a web worker for as long as an unusual input takes."""

    message = _("This advice took longer than the advisor's time budget; retry later, or narrow it (a GPU, a "
                "location, fewer models or a shorter context).")
    retry_after = 30


class AdviceBusy(AdviceRefused):
    """Every advice slot of this process is computing (settings.ADVISOR_CONCURRENT_PER_PROCESS): the request is
    answered 503 at once rather than waiting in a web thread that the site's other pages need."""

    message = _("The advisor is answering other requests on this server; ask again in a few seconds.")
    retry_after = 2


VLLM_MIN_CAPABILITY = compat.capability(VLLM["min_compute_capability"])
PRECISION_MIN_CAPABILITY = {name: compat.capability(row["min_compute_capability"])
                            for name, row in VLLM["precision"].items() if "min_compute_capability" in row}


@functools.lru_cache(maxsize=4096)
def _node_runs_engine_image(provider_slug: str, gpu_slug: str, family: str, cuda: str, on: date) -> str:
    """yes / no / unknown: does the default node image of the provider's managed Kubernetes run the pinned vLLM
    image's CUDA on this GPU (nodesoftware.fit, the one compatibility table)? Kept per day: the answer moves with
    the node images' dated driver history, nothing else."""
    return fit.node_fit(provider_slug, gpu_slug, family, cuda=cuda, on=on).answer


def hardware_rules_out(spec: WorkloadSpec, offer: OfferData, kubernetes: bool) -> str | None:
    """The key of the hardware/software fact that rules the offer out, or None. For inference: an NVIDIA GPU below
    the pinned vLLM release's minimum compute capability ("engine_gpu") or below the one its quantisation kernels
    need for the chosen precision ("precision_gpu"), and, on Kubernetes, a node image whose driver cannot run the
    engine image's CUDA on that GPU ("node_cuda"). For training in FP8: a GPU without FP8 ("precision_gpu").
    Compute capabilities come from the one compatibility table (nodesoftware.compat); a GPU or driver it does not
    know rules nothing out (unknown is never counted as missing)."""
    if offer.gpu is None or offer.gpu.vendor != "nvidia":
        return None
    accelerator = compat.accelerator(offer.gpu.slug, offer.gpu.family)
    capability = accelerator.compute_capability if accelerator else None
    if spec.kind == INFERENCE:
        if capability and capability < VLLM_MIN_CAPABILITY:
            return "engine_gpu"
        floor = PRECISION_MIN_CAPABILITY.get(spec.precision)
        if capability and floor and capability < floor:
            return "precision_gpu"
        if kubernetes and _node_runs_engine_image(offer.provider_slug, offer.gpu.slug, offer.gpu.family,
                                                  VLLM["cuda"], date.today()) == fit.NO:
            return "node_cuda"
    elif spec.kind == TRAINING and spec.precision == sizing.FP8 and compat.dtypes(accelerator)["fp8"] == compat.NO:
        return "precision_gpu"
    return None


def host_rules_out(offer: OfferData, layouts: tuple[ReplicaLayout, ...], models: tuple[ModelNeed, ...],
                   gpus_per_node: int) -> bool:
    """True when the machine's host cannot serve the pods placed on it, where the source states its host: less RAM
    than a pod's share of the weights it loads (the checkpoint is read into host memory on its way to the GPUs), or
    fewer vCPUs than the `gpus_per_node` GPUs a node runs (vLLM runs one worker process per GPU). Unknown host
    resources rule nothing out."""
    weights = {model.name: model.weights_gb for model in models if model.weights_gb}
    if offer.ram_gb is not None:
        for layout in layouts:
            share = weights.get(layout.name)
            if share and offer.ram_gb < share / layout.pods_per_replica:
                return True
    return offer.vcpus is not None and offer.vcpus < gpus_per_node


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
        if kubernetes and offer.gpu is not None and offer.gpu.vendor not in GPU_RESOURCES:
            # TPUs and Gaudi are requested as other extended resources (google.com/tpu, habana.ai/gaudi) with their
            # own images; the manifests have neither, so these offers are left out, counted, rather than given
            # nvidia.com/gpu and a CUDA image.
            excluded["gpu_resource"] += 1
            continue
        ruled_out = hardware_rules_out(spec, offer, kubernetes)
        if ruled_out:
            excluded[ruled_out] += 1
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
        if models and host_rules_out(offer, layouts, models, min(offer.whole_gpus, -(-gpus_needed // instances))):
            excluded["host_resources"] += 1
            continue
        fabric = next((j for j in judgements if j.requirement.key == "rdma"), None)
        spans_nodes = fabric is not None and any(layout.pods_per_replica > 1 for layout in layouts)
        if spans_nodes and fabric.status == MISSING:
            # A replica spread over nodes without a multi-node fabric: left out, counted under the RDMA fabric.
            excluded["rdma"] += 1
            continue
        cost = monthly_cost(offer=offer, instances=instances, hours=hours, kubernetes=kubernetes, spot_ok=spec.spot_ok,
                            cells=provider_cells, per_eur=per_eur, min_nodes_kept=spec.min_nodes_kept)
        unverified = [j.requirement.key for j in judgements
                      if j.requirement.importance == REQUIRED and j.status == UNKNOWN]
        if spans_nodes and fabric.status == UNKNOWN and "rdma" not in unverified:
            unverified.append("rdma")
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
