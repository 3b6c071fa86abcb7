"""Does the API stay flat from 100,000 to 1,000,000 offers? p50 of each bench/api.py query at both sizes, in one run,
and EXPLAIN ANALYZE of the SQL each query runs.

It loads bench/api.py's data (the real snapshot copied under numbered regions) into a throw-away PostgreSQL database
(BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/h_scale_bench), serves the API with gunicorn as
bench/api.py does, measures each query at one client (`--requests` each, after a warm-up, so counts are the kept
ones, as in production between two scrape runs), prints the plans of the count, the page of ids and the rows
(captured from the selectors themselves, so they are the SQL the API runs), then grows the table to `--to` offers,
VACUUM ANALYZEs it and does the same again. Target (issue 17): p50 at 1,000,000 within 1.5x of 100,000.

    .venv/bin/python bench/scale.py [--offers 100000] [--to 1000000] [--requests 60]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/h_scale_bench")

import api  # noqa: E402  (bench/api.py: data, servers, queries)

logger = logging.getLogger("bench.scale")
report = logger.info


def p50(url: str, requests: int) -> float:
    import httpx

    with httpx.Client(timeout=60) as client:
        for _ in range(5):
            client.get(url)
        latencies = []
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(url)
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}")
    return statistics.median(latencies) * 1000


def explain(query: str) -> None:
    """EXPLAIN ANALYZE of every statement on the offers table that the API's selectors run for `query`."""
    from django.db import connection
    from django.http import QueryDict
    from django.test.utils import CaptureQueriesContext

    from providers import selectors
    from providers.filters import offer_filterset

    with selectors.data_version_scope(), CaptureQueriesContext(connection) as captured:
        filterset = offer_filterset(QueryDict(query))
        assert filterset.is_valid(), filterset.errors
        selectors._versioned_count(filterset.bare_qs)
        ids = selectors.offer_page_ids(filterset=filterset, offset=0, limit=50)
        selectors.offer_rows(ids=ids)
    statements = [q["sql"] for q in captured.captured_queries if "providers_offer" in q["sql"]]
    with connection.cursor() as cursor:
        for label, sql in zip(("count", "page of ids", "rows"), statements, strict=False):
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}")
            report("  %s:", label)
            for (line,) in cursor.fetchall():
                report("    %s", line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--to", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=60, help="per query and size, one client")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)

    import django

    django.setup()
    api.recreate_database()
    figures: dict[int, list[float]] = {}
    try:
        sizes = []
        started = time.perf_counter()
        total = api.populate(args.offers)
        report("%d offers loaded in %.0fs", total, time.perf_counter() - started)
        port = api.free_port()
        env = {**os.environ, "DATABASE_URL": api.BENCH_DATABASE_URL, "API_ANON_RATE": "off",
               "DJANGO_SETTINGS_MODULE": "comparator.settings.production",
               "DJANGO_SECRET_KEY": "bench-only-" + os.urandom(16).hex(), "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
               "DATABASE_CONN_MAX_AGE": "600", "LOG_LEVEL": "WARNING"}
        server = subprocess.Popen(
            [str(Path(sys.executable).with_name("gunicorn")), "comparator.wsgi", "-b", f"127.0.0.1:{port}", "-k",
             "gthread", "-w", "2", "--threads", "4", "--log-level", "warning"], cwd=api.ROOT, env=env,
            stdout=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}/api/v1/offers/"
        try:
            api.wait_until_up(base, server)
            for target in (args.offers, args.to):
                if target != args.offers:
                    started = time.perf_counter()
                    total = api.grow(target)
                    report("\ngrown to %d offers in %.0fs", total, time.perf_counter() - started)
                sizes.append(total)
                figures[total] = []
                for name, query, _ in api.QUERIES:
                    figures[total].append(p50(f"{base}?{query}" if query else base, args.requests))
                    report("\n%s at %d offers: p50 %.2f ms", name, total, figures[total][-1])
                    explain(query)
        finally:
            api.stop(server)
    finally:
        api.drop_database()

    small, large = sizes
    report("\n%-30s %12s %12s %8s", "query (p50 ms, 1 client)", f"{small:,}", f"{large:,}", "ratio")
    missed = []
    for index, (name, _, _) in enumerate(api.QUERIES):
        ratio = figures[large][index] / figures[small][index]
        if ratio > 1.5:
            missed.append(f"{name} {ratio:.2f}x")
        report("%-30s %12.2f %12.2f %7.2fx", name, figures[small][index], figures[large][index], ratio)
    report("target (p50 at %s within 1.5x of %s): %s", f"{large:,}", f"{small:,}",
           "met" if not missed else "NOT met: " + ", ".join(missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
