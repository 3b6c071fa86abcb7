"""Turning validated input into the engine's WorkloadSpec, shared by the page's form and the API's serializer, so the
same answers give the same spec (and so the same advice) whichever door they came in by: the bounds each checks
(`MAX_*`), the spec built from cleaned values (`spec_from_cleaned`) and the rules across fields (`spec_errors`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils.translation import gettext_lazy as _

from . import placement, sizing
from .types import BATCH, INFERENCE, NOTEBOOK, TRAINING, WHOLE, ModelNeed, WorkloadSpec

# Upper bounds that keep the arithmetic and the page sane; far above any real single workload.
MAX_NODES = placement.MAX_NODES
MAX_GPUS_PER_NODE = 64
MAX_MODEL_LINES = 50
MAX_MODEL_REPLICAS = 1000
MAX_MEMORY_GB = Decimal("10000")
MAX_MONEY = Decimal("1000000000")
MAX_PARAMETERS_B = Decimal("10000")
MAX_CONTEXT_TOKENS = 10_000_000
MAX_CONCURRENCY = 10_000


def _plain(value: Decimal | None) -> Decimal | None:
    """One spelling per number ("300", "300.00" and "3E+2" -> 300), so the form and the JSON body give equal specs
    and the same sentences."""
    if value is None:
        return None
    value = Decimal(value)
    return value.quantize(Decimal(1)) if value == value.to_integral_value() else value.normalize()


def spec_from_cleaned(data: dict[str, Any]) -> WorkloadSpec:
    """`data`: cleaned values keyed like WorkloadSpec's fields (models as (count, memory_gb) pairs)."""
    data = {key: _plain(value) if isinstance(value, Decimal) else value for key, value in data.items()}
    return WorkloadSpec(
        kind=data["kind"],
        gpu=data.get("gpu") or None,
        gpu_family=data.get("gpu_family") or None,
        gpu_memory_min_gb=data.get("gpu_memory_min_gb"),
        gpus_per_node=data.get("gpus_per_node") or 1,
        nodes=data.get("nodes") or 1,
        hours_per_month=data.get("hours_per_month"),
        utilisation_percent=data.get("utilisation_percent"),
        models=tuple(ModelNeed(int(count), _plain(Decimal(memory)))
                     for count, memory in data.get("models") or ()),
        sharing=data.get("sharing") or WHOLE,
        spot_ok=bool(data.get("spot_ok")),
        countries=tuple(sorted(set(data.get("countries") or ()))),
        continents=tuple(sorted(set(data.get("continents") or ()))),
        must_haves=tuple(sorted(set(data.get("must_haves") or ()))),
        min_nodes_kept=1 if data.get("min_nodes_kept") is None else data["min_nodes_kept"],
        purchase_price_usd=data.get("purchase_price_usd"),
        power_usd_month=data.get("power_usd_month"),
        operations_usd_month=data.get("operations_usd_month"),
        offer_id=data.get("offer_id"),
        limit=data.get("limit") or 20,
        model=data.get("model") or None,
        parameters_b=data.get("parameters_b"),
        precision=data.get("precision") or sizing.FP16,
        context_tokens=data.get("context_tokens") or 8192,
        concurrency=data.get("concurrency") or 1,
        replicas=data.get("replicas") or 1,
        optimizer=data.get("optimizer") or sizing.ADAM,
        method=data.get("method") or sizing.FULL,
        adapter_percent=data.get("adapter_percent"),
        multi_node=bool(data.get("multi_node")),
        kueue_queue=data.get("kueue_queue") or "",
    )


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
