"""The shared Redis cache, optional at run time (docs/operations.md, "Cache").

Nothing the site keeps in the cache is needed to answer: offer counts are recomputed, rate-limit and throttle
counters and CSV export slots are protections. So a refused or hung Redis must make pages slower, never a 500:
every operation that fails with a Redis error (connect and socket timeouts are set in settings.CACHES) is logged,
counted in `failures` (this process; /metrics exposes it), and answered as a cache that forgets at once would
answer: a miss on read, nothing kept on write, a counter that starts again at 1. After a failure the cache is left
alone for RETRY_SECONDS, so a hung Redis costs one timeout per process and period, not one per operation.

While the cache is down the rate limits, the API throttle and the CSV export slots count nothing: requests are
served without those limits until it answers again (the log and the metric say so).
"""

from __future__ import annotations

import logging
import threading
import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

RETRY_SECONDS = 15.0


class _Failures:
    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def add(self) -> None:
        with self._lock:
            self.count += 1


failures = _Failures()


class _Missing(Exception):
    """Stands for a key a forgetting cache does not have (incr raises ValueError for it, as Django's caches do)."""


class OptionalRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._down_until = 0.0

    def _try(self, name: str, fallback, *args, **kwargs):
        if time.monotonic() < self._down_until:
            return fallback
        try:
            return getattr(super(), name)(*args, **kwargs)
        except RedisError as exc:
            failures.add()
            self._down_until = time.monotonic() + RETRY_SECONDS
            logger.warning("cache unavailable (%s: %s): serving without it for %ss", type(exc).__name__, exc,
                           RETRY_SECONDS)
            return fallback

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._try("add", True, key, value, timeout, version)

    def get(self, key, default=None, version=None):
        return self._try("get", default, key, default, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._try("set", None, key, value, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._try("touch", False, key, timeout, version)

    def delete(self, key, version=None):
        return self._try("delete", False, key, version)

    def get_many(self, keys, version=None):
        return self._try("get_many", {}, keys, version)

    def has_key(self, key, version=None):
        return self._try("has_key", False, key, version)

    def incr(self, key, delta=1, version=None):
        value = self._try("incr", _Missing, key, delta, version)
        if value is _Missing:
            raise ValueError(f"Key '{key}' not found")
        return value

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._try("set_many", [], data, timeout, version)

    def delete_many(self, keys, version=None):
        return self._try("delete_many", None, keys, version)

    def clear(self):
        return self._try("clear", False)

    def available(self) -> bool:
        """Whether Redis answers PING now (for /healthz and /metrics; does not count as a failure)."""
        try:
            return bool(self._cache.get_client(write=True).ping())
        except RedisError:
            return False
