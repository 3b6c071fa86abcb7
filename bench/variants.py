"""The API with one of its speed mechanisms switched off, for the ledger in docs/performance.md (bench/api.py
--ledger): gunicorn serves `bench.variants:application` with BENCH_WITHOUT set to a comma-separated list of

- `remembered`: providers.versions.remembered computes every time (the slug, capability and profile lookups and
  the left-out counts are no longer kept under the data version);
- `range_split`: providers.offer_reads._range_split answers None (no page read as one index range per GPU, provider
  or profile merged in order: the plain query);
- `count_cap`: providers.offer_reads counts every matching offer exactly (COUNT_EXACT_UP_TO far above any table).

A function the code no longer has is reported on
stderr and skipped, so the bench still runs on a tree that removed it."""

from __future__ import annotations

import importlib
import os
import sys
import types

from comparator.wsgi import application  # noqa: F401  (django.setup())

WITHOUT = {name for name in os.environ.get("BENCH_WITHOUT", "").split(",") if name}


def _bypassing(name, compute, *, keep=None):
    """providers.versions.remembered with the names starting with one of _bench_bypass computed every time (runs
    with the globals of providers.versions, where bench.variants puts those two names)."""
    if name.startswith(_bench_bypass):  # noqa: F821
        return compute()
    return _bench_original(name, compute, keep=keep)  # noqa: F821


def _no_split(filters):
    return None


SWITCHES = {  # name -> (module, function, replacement with the same free variables: none)
    "range_split": ("providers.offer_reads", "_range_split", _no_split),
}
BYPASS = {"remembered": ""}


def switch_off(module_name: str, function_name: str, replacement) -> types.FunctionType | None:
    """Give the function `replacement`'s code (every module that imported it holds the same object: the code is
    swapped, not the name); returns a copy of the original, or None when the code has no such function."""
    module = importlib.import_module(module_name)
    function = getattr(module, function_name, None)
    if function is None:
        print(f"bench.variants: {module_name}.{function_name} not found; not switched off", file=sys.stderr)
        return None
    original = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                                  function.__defaults__, function.__closure__)
    original.__kwdefaults__ = function.__kwdefaults__
    function.__code__ = replacement.__code__
    print(f"bench.variants: {module_name}.{function_name} switched off ({sorted(WITHOUT)})", file=sys.stderr)
    return original


SETTINGS = {"count_cap": ("providers.offer_reads", "COUNT_EXACT_UP_TO", 10**15)}  # name -> (module, constant, value)

for name in sorted(WITHOUT - set(BYPASS) - set(SETTINGS)):
    switch_off(*SWITCHES[name])
for name in sorted(WITHOUT & set(SETTINGS)):
    module_name, constant, value = SETTINGS[name]
    setattr(importlib.import_module(module_name), constant, value)
    print(f"bench.variants: {module_name}.{constant} = {value} ({sorted(WITHOUT)})", file=sys.stderr)
if WITHOUT & set(BYPASS):
    versions = importlib.import_module("providers.versions")
    versions._bench_bypass = tuple(BYPASS[name] for name in WITHOUT & set(BYPASS))
    versions._bench_original = switch_off("providers.versions", "remembered", _bypassing)
