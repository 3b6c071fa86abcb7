"""Every request different: a seeded stream of real filter combinations for the offers list, and the same request
for each side (the API and the hand-tuned endpoint take our query string; Datasette its table filters on the flat
table bench/api.py exports).

Six families, each drawing new values per request (GPU models, providers and continents from the rows loaded, price
ceilings in cents, GPU counts, memory minimums, spot, Kubernetes answers with unknown=exclude|include, orderings);
`stream` never hands out the same query twice, so no side can answer from a copy of an earlier answer. Pages other
than the first are not drawn: Datasette's table pages past the first are keyset tokens (`_next`), not numbers."""

from __future__ import annotations

import random
from urllib.parse import urlencode

FAMILIES = ("price ceiling", "GPU models under a price", "Kubernetes answers", "GPU count and memory",
            "spot on providers", "mixed")
ORDERINGS = ("", "price_hour", "-gpu_memory")
GPU_COUNTS = (1, 2, 4, 8)
MEMORY_MINS = (16, 24, 40, 48, 80, 94, 141)
# Kubernetes questions as the API takes them -> (flat-table column, value) for Datasette (the profile's column).
K8S = {
    ("offering", "managed"): ("managed_node", "yes"),
    ("offering", "byo"): ("byo", "yes"),
    ("mig", "yes"): ("mig", "yes"),
    ("rdma", "any"): ("fabric_class", "gpudirect_rdma"),
    ("rdma", "infiniband"): ("fabric", "infiniband"),
}


def price(rng: random.Random, low: float = 0.3, high: float = 12.0) -> str:
    return f"{rng.uniform(low, high):.2f}"


def draw(rng: random.Random, family: str, catalog: dict) -> list[tuple[str, str]]:
    """One request of `family` as (parameter, value) pairs of our API."""
    gpus, providers, continents = catalog["gpus"], catalog["providers"], catalog["continents"]
    params: list[tuple[str, str]] = []
    if family == "price ceiling":
        params.append(("price_per_gpu_hour_max", price(rng)))
        if rng.random() < 0.5:
            params.append(("continent", rng.choice(continents)))
        ordering = rng.choice(ORDERINGS)
    elif family == "GPU models under a price":
        params.append(("gpu", ",".join(sorted(rng.sample(gpus, rng.randint(1, min(3, len(gpus))))))))
        params.append(("price_per_gpu_hour_max", price(rng, 1.0, 15.0)))
        ordering = ""
    elif family == "Kubernetes answers":
        questions = rng.sample([key for key in K8S if key[0] != "rdma"], rng.randint(1, 2))
        if rng.random() < 0.4:
            questions.append(rng.choice([key for key in K8S if key[0] == "rdma"]))
        params += sorted({name: value for name, value in questions}.items())
        params.append(("continent", rng.choice(continents)))
        params.append(("price_per_gpu_hour_max", price(rng, 1.0, 20.0)))
        params.append(("unknown", rng.choice(("exclude", "include"))))
        ordering = ""
    elif family == "GPU count and memory":
        params.append(("gpu_count_min", str(rng.choice(GPU_COUNTS))))
        params.append(("gpu_memory_min", str(rng.choice(MEMORY_MINS))))
        params.append(("price_per_gpu_hour_max", price(rng, 1.0, 20.0)))
        ordering = rng.choice(("", "-gpu_memory"))
    elif family == "spot on providers":
        params.append(("provider", ",".join(sorted(rng.sample(providers, rng.randint(1, min(3, len(providers))))))))
        params.append(("spot", "true"))
        params.append(("price_per_gpu_hour_max", price(rng, 0.5, 15.0)))
        ordering = rng.choice(("", "price_hour"))
    else:  # mixed: two to four of the filters above
        pool = [
            lambda: ("price_per_gpu_hour_max", price(rng)),
            lambda: ("gpu", rng.choice(gpus)),
            lambda: ("provider", rng.choice(providers)),
            lambda: ("continent", rng.choice(continents)),
            lambda: ("gpu_count_min", str(rng.choice(GPU_COUNTS))),
            lambda: ("gpu_memory_min", str(rng.choice(MEMORY_MINS))),
            lambda: ("spot", "true"),
            lambda: rng.choice(list(K8S)),
        ]
        chosen = dict(choice() for choice in rng.sample(pool, rng.randint(2, 4)))
        params += sorted(chosen.items())
        if any(name in ("offering", "mig", "rdma") for name in chosen):
            params.append(("unknown", rng.choice(("exclude", "include"))))
        ordering = rng.choice(ORDERINGS)
    if ordering:
        params.append(("ordering", ordering))
    return params


def ours(params: list[tuple[str, str]]) -> str:
    return urlencode(params, safe=",")


def datasette(params: list[tuple[str, str]]) -> str:
    """The same request as Datasette table filters on the flat table: active offers, unknown answers as 'unknown'
    (an offer without a profile has every answer unknown there), nulls last in ascending orders through the
    `*_order` columns (NULL -> a large number), as the API orders."""
    values = dict(params)
    include = values.get("unknown") == "include"
    out = [("is_active", "1")]
    for name, value in params:
        if name == "price_per_gpu_hour_max":  # with unknown=include, unpriced offers too (as the API)
            out.append(("price_per_gpu_hour_or_unknown__lte" if include else "price_per_gpu_hour_usd__lte", value))
        elif name == "gpu":
            out.append(("gpu_slug__in", value))
        elif name == "provider":
            out.append(("provider_slug__in", value))
        elif name == "continent":
            out.append(("continent", value))
            if not include:  # the API keeps regions the provider confirms (providers.filters.filter_place)
                out.append(("region_confirmed", "1"))
        elif name == "gpu_count_min":
            out.append(("gpu_count__gte", value))
        elif name == "gpu_memory_min":  # with unknown=include, offers of no stated memory too (as the API)
            out.append(("gpu_memory_or_unknown__gte" if include else "gpu_memory_gb__gte", value))
        elif name == "spot":  # with unknown=include, spot sold at a stated saving with no price too (as the API)
            out.append(("spot_or_unknown", "1") if include else ("spot_price_hour__notnull", "1"))
        elif (name, value) in K8S:
            column, state = K8S[(name, value)]
            out.append((f"{column}__in", f"{state},unknown") if include else (column, state))
    ordering = values.get("ordering", "")
    if ordering == "-gpu_memory":
        out.append(("_sort_desc", "gpu_memory_gb"))
    elif ordering == "price_hour":
        out.append(("_sort", "price_hour_order"))
    else:
        out.append(("_sort", "price_per_gpu_hour_order"))
    out.append(("_size", "50"))
    return urlencode(out, safe=",")


def stream(seed: int, family: str, count: int, catalog: dict, seen: set[str]) -> list[list[tuple[str, str]]]:
    """`count` requests of `family`, none of them a query string in `seen` (which this extends)."""
    rng = random.Random(f"{seed}:{family}")
    drawn = []
    tries = 0
    while len(drawn) < count:
        params = draw(rng, family, catalog)
        tries += 1
        key = ours(params)
        if key in seen:
            if tries > count * 50:
                raise RuntimeError(f"{family}: fewer than {count} different requests to draw")
            continue
        seen.add(key)
        drawn.append(params)
    return drawn
