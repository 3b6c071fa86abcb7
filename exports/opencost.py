"""OpenCost / Kubecost custom pricing CSV, as OpenCost's CSV provider reads it
(pkg/cloud/provider/csvprovider.go in opencost/opencost @ 5f6533303e3850c8635796a74bb22802d16e9090).

What the reader does, and so what this file is:
- Rows are read BY POSITION, 8 fields: EndTimestamp, InstanceID, Region, AssetClass, InstanceIDField, InstanceType,
  MarketPriceHourly, Version (csvutil decodes with the struct's own header, so a header line in the file would be
  read as a data row: ours is a comment). A record of one field starting with `#` is skipped: every comment here is
  one field, so it never contains a comma or a quote.
- `node` rows are keyed "<region>,<InstanceID>" (lower-cased) when Region is set; a node is matched by its region
  label (topology.kubernetes.io/region) and the value of the row's InstanceIDField, here
  `metadata.labels.node.kubernetes.io/instance-type`. The reader keeps ONE InstanceIDField for all node rows, so every
  node row uses that one. A provider whose region label values are not documented gets a row without Region
  (the reader's fallback key) only when the machine has one price in every selected region and its instance type is
  lower case; else it is left out. The reader stores every key lower-cased but looks a node up by its label's own
  case: a region-less row is found only through that lookup, so `BM.GPU.A10.4` (OKE) never would be. A row with
  Region is also found by its class key (region, instance type and "node" as written), so a mixed-case instance type
  with a region (AKS's `Standard_ND96isr_H100_v5`) is.
- `gpu` rows are keyed by InstanceID alone (Region must be empty) and matched against the node label named by their
  InstanceIDField (a bare label key); OpenCost then ADDS GPUs x that price to the node row's price, the GPU count
  being the node's `nvidia.com/gpu` capacity.

The split, so that node + GPU rows equal the machine's hourly price and no GPU is counted twice: on GKE, whose GPU
nodes carry `cloud.google.com/gke-accelerator`, each accelerator's GPU row carries the lowest per-GPU price among the
exported GKE machines with that accelerator, and each node row the rest (machine price - GPUs x GPU row, never
negative). Elsewhere no GPU label's values can be named from our data, so the node row carries the whole price and
no GPU row is written. The control-plane fee has no place in this format (opencost/opencost#3160): it is not in the
file, and the file says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import ROUND_DOWN, Decimal

from providers import node_labels

from .machines import Selection, Skipped, money, product_version, whole_gpus

HEADER = ("EndTimestamp", "InstanceID", "Region", "AssetClass", "InstanceIDField", "InstanceType",
          "MarketPriceHourly", "Version")
NODE_FIELD = "metadata.labels.node.kubernetes.io/instance-type"
SOURCE = ("https://github.com/opencost/opencost/blob/5f6533303e3850c8635796a74bb22802d16e9090/"
          "pkg/cloud/provider/csvprovider.go")


def _comment(text: str) -> str:
    # One field: no comma, no double quote (the CSV reader would split or unquote it).
    return "# " + text.replace(",", ";").replace('"', "'") + "\n"


def _timestamp(row: dict) -> str:
    return f"{row['price_as_of']:%Y-%m-%d %H:%M:%S} UTC" if row["price_as_of"] else ""


def opencost_rows(selection: Selection) -> tuple[list[tuple], list[tuple], Skipped]:
    """(node rows, GPU rows, skipped): each node row is (offer row, region value, price), each GPU row
    (label key, label value, per-GPU price, offer row it was taken from)."""
    skipped = Skipped()
    machines: dict[tuple[str, str], list[dict]] = {}
    for row in selection.rows:
        gpus = whole_gpus(row, skipped)
        if gpus is None:
            continue
        if node_labels.instance_type_label(row["provider__slug"], row["instance_type"]) is None:
            skipped.add(f"{row['provider__slug']}: the instance-type label value of its nodes is not documented")
            continue
        machines.setdefault((row["provider__slug"], row["instance_type"]), []).append(row)

    # GPU rows: lowest per-GPU price per accelerator label value (GKE).
    gpu_rows: dict[tuple[str, str], tuple[Decimal, dict]] = {}
    for (slug, instance_type), rows in machines.items():
        label = node_labels.accelerator_label(slug, instance_type)
        if label is None:
            continue
        for row in rows:
            # Rounded down to the cent/1000: node rows (price - GPUs x this) stay exact and never negative.
            per_gpu = (row["price_hour_usd"] / int(row["gpu_count"])).quantize(Decimal("0.00001"), ROUND_DOWN)
            if label not in gpu_rows or per_gpu < gpu_rows[label][0]:
                gpu_rows[label] = (per_gpu, row)

    nodes: list[tuple] = []
    seen: set[tuple[str, str]] = set()
    for (slug, instance_type), rows in machines.items():
        label = node_labels.accelerator_label(slug, instance_type)
        gpu_price = gpu_rows[label][0] if label else Decimal(0)
        regional = node_labels.provider_labels(slug).region_known
        if regional:
            placed = [row for row in rows if node_labels.region_value(slug, row["region"]) is not None]
            for _ in range(len(rows) - len(placed)):
                skipped.add(f"{slug}: a region its nodes' region label never carries (an AWS Local Zone or "
                            "Wavelength Zone carries its parent Region's, and is priced apart from it)")
            rows = placed
        if not regional and len({row["price_hour_usd"] for row in rows}) > 1:
            for _ in rows:
                skipped.add(f"{slug}: region label values not documented and the price differs by region")
            continue
        if not regional and instance_type != instance_type.lower():
            for _ in rows:
                skipped.add(f"{slug}: region label values not documented, and a row without Region is found only "
                            "for a lower-case instance type (the reader lower-cases its keys, not the node's label)")
            continue
        for row in rows if regional else rows[:1]:
            region = node_labels.region_value(slug, row["region"]) or ""
            if (region.lower(), instance_type.lower()) in seen:
                skipped.add("the same instance type and region as a cheaper exported offer")
                continue
            seen.add((region.lower(), instance_type.lower()))
            nodes.append((row, region, row["price_hour_usd"] - gpu_price * int(row["gpu_count"])))
        for _ in rows[1:] if not regional else ():
            skipped.add(f"{slug}: same price in another region (one row without Region covers it)")
    gpus = [(key, value, price, row) for (key, value), (price, row) in sorted(gpu_rows.items())]
    return nodes, gpus, skipped


def opencost_csv(selection: Selection) -> Iterator[str]:
    """The CSV text, line by line."""
    nodes, gpus, skipped = opencost_rows(selection)
    version = product_version()
    for line in selection.header_lines("OpenCost CSV pricing"):
        yield _comment(line)
    yield _comment(f"format: OpenCost's CSV provider {SOURCE} (Kubecost's CSV pricing before 2.8 reads the same)")
    yield _comment("fields by position: " + " ".join(HEADER))
    yield _comment("node rows: InstanceIDField " + NODE_FIELD + " with topology.kubernetes.io/region; "
                   "GPU rows: empty Region and a GPU label; OpenCost adds GPUs x GPU row to the node row")
    yield _comment("split: on GKE each accelerator's GPU row is its lowest per-GPU price among these machines and "
                   "the node row the rest; elsewhere the node row is the whole machine price (no GPU row)")
    yield _comment("not included: the managed control-plane fee (per cluster-hour) has no place in this format")
    for line in [*skipped.lines(), *node_labels.inferred_notes(row["provider__slug"] for row, _, _ in nodes)]:
        yield _comment(line)
    for row, region, price in nodes:
        yield _comment(f"offer {row['id']} {row['provider__slug']} {row['region'] or '-'}: node row below")
        yield ",".join((_timestamp(row), row["instance_type"], region, "node", NODE_FIELD, row["instance_type"],
                        money(price), version)) + "\n"
    for key, value, price, row in gpus:
        yield _comment(f"offer {row['id']} {row['provider__slug']} {row['instance_type']}: lowest per-GPU price")
        yield ",".join((_timestamp(row), value, "", "gpu", key, value, money(price), version)) + "\n"
