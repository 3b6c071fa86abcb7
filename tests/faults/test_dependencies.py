"""A real gunicorn in front of PostgreSQL and Redis through fault proxies (tests/faults/proxy.py): each dependency
refused, hung (a tarpit) or restarted, and the answers the documented ones (docs/operations.md): the cache is
optional (never a 5xx), the broker's state is reported without failing readiness, a database that is down or hung
is a 503 answered within its connect timeout, a database restart costs no request.

Not timed: a request that hangs is caught by the client's own generous timeout (30 s, against the 40 s and more the
site used to hang for); the seconds each answer took: `pytest --durations` (docs/operations.md, "Timeouts").
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from tests.faults.proxy import FaultProxy

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.django_db]  # django_db: the test database exists
ROOT = Path(__file__).resolve().parents[2]
CLIENT_TIMEOUT = 30


def _free_port() -> int:
    from tests.digest.conftest import free_port

    return free_port()


def get(site, path: str, data: bytes | None = None) -> tuple[int, dict | str]:
    request = urllib.request.Request(f"{site.url}{path}", data=data, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=CLIENT_TIMEOUT) as response:
            status, body, kind = response.status, response.read(), response.headers.get_content_type()
    except urllib.error.HTTPError as error:
        status, body, kind = error.code, error.read(), error.headers.get_content_type()
    return status, json.loads(body) if kind == "application/json" else body.decode()


class Site:
    def __init__(self, url, database, broker, cache, log):
        self.url, self.database, self.broker, self.cache, self.log = url, database, broker, cache, log

    def all_forward(self):
        for proxy in (self.database, self.broker, self.cache):
            proxy.mode = "forward"


@pytest.fixture(scope="module")
def site(django_db_setup, django_db_blocker, tmp_path_factory):
    if connection.vendor != "postgresql":
        pytest.fail("the dependency faults need PostgreSQL")
    db = connection.settings_dict
    redis_db = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15").rsplit("/", 1)[-1]
    database, broker, cache = FaultProxy(int(db["PORT"] or 5432)), FaultProxy(6379), FaultProxy(6379)
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "comparator.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}@{database.url_host}/{db['NAME']}",
        "DATABASE_CONN_MAX_AGE": "60",
        "CELERY_BROKER_URL": f"redis://{broker.url_host}/{redis_db}",
        "CACHE_URL": f"redis://{cache.url_host}/{redis_db}",
        "HEALTH_CHECK_REDIS": "1",
        "API_ADVISE_RATE": "off",
    }
    log_path = tmp_path_factory.mktemp("gunicorn") / "server.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "comparator.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", "1", "--timeout", "60"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    site = Site(f"http://127.0.0.1:{port}", database, broker, cache, log_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{site.url}/healthz?probe=live", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"gunicorn did not start:\n{log_path.read_text()}")
                time.sleep(0.2)
        yield site
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()
        for proxy in (database, broker, cache):
            proxy.close()


@pytest.fixture
def fresh(site):
    site.all_forward()
    yield site
    site.all_forward()


PAGES = ["/", "/api/v1/offers/", "/api/v1/gpus/", "/api/v1/providers/"]


def test_all_up_the_probe_says_so(fresh):
    assert get(fresh, "/healthz") == (200, {"status": "ok", "database": "ok", "broker": "ok", "cache": "ok"})


@pytest.mark.parametrize("mode", ["refuse", "hang"])
def test_without_the_cache_pages_are_served_and_the_failure_counted(fresh, mode):
    fresh.cache.mode = mode
    fresh.cache.restart()  # the pooled connection goes too
    for path in PAGES * 2:
        status, _body = get(fresh, path)
        assert status == 200, path
    assert get(fresh, "/healthz") == (200, {"status": "ok", "database": "ok", "broker": "ok",
                                           "cache": "unreachable"})
    status, metrics = get(fresh, "/metrics")
    assert 'comparator_dependency_up{dependency="cache"} 0' in metrics
    assert float(re.search(r"^comparator_cache_failures_total (\S+)$", metrics, re.M).group(1)) >= 1


@pytest.mark.parametrize("mode", ["refuse", "hang"])
def test_without_the_broker_pages_serve_and_readiness_holds_naming_the_broker(fresh, mode):
    fresh.broker.mode = mode
    fresh.broker.restart()
    assert get(fresh, "/api/v1/offers/")[0] == 200
    assert get(fresh, "/healthz") == (200, {"status": "ok", "database": "ok", "broker": "unreachable",
                                           "cache": "ok"})
    assert 'comparator_dependency_up{dependency="broker"} 0' in get(fresh, "/metrics")[1]


@pytest.mark.parametrize("mode", ["refuse", "hang"])
def test_without_the_database_the_answer_is_a_clear_503(fresh, mode):
    fresh.database.mode = mode
    fresh.database.restart()
    status, body = get(fresh, "/api/v1/offers/")
    assert status == 503 and "database" in body["detail"]
    assert get(fresh, "/healthz") == (503, {"status": "unavailable", "database": "unreachable", "broker": "ok",
                                           "cache": "ok"})
    assert get(fresh, "/healthz?probe=live")[0] == 200

    fresh.database.mode = "forward"  # back: the next request is served again
    assert get(fresh, "/api/v1/offers/")[0] == 200


def test_a_database_restart_costs_no_request(fresh):
    assert get(fresh, "/api/v1/offers/")[0] == 200  # a persistent connection is open now
    fresh.database.restart()
    for _ in range(3):
        assert get(fresh, "/api/v1/offers/")[0] == 200
