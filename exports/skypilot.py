"""SkyPilot's `kubernetes.pricing` config block, as SkyPilot's docs define it
(https://docs.skypilot.co/en/latest/reference/kubernetes/kubernetes-pricing.html; schema `_PRICING_SCHEMA` in
sky/utils/schemas.py @ 00052dfe0d132c5ad6aa9a175572b0695f747c80, recorded in exports/schemas/ and checked in the
tests): per-accelerator all-in hourly rates under `accelerators`, optionally per context under
`kubernetes.context_configs.<context>.pricing`.

Accelerator names are SkyPilot's canonical GPU names (CANONICAL_GPU_NAMES in sky/utils/gpu_names.py @
4e419473d532290b3837fe09c6cb2dc6d9f79f82), the names SkyPilot gives Kubernetes GPU nodes. A GPU without one of those
names is left out and counted. The rate is the machine's on-demand price per GPU (an all-in rate, as SkyPilot
wants: it includes the machine's CPU and memory); when several selected offers have the same accelerator, the
cheapest one's rate is used, and a comment names the offer it came from.
"""

from __future__ import annotations

from decimal import Decimal

import yaml

from providers import node_labels

from .machines import Selection, Skipped, money, whole_gpus

MEGA = ("cloud.google.com/gke-accelerator", "nvidia-h100-mega-80gb")

# Our catalog slug -> SkyPilot's canonical name. NVL and other distinct models are not mapped: SkyPilot treats a
# suffix that is not packaging (SXM, PCIe, memory) as another GPU (gpu_names.is_packaging_variant).
SKYPILOT_NAMES = {
    "t4": "T4", "l4": "L4", "a10": "A10", "a10g": "A10G", "a16": "A16", "a30": "A30", "a40": "A40", "l40": "L40",
    "l40s": "L40S", "a100": "A100", "a100-80gb": "A100-80GB", "a100-80gb-sxm": "A100-80GB",
    "a100-80gb-pcie": "A100-80GB", "h100": "H100", "h100-sxm": "H100", "h100-pcie": "H100", "h200": "H200",
    "h200-sxm": "H200", "b200": "B200", "b300": "B300", "gb200": "GB200", "gb300": "GB300", "gh200": "GH200",
    "v100": "V100", "v100-32gb": "V100-32GB", "p100": "P100", "p40": "P40", "quadro-p4000": "P4000", "p4": "P4",
    "t4g": "T4g", "k80": "K80", "m60": "M60",
    "rtx-a4000": "A4000", "rtx-a5000": "A5000", "rtx-a6000": "A6000", "rtx-6000-ada": "RTX6000-Ada",
}


def skypilot_pricing(selection: Selection) -> tuple[dict[str, Decimal], dict[str, dict], Skipped]:
    """(rate per accelerator, offer row each rate came from, skipped)."""
    skipped = Skipped()
    rates: dict[str, Decimal] = {}
    origins: dict[str, dict] = {}
    for row in selection.rows:
        gpus = whole_gpus(row, skipped)
        if gpus is None:
            continue
        name = SKYPILOT_NAMES.get(row["gpu__slug"] or "")
        if node_labels.accelerator_label(row["provider__slug"], row["instance_type"]) == MEGA:
            name = "H100-MEGA"  # SkyPilot's own name for GKE's A3 Mega nodes (a canonical name of its own)
        if name is None:
            skipped.add(f"GPU {row['gpu__slug'] or 'unknown'} has no SkyPilot canonical name")
            continue
        rate = row["price_hour_usd"] / gpus
        if name not in rates or rate < rates[name]:
            rates[name], origins[name] = rate, row
    return rates, origins, skipped


def skypilot_block(selection: Selection, *, context: str | None = None) -> dict:
    rates, _, _ = skypilot_pricing(selection)
    pricing = {"accelerators": {name: float(money(rate)) for name, rate in sorted(rates.items())}}
    if context:
        return {"kubernetes": {"context_configs": {context: {"pricing": pricing}}}}
    return {"kubernetes": {"pricing": pricing}}


def skypilot_yaml(selection: Selection, *, context: str | None = None) -> str:
    rates, origins, skipped = skypilot_pricing(selection)
    lines = [*selection.header_lines("SkyPilot kubernetes.pricing"),
             "merge into ~/.sky/config.yaml (or the API server's config); rates are all-in USD per accelerator-hour",
             *(f"{name}: offer {row['id']} {row['provider__slug']} {row['instance_type']} {row['region'] or '-'}"
               + (f" price as of {row['price_as_of']:%Y-%m-%d}" if row["price_as_of"] else " price date not stated")
               for name, row in sorted(origins.items())),
             *skipped.lines()]
    head = "".join(f"# {line}\n" for line in lines)
    return head + yaml.safe_dump(skypilot_block(selection, context=context), sort_keys=False)
