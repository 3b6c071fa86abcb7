"""Kueue objects (kueue.x-k8s.io/v1beta2, as the CRDs of Kueue v0.19.2 define them; their openAPIV3Schema is recorded
in exports/schemas/ and the tests validate every object against it): one ResourceFlavor per machine type (and one
more per machine type with a spot price, on providers that document a spot label), a ClusterQueue listing the
flavours cheapest first with the GPU quota the user sets, and a LocalQueue pointing at it, as one v1 List.

Each flavour's nodeLabels come from providers.node_labels (the instance-type label, plus the spot label), and the
spot taint where the provider sets one goes in nodeTaints with the matching toleration, so Kueue adds it to the pods
it admits there (https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/). The CRD allows at most 8 node labels,
8 taints and 8 tolerations per flavour and 64 flavours per resource group: a machine beyond the 64th is left out and
counted, as is a machine whose node labels are not documented (never a made-up label).

Order: spot flavours after every on-demand one (`spot_flavors=after`, the default; `mixed` ranks them by price with
the others, `none` leaves them out), each group by the machine type's lowest hourly price per GPU among the
selected offers (spot price for a spot flavour);
with `order=in_stock`, that price divided by the share of the last 7 days the offer was seen in stock, so a
flavour that is often out of stock moves down (offers with no recorded stock keep their plain price; 0% goes last).
"""

from __future__ import annotations

import re
from decimal import Decimal

import yaml

from providers import node_labels

from .machines import Selection, Skipped, money, whole_gpus

API_VERSION = "kueue.x-k8s.io/v1beta2"
MAX_FLAVORS = 64  # per resource group (ClusterQueue CRD, spec.resourceGroups[].flavors maxItems)
GPU_RESOURCE = "nvidia.com/gpu"
ORDERS = ("price", "in_stock")
# Where spot flavours go: after every on-demand one (the default: a job is admitted onto capacity that can be taken
# back only when the on-demand quota is used up), mixed in by price (the old order, spot usually first), or none.
SPOT_FLAVORS = ("after", "mixed", "none")


def flavor_name(provider: str, instance_type: str, spot: bool) -> str:
    """A DNS-1123 subdomain (the CRD's pattern for a flavour reference), at most 253 characters."""
    name = re.sub(r"[^a-z0-9.-]+", "-", f"{provider}-{instance_type}".lower())
    name = re.sub(r"-{2,}", "-", name).strip("-.")
    return (name[:240] + ("-spot" if spot else "")).strip("-.")


def _rank(price: Decimal, share, order: str) -> tuple:
    if order == "in_stock" and share is not None:
        return (1, Decimal(0)) if share == 0 else (0, price / share)
    return (0, price)


def kueue_objects(selection: Selection, *, gpu_quota: int, namespace: str, queue: str,
                  order: str = "price", spot_flavors: str = "after") -> tuple[list[dict], Skipped, list[str]]:
    """(objects, skipped, notes): ResourceFlavors, then the ClusterQueue, then the LocalQueue."""
    skipped = Skipped()
    best: dict[str, dict] = {}  # flavour name -> {labels, taints, price, share, offer}
    for row in selection.rows:
        gpus = whole_gpus(row, skipped)
        if gpus is None:
            continue
        if row["gpu__vendor"] != "nvidia":
            skipped.add("not an NVIDIA GPU (the queue covers nvidia.com/gpu)")
            continue
        slug, instance_type = row["provider__slug"], row["instance_type"]
        labels = node_labels.instance_type_label(slug, instance_type)
        if labels is None:
            skipped.add(f"{slug}: the instance-type label value of its nodes is not documented")
            continue
        choices = [(False, row["price_hour_usd"], labels, None)]
        marker = node_labels.provider_labels(slug).spot
        if row["spot_price_hour_usd"] is not None and marker is not None and spot_flavors != "none":
            choices.append((True, row["spot_price_hour_usd"], {**labels, marker.key: marker.value}, marker.taint))
        for spot, price, flavour_labels, taint in choices:
            name = flavor_name(slug, instance_type, spot)
            per_gpu = price / gpus
            if name not in best or per_gpu < best[name]["price"]:
                best[name] = {"labels": flavour_labels, "taint": taint, "price": per_gpu, "spot": spot,
                              "share": row["in_stock_share_7d"], "offer": row}
    ranked = sorted(best.items(), key=lambda item: (item[1]["spot"] and spot_flavors == "after",
                                                    *_rank(item[1]["price"], item[1]["share"], order), item[0]))
    for _ in ranked[MAX_FLAVORS:]:
        skipped.add(f"beyond the {MAX_FLAVORS} flavours a ClusterQueue resource group may list")
    ranked = ranked[:MAX_FLAVORS]

    objects: list[dict] = []
    notes: list[str] = []
    for name, chosen in ranked:
        spec: dict = {"nodeLabels": chosen["labels"]}
        if chosen["taint"] is not None:
            taint = chosen["taint"]
            spec["nodeTaints"] = [{"key": taint.key, "value": taint.value, "effect": taint.effect}]
            spec["tolerations"] = [{"key": taint.key, "operator": "Equal", "value": taint.value,
                                    "effect": taint.effect}]
        objects.append({"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": name},
                        "spec": spec})
        offer = chosen["offer"]
        share = "not recorded" if chosen["share"] is None else f"{chosen['share']:.0%}"
        dated = f"price as of {offer['price_as_of']:%Y-%m-%d}" if offer["price_as_of"] else "price date not stated"
        notes.append(f"{name}: ${money(chosen['price'])}/GPU-hour from offer {offer['id']} "
                     f"({offer['region'] or '-'}; {dated}; in stock over 7 days: {share})")
    notes += node_labels.inferred_notes(chosen["offer"]["provider__slug"] for _, chosen in ranked)
    flavors = [{"name": name, "resources": [{"name": GPU_RESOURCE, "nominalQuota": gpu_quota}]} for name, _ in ranked]
    cluster_queue = {"apiVersion": API_VERSION, "kind": "ClusterQueue", "metadata": {"name": queue},
                     "spec": {"namespaceSelector": {},
                              "resourceGroups": [{"coveredResources": [GPU_RESOURCE], "flavors": flavors}]
                              if flavors else []}}
    local_queue = {"apiVersion": API_VERSION, "kind": "LocalQueue",
                   "metadata": {"name": queue, "namespace": namespace}, "spec": {"clusterQueue": queue}}
    return [*objects, cluster_queue, local_queue], skipped, notes


def kueue_yaml(selection: Selection, **options) -> str:
    objects, skipped, notes = kueue_objects(selection, **options)
    lines = [*selection.header_lines("Kueue"), f"objects: {API_VERSION} as in Kueue v0.19.2's CRDs",
             f"flavours in preference order ({options.get('order', 'price')}; spot flavours "
             f"{options.get('spot_flavors', 'after')}), each {GPU_RESOURCE} quota "
             f"{options['gpu_quota']}:", *notes, *skipped.lines()]
    head = "".join(f"# {line}\n" for line in lines)
    # One document, a v1 List, which `kubectl apply -f` applies item by item: a single YAML document is what every
    # YAML reader (and the OpenAPI response schema) takes, where a multi-document stream needs a special reader.
    return head + yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}, sort_keys=False)
