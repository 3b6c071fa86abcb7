"""The API with one of its speed mechanisms switched off, for the ledger in docs/performance.md (bench/api.py
--ledger): gunicorn serves `bench.variants:application` with BENCH_WITHOUT set to a comma-separated list of

- `remembered`: providers.versions.remembered computes every time (the slug, capability and profile lookups, the
  kept FilterSets and the compiled page SQL are no longer kept under the data version);
- `fast_loaders`: providers.selectors._fast_loaders does nothing (the page's timestamps go through Django's loader);
- `range_split`: providers.selectors._range_split answers None (no page read as one index range per GPU, provider
  or profile merged with UNION ALL: the plain query).

Mechanisms the project switches with a setting are switched there by bench/api.py (API_KEPT_PAGES=0,
OFFER_COUNT_CACHE_SECONDS=0, DATABASE_PREPARED_STATEMENTS=false). A function the code no longer has is reported on
stderr and skipped, so the bench still runs on a tree that removed it."""

from __future__ import annotations

import importlib
import os
import sys

from comparator.wsgi import application  # noqa: F401  (django.setup())

WITHOUT = {name for name in os.environ.get("BENCH_WITHOUT", "").split(",") if name}


def _compute_always(name, compute, *, keep=None):
    return compute()


def _nothing(cursor):
    return None


def _no_split(filters):
    return None


SWITCHES = {  # name -> (module, function, replacement with the same free variables: none)
    "remembered": ("providers.versions", "remembered", _compute_always),
    "fast_loaders": ("providers.selectors", "_fast_loaders", _nothing),
    "range_split": ("providers.selectors", "_range_split", _no_split),
}

for name in sorted(WITHOUT):
    module_name, function_name, replacement = SWITCHES[name]
    function = getattr(importlib.import_module(module_name), function_name, None)
    if function is None:
        print(f"bench.variants: {module_name}.{function_name} not found; {name} not switched off", file=sys.stderr)
        continue
    # Every module that imported the function holds the same object: swap its code, not the name.
    function.__code__ = replacement.__code__
    print(f"bench.variants: {module_name}.{function_name} switched off", file=sys.stderr)
