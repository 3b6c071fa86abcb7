"""Limits per client and across the site, which the API, the exports, the digest and the admin login share:

- `client_ip`: the address the server saw (REMOTE_ADDR) unless settings.NUM_PROXIES says how many reverse proxies
  sit in front, in which case the address the outermost of them saw, read from the right of X-Forwarded-For. A
  client-sent X-Forwarded-For is never trusted on its own: with it, anyone could be anyone to a rate limit.
- `window_hit`: one more hit in a fixed window, counted with the cache's atomic add and incr (Redis INCR in
  production), so concurrent requests cannot both read the same count. The one rate limiter: the API's throttles,
  the digest's per-IP subscribe limit and the admin login (comparator.security) all count with it.
- `export_slot`: at most settings.API_CSV_EXPORTS_MAX unpaged CSV exports stream at once across the site, so a few
  clients downloading whole tables cannot hold every web thread; `ReleasingStream` gives the slot back.

Plain Django (settings and the cache): below every app that answers requests, so none of them imports the project
plumbing in comparator/ (tests/test_layers.py).
"""

from __future__ import annotations

import time
import uuid

from django.conf import settings
from django.core.cache import cache


def client_ip(request) -> str:
    """The client's address for rate limits: REMOTE_ADDR, or with settings.NUM_PROXIES = n > 0 reverse proxies in
    front, the n-th address from the right of X-Forwarded-For (what the outermost proxy saw; anything left of it is
    whatever the client chose to send). The same rule as Django REST framework's NUM_PROXIES."""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = int(getattr(settings, "NUM_PROXIES", 0) or 0)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return remote
    addresses = [address.strip() for address in forwarded.split(",") if address.strip()]
    if not addresses:
        return remote
    return addresses[-min(proxies, len(addresses))]


def _now() -> float:
    """The clock of the rate windows (tests hold it still, so a run never straddles a window's end)."""
    return time.time()


def window_hit(key: str, window: int, now: float | None = None) -> tuple[int, float]:
    """Count one hit for `key` in the current fixed window of `window` seconds; returns (hits so far in the window,
    seconds until it ends). add() creates the counter only if absent and incr() is atomic in the cache (Redis INCR),
    so N concurrent hits count N."""
    now = _now() if now is None else now
    index = int(now // window)
    bucket = f"{key}:{index}"
    remaining = (index + 1) * window - now
    if cache.add(bucket, 1, timeout=window + 1):
        return 1, remaining
    try:
        return cache.incr(bucket), remaining
    except ValueError:  # expired between add and incr: this hit opens the window again
        cache.add(bucket, 1, timeout=window + 1)
        return 1, remaining


class ExportSlot:
    """One of the site's API_CSV_EXPORTS_MAX export slots, held until release() (idempotent)."""

    def __init__(self, key: str, token: str):
        self.key, self.token, self.released = key, token, False

    def release(self) -> None:
        if not self.released:
            self.released = True
            if cache.get(self.key) == self.token:
                cache.delete(self.key)


def export_slot() -> ExportSlot | None:
    """Take a free export slot, or None when all are in use. A slot expires after API_CSV_EXPORT_SECONDS even if
    its process died without releasing it."""
    token = uuid.uuid4().hex
    timeout = int(getattr(settings, "API_CSV_EXPORT_SECONDS", 600))
    for number in range(int(getattr(settings, "API_CSV_EXPORTS_MAX", 2))):
        key = f"csv-export-slot:{number}"
        if cache.add(key, token, timeout=timeout):
            return ExportSlot(key, token)
    return None


class ReleasingStream:
    """An iterable of chunks that releases its export slot when exhausted or closed (Django closes a streaming
    response's content when the response ends, even if the client went away before the last chunk)."""

    def __init__(self, chunks, slot: ExportSlot):
        self.chunks, self.slot = chunks, slot

    def __iter__(self):
        try:
            yield from self.chunks
        finally:
            self.slot.release()

    def close(self) -> None:
        close = getattr(self.chunks, "close", None)
        if close:
            close()
        self.slot.release()
