"""Fixed-window counters in Django's cache (Redis in production, the local-memory cache in the embedded default).

Keys hold a hash of what is counted, never an address in clear.
"""

from __future__ import annotations

import hashlib
import time

from django.core.cache import cache


def rate_limit_exceeded(*, scope: str, ident: str, limit: int, window: int) -> bool:
    """Count one more attempt for (scope, ident) in the current window; true once the count passes `limit`."""
    digest = hashlib.sha256(ident.strip().lower().encode()).hexdigest()[:32]
    key = f"digest-rate:{scope}:{digest}:{int(time.time() // window)}"
    if cache.add(key, 1, timeout=window):
        return 1 > limit
    try:
        return cache.incr(key) > limit
    except ValueError:  # the key expired between add and incr: this attempt opens a new window
        cache.add(key, 1, timeout=window)
        return 1 > limit
