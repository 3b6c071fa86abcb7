"""The labels and taints each provider's managed-Kubernetes GPU nodes carry: one sourced table
(providers/data/node_labels.toml, each entry with its source URL and verified-on date) read by the exports (Kueue
ResourceFlavors, OpenCost CSV) and meant for the advisor's manifests too.

`node_labels_for(provider_slug, instance_type)` answers with the node labels that select a machine type, or None when
the provider does not document label values we can name from our own offer data: such a machine is left out of a
label-keyed export and counted, never given a made-up label. Label values are checked against Kubernetes' label
value syntax (63 characters, alphanumerics with `-_.` inside), so a price-list name with spaces is refused too.
Pure functions over a file read once; no database.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_FILE = Path(__file__).parent / "data" / "node_labels.toml"
# https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
KNOWN = "instance_type"


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class SpotMarker:
    key: str
    value: str
    taint: Taint | None
    source_url: str


@dataclass(frozen=True)
class ProviderLabels:
    slug: str
    service: str
    instance_type_known: bool
    region_known: bool
    spot: SpotMarker | None
    accelerator_key: str | None
    accelerator_values: dict[str, str]
    topology_keys: tuple[str, ...]
    none_documented: tuple[str, ...]
    source_urls: tuple[str, ...]
    verified_on: str
    inferred: bool = False  # values read from the provider's own code, not a page about its managed Kubernetes
    basis: str = ""
    region_pattern: str = ""  # the offer regions its nodes' region label carries (AWS: not Local Zone groups)


@dataclass(frozen=True)
class GpuSharingLabels:
    """A provider that partitions (MIG) or shares (time-sharing, MPS) GPUs itself, per node pool: the node labels a
    pod selects; the pod asks for whole `nvidia.com/gpu` (one partition or one share)."""

    partition_label: str
    strategy_label: str
    strategy_values: dict[str, str]  # the advisor's sharing mode (time_slicing, mps) -> the label's value
    clients_label: str
    source_urls: tuple[str, ...]


@cache
def _table() -> dict:
    with DATA_FILE.open("rb") as handle:
        return tomllib.load(handle)


def well_known() -> dict:
    """The Kubernetes well-known label keys (instance type, region, zone) with their source."""
    return _table()["kubernetes"]


@cache
def provider_labels(slug: str) -> ProviderLabels | None:
    """The provider's entry, or None when the table has none (nothing is documented for it)."""
    entry = _table().get(slug)
    if entry is None or slug == "kubernetes":
        return None
    spot = None
    if entry.get("spot"):
        first = entry["spot"][0]  # the first listed is the provider's own mechanism; alternatives are noted in `where`
        taint = Taint(**first["taint"]) if "taint" in first else None
        spot = SpotMarker(first["key"], first["value"], taint, first["source_url"])
    accelerator = (entry.get("accelerator") or [None])[0]
    urls = [entry["source_url"], *(item["source_url"] for key in ("spot", "accelerator", "topology")
                                   for item in entry.get(key, []))]
    return ProviderLabels(
        slug=slug, service=entry["service"],
        instance_type_known=entry["instance_type_values"] == KNOWN,
        region_known=entry["region_values"] == "region",
        spot=spot,
        accelerator_key=accelerator["key"] if accelerator else None,
        accelerator_values=dict(accelerator["values"]) if accelerator else {},
        topology_keys=tuple(key for item in entry.get("topology", []) for key in item["keys"]),
        none_documented=tuple(entry.get("none_documented", [])),
        source_urls=tuple(dict.fromkeys(urls)),
        verified_on=str(entry["verified_on"]),
        inferred=entry.get("confidence") == "inferred",
        basis=entry.get("basis", ""),
        region_pattern=entry.get("region_pattern", ""),
    )


@cache
def gpu_sharing_labels(slug: str) -> GpuSharingLabels | None:
    """The provider's own GPU partitioning and sharing labels, or None where NVIDIA's device plugin and GPU Feature
    Discovery do it (the GPU Operator, installed by the provider or by you)."""
    entry = (_table().get(slug) or {}).get("gpu_sharing")
    if entry is None or slug == "kubernetes":
        return None
    return GpuSharingLabels(
        partition_label=entry["partition_label"], strategy_label=entry["strategy_label"],
        strategy_values=dict(entry["strategy_values"]), clients_label=entry["clients_label"],
        source_urls=tuple(entry[key] for key in ("partition_source_url", "source_url", "mps_source_url")))


def inferred_notes(slugs) -> list[str]:
    """One line per provider among `slugs` whose label values are inferred, saying from what."""
    notes = []
    for slug in sorted(set(slugs)):
        labels = provider_labels(slug)
        if labels is not None and labels.inferred:
            notes.append(f"{slug}: node labels inferred from {labels.basis}, not stated for {labels.service}")
    return notes


def valid_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(LABEL_VALUE.match(value))


def instance_type_label(slug: str, instance_type: str, *, documented_only: bool = False) -> dict[str, str] | None:
    """{node.kubernetes.io/instance-type: <instance type>} when the provider's nodes carry our instance type there and
    it is a valid label value; None otherwise. `documented_only` also refuses values inferred from a provider's code
    (a manifest whose selector matches no node never starts; an export row that matches none costs nothing)."""
    labels = provider_labels(slug)
    if labels is None or not labels.instance_type_known or not valid_label_value(instance_type):
        return None
    if documented_only and labels.inferred:
        return None
    return {well_known()["instance_type_label"]: instance_type}


def region_value(slug: str, region: str) -> str | None:
    """The topology.kubernetes.io/region value the provider's nodes carry for our offer region, or None."""
    labels = provider_labels(slug)
    if labels is None or not labels.region_known or not region or not valid_label_value(region):
        return None
    if labels.region_pattern and not re.match(labels.region_pattern, region):
        return None  # an AWS Local Zone or Wavelength Zone group: its nodes carry the parent Region
    return region


def accelerator_label(slug: str, instance_type: str) -> tuple[str, str] | None:
    """(key, value) of the provider's own GPU label on this machine type's nodes, where documented."""
    labels = provider_labels(slug)
    if labels is None or labels.accelerator_key is None:
        return None
    for pattern, value in labels.accelerator_values.items():
        if fnmatch.fnmatchcase(instance_type, pattern):
            return labels.accelerator_key, value
    return None
