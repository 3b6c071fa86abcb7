"""Node software: what a managed Kubernetes GPU node really runs, and whether a container image can run on it.

Holds the CUDA compatibility table (compat.py, from NVIDIA's documents), the driver and toolkit each provider's GPU
node image installs, Kubernetes versions with their support dates, DRA readiness and training stacks, all as curated
data files under nodesoftware/data/ with their sources.

Where it sits: below providers. nodesoftware is pure data and functions keyed by plain slugs (provider slug, GPU
slug, Kubernetes version); it imports nothing from providers, web, advisor or digest (tests/test_layers.py holds
it to that), so the one OfferFilterSet in providers/filters/, the pages and the advisor can all call it without
an import circle.
"""

import tomllib
from pathlib import Path


def read_toml(path: Path) -> dict:
    """One of the data files under nodesoftware/data/, parsed."""
    with path.open("rb") as handle:
        return tomllib.load(handle)
