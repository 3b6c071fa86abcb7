"""Test-wide setup (repository root, so it runs before Django reads its settings).

PostgreSQL and Redis on this machine are the real services the suite runs against.

When REQUIRE_SERVICES=1 or CI=true (CI) a missing service fails the session at once, so the fault suite
(tests/faults) is never skipped there; otherwise the suite falls back to SQLite and skips the tests marked
`services`, saying so.
"""

import os
import socket

import pytest

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1" or os.environ.get("CI", "").lower() == "true"


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


POSTGRES_UP = _reachable("127.0.0.1", 5432)
REDIS_UP = _reachable("127.0.0.1", 6379)


MISSING = [name for name, up in (("PostgreSQL 127.0.0.1:5432", POSTGRES_UP), ("Redis 127.0.0.1:6379", REDIS_UP))
           if not up]
if not POSTGRES_UP and "DATABASE_URL" not in os.environ:
    # Read by comparator.settings.test, which Django imports after this file.
    os.environ["DATABASE_URL"] = "sqlite:///:memory:"


def pytest_configure(config):
    if MISSING and REQUIRE_SERVICES:
        raise pytest.UsageError(f"REQUIRE_SERVICES=1 (or CI=true) but not reachable: {', '.join(MISSING)}")


def pytest_collection_modifyitems(config, items):
    # The browser tests start Chromium: slow like the fuzz run and the worker-kill test (`make test-fast` skips them).
    for item in items:
        if "tests/browser/" in item.nodeid:
            item.add_marker(pytest.mark.slow)
    if POSTGRES_UP and REDIS_UP:
        return
    skip = pytest.mark.skip(reason="PostgreSQL or Redis not reachable (set REQUIRE_SERVICES=1 to fail instead)")
    for item in items:
        if "services" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty default cache (in-process memory in tests): throttle counters, CSV export
    slots held by a streamed response a test never read to the end, and cached counts must not leak between tests."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(autouse=True)
def _forget_remembered_lookups():
    """Lookups kept under a data version (providers.versions.remembered) are forgotten after each test: a test's
    rolled-back transaction takes the version back with it, so the next test may reach the same number with other
    data (in production a version is only ever seen once committed, and only ever grows)."""
    yield
    from providers import versions

    versions.remembered_forget()


@pytest.fixture(scope="module")
def snapshot(django_db_setup, django_db_blocker):
    """The bundled snapshot loaded once for a test module (snapshot_load, as `make run` loads it), flushed
    after: committed outside the tests' own rolled-back transactions, so never left to the next module. A module
    marks its tests django_db (which also makes pytest-django create the database first)."""
    from django.core.management import call_command

    from providers.snapshot import snapshot_load

    with django_db_blocker.unblock():
        try:
            runs, skipped = snapshot_load()
            assert all(run.status == "succeeded" for run in runs) and not skipped
            yield
        finally:
            call_command("flush", "--noinput")
            # flush empties every table, the row migration 0009 seeds too: put it back, so a module that runs
            # after this one (the API's ETags and kept lookups read it) finds the database as migrate left it
            from providers.models import DataVersion

            DataVersion.objects.get_or_create(id=1, defaults={"version": 0})

