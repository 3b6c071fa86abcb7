"""Values kept until the data changes: the DataVersion the database raises on every write that can change a count
or a filter lookup (migration 0009), and `remembered` lookups kept in this process under it. The filters
(providers.filters) and the selectors both keep their small catalog reads here, so neither imports the other's
internals."""

from __future__ import annotations

import collections
import contextlib
import contextvars
import threading
from datetime import datetime

from django.db import connection, models

from .models import DataSource, DataVersion


def data_version() -> int | None:
    """The current DataVersion (raised by the database after every write that can change a count or a filter
    lookup; migration 0008), or None when its row is missing (a test database flushed by TRUNCATE), in which case
    nothing is kept under it. Read once per request, so in plain SQL."""
    table = connection.ops.quote_name(DataVersion._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT version FROM {table} WHERE id = 1")
        row = cursor.fetchone()
    return None if row is None else row[0]


def refreshed_at() -> datetime | None:
    """The latest successful run of any source (when the data was last refreshed; the API's Last-Modified), kept
    under the current data_version_scope's version."""
    return remembered("refreshed_at", lambda: DataSource.objects.aggregate(
        latest=models.Max("last_success_at"))["latest"])


class _Tally:
    """Hits and misses of the values kept under the data version, in this process (/metrics exposes them): the
    caches on the read path stay only while they earn their code (docs/performance.md), and these say how often they
    answer in production."""

    CACHES = ("remembered",)

    def __init__(self) -> None:
        self.counts: collections.Counter = collections.Counter()
        self._lock = threading.Lock()

    def add(self, cache: str, hit: bool) -> None:
        with self._lock:
            self.counts[cache, "hit" if hit else "miss"] += 1


tally = _Tally()
_request_version: contextvars.ContextVar[int | None] = contextvars.ContextVar("data_version", default=None)
_remembered: dict[str, tuple[int, object]] = {}


@contextlib.contextmanager
def data_version_scope(version: int | None = None):
    """Within it, `remembered` lookups are kept in this process under the data version read once on entry (the API's
    offer list and the offers page open one per request), or under `version` when the caller read it already. Yields
    that version."""
    version = data_version() if version is None else version
    token = _request_version.set(version)
    try:
        yield version
    finally:
        _request_version.reset(token)


def scope_version() -> int | None:
    """The data version of the current data_version_scope (None outside one)."""
    return _request_version.get()


def remembered(name: str, compute, *, keep=None):
    """`compute()`, kept in this process under the data version of the current data_version_scope: the small
    catalog reads the OfferFilterSet repeats on every request (GPU and provider slugs, capability answers) are read
    once per change of the data instead. Outside a scope (or without a version) it is computed every time; so is a
    value for which `keep(value)` is false."""
    version = _request_version.get()
    if version is None:
        return compute()
    hit = _remembered.get(name)
    tally.add("remembered", hit is not None and hit[0] == version)
    if hit is not None and hit[0] == version:
        return hit[1]
    value = compute()
    if keep is not None and not keep(value):
        return value
    if len(_remembered) > 1000:  # bounded: names are lookups and their arguments, and the queries last asked
        _remembered.clear()
    _remembered[name] = (version, value)
    return value


def remembered_forget() -> None:
    """Forget everything kept under a version."""
    _remembered.clear()
