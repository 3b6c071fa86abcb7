"""The API with one or more of its speed mechanisms switched off, for the ledger in docs/performance.md: gunicorn
serves `bench.variants:application` with BENCH_WITHOUT set to a comma-separated list of

- `remembered`: providers.versions.remembered computes every time (no slug, capability or profile lookups, kept
  FilterSets or compiled page SQL kept under the data version);

(kept pages are switched off by the project's own setting, API_KEPT_PAGES=0). A mechanism the code no longer has is
reported on stderr and skipped, so the bench still runs on a tree that removed it."""

from __future__ import annotations

import os
import sys

from comparator.wsgi import application  # noqa: F401  (django.setup())

WITHOUT = {name for name in os.environ.get("BENCH_WITHOUT", "").split(",") if name}


def _compute_always(name, compute, *, keep=None):
    return compute()


if "remembered" in WITHOUT:
    try:
        from providers import versions
    except ImportError:
        versions = None
    if versions is not None and hasattr(versions, "remembered"):
        # Every module that imported the function holds the same object: swap its code, not the name.
        versions.remembered.__code__ = _compute_always.__code__
        print("bench.variants: providers.versions.remembered switched off", file=sys.stderr)
    else:
        print("bench.variants: providers.versions.remembered not found; nothing switched off", file=sys.stderr)
