"""Concurrent requests in one process get the answers they get one at a time (issue #41).

The API, the exports and the offers page answer from threads of one process: nothing of one request's filtering may
be shared with another's. Several queries (each with filters that may leave an offer out because its answer is
unknown, and one without) are asked many times at once from several threads, and every answer must equal the one the
same query gets alone. The data is committed (transactional_db) so every thread's own connection sees it; the API's
kept pages are switched off so every request runs the filters.
"""

from __future__ import annotations

import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections
from django.test import Client

from providers import versions
from providers.models import DataVersion

QUERIES = (
    "/api/v1/offers/?mig=yes",
    "/api/v1/offers/?rdma=any&offering=managed",
    "/api/v1/offers/?form_factor=sxm&unknown=include",
    "/api/v1/offers/?offering=managed&mps=yes&documented_only=true",
    "/api/v1/offers/?provider=alpha,beta",
    "/api/v1/offers/?gpu=h100-sxm&rdma=any",
    "/?mig=yes",
    "/?rdma=any&offering=managed",
)
THREADS = 8
MOVING = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"'
                    r'|<span class="fresh"[^>]*>[^<]*<|<small class="av-when">[^<]*<')
ROUNDS = 20


def answer(path: str) -> tuple[int, str]:
    response = Client().get(path)
    # The page's CSRF token (its language form's) is new for every response, and how long ago an offer was seen or
    # checked moves with the clock; the rest is the answer.
    return response.status_code, MOVING.sub("", response.content.decode())


@pytest.fixture
def quick_switches():
    """Threads take turns far more often than by default, so that any state shared between requests shows."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


@pytest.mark.slow
def test_concurrent_requests_with_different_filters_get_their_serial_answers(transactional_db, world, settings,
                                                                             quick_switches):
    # Migration 0009's one DataVersion row, which an earlier transactional test's flush removed: without it nothing
    # is kept under a version, as in production nothing is until the row exists.
    DataVersion.objects.get_or_create(id=1)
    serial = {path: answer(path) for path in QUERIES}
    assert all(status == 200 for status, _body in serial.values()), serial
    assert len({body for _status, body in serial.values()}) == len(QUERIES)  # each query answers differently
    # Each round starts together with nothing kept from earlier requests (versions.remembered keeps lookups, counts
    # and compiled pages under the data version), so its requests compute everything at the same time.
    versions.remembered_forget()
    start = threading.Barrier(THREADS, action=versions.remembered_forget)

    def worker(offset: int) -> list[tuple[str, bool]]:
        try:
            outcomes = []
            for _round in range(ROUNDS):
                start.wait()
                # Every thread asks the same queries in the same order (a popular link asked by many at once), one
                # in two threads backwards (other filters at the same moment).
                for path in (QUERIES if offset % 2 else QUERIES[::-1]):
                    outcomes.append((path, answer(path) == serial[path]))
            return outcomes
        finally:
            connections.close_all()

    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = [outcome for part in pool.map(worker, range(THREADS)) for outcome in part]
    wrong = [path for path, same in outcomes if not same]
    assert len(outcomes) == THREADS * ROUNDS * len(QUERIES)
    assert not wrong, f"{len(wrong)} of {len(outcomes)} answers differ from their serial answer: {sorted(set(wrong))}"
