"""Does the API stay flat from 100,000 to 1,000,000 offers? p50 of each bench/api.py query at both sizes, in one run,
and EXPLAIN ANALYZE of the SQL each query runs.

It loads bench/api.py's data (the real snapshot copied under numbered regions) into a throw-away PostgreSQL database
twice, `--offers` and `--to` offers (BENCH_DATABASE_URL + `_small` / `_large`, default postgres://postgres@127.0.0.1:
5432/h_scale_bench_*), serves each with gunicorn as bench/api.py does, both up at once, and measures each query at one
client on both, taking turns (`--requests` each, after a warm-up, so counts are the kept ones, as in production
between two scrape runs); then prints the plans of the count and of the page statement (captured from the selectors
themselves, so they are the SQL the API runs). Target (issue 17): p50 at 1,000,000 within 1.5x of 100,000.

    .venv/bin/python bench/scale.py [--offers 100000] [--to 1000000] [--requests 60]
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
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


def latencies(url: str, requests: int) -> list[float]:
    import httpx

    with httpx.Client(timeout=60) as client:
        found = []
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(url)
            found.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}")
    return found


def p50_in_turns(urls: list[str], requests: int, turns: int = 4) -> list[float]:
    """p50 (ms) of each URL, the URLs taking turns (`requests` / `turns` each, the order rotating), so that the
    machine's changing load weighs on both sizes alike."""
    for url in urls:
        latencies(url, 5)  # warm: connections, kept counts and lookups of both server processes
    collected: list[list[float]] = [[] for _ in urls]
    for turn in range(turns):
        order = list(range(len(urls)))
        order = order[turn % len(order):] + order[:turn % len(order)]
        for index in order:
            collected[index] += latencies(urls[index], max(1, requests // turns))
    return [statistics.median(found) * 1000 for found in collected]


def explain(query: str) -> None:
    """EXPLAIN ANALYZE of every statement on the offers table that the API's selectors run for `query`."""
    from django.db import connection
    from django.http import QueryDict
    from django.test.utils import CaptureQueriesContext

    from providers import offer_reads, versions
    from providers.filters import offer_filterset

    with versions.data_version_scope(), CaptureQueriesContext(connection) as captured:
        filterset = offer_filterset(QueryDict(query))
        assert filterset.is_valid(), filterset.errors
        offer_reads._versioned_count(filterset.bare_qs)
        offer_reads.offer_page(filters=filterset, offset=0, limit=50)
    statements = [q["sql"] for q in captured.captured_queries if "providers_offer" in q["sql"]]
    with connection.cursor() as cursor:
        for label, sql in zip(("count (once per data version)", "page (every request)"), statements, strict=False):
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}")
            report("  %s:", label)
            for (line,) in cursor.fetchall():
                report("    %s", line)


def serve(database_url: str) -> tuple[str, subprocess.Popen]:
    port = api.free_port()
    # No kept pages (API_KEPT_PAGES=0): the scaling question is about the work a page takes, not a kept copy.
    env = {**os.environ, "DATABASE_URL": database_url, "API_ANON_RATE": "off", "API_KEPT_PAGES": "0",
           "DJANGO_SETTINGS_MODULE": "comparator.settings.production",
           "DJANGO_SECRET_KEY": secrets.token_urlsafe(64), "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
           "DJANGO_SSL_REDIRECT": "false",  # plain HTTP on loopback; TLS ends at the proxy in production
           "SITE_URL": "http://127.0.0.1",
           "DATABASE_CONN_MAX_AGE": "600", "LOG_LEVEL": "WARNING"}
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "comparator.wsgi", "-b", f"127.0.0.1:{port}", "-k",
         "gthread", "-w", "2", "--threads", "4", "--log-level", "warning"], cwd=api.ROOT, env=env,
        stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/api/v1/offers/"
    api.wait_until_up(base, server)
    return base, server


def use_database(url: str) -> None:
    """Point Django's default connection at another of the two databases."""
    import dj_database_url
    from django.db import connections

    connections.close_all()
    connections["default"].settings_dict.update(dj_database_url.parse(url))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--to", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=80, help="per query and size, one client")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)

    import django

    django.setup()
    databases = {args.offers: api.BENCH_DATABASE_URL + "_small", args.to: api.BENCH_DATABASE_URL + "_large"}
    servers = []
    try:
        bases = {}
        for size, url in databases.items():
            use_database(url)
            api.recreate_database()
            started = time.perf_counter()
            total = api.populate(size)
            report("%d offers loaded in %.0fs", total, time.perf_counter() - started)
            base, server = serve(url)
            servers.append(server)
            bases[size] = base
        small, large = databases
        figures = {}
        for name, query, _ in api.QUERIES:
            urls = [f"{bases[size]}?{query}" if query else bases[size] for size in (small, large)]
            figures[name] = p50_in_turns(urls, args.requests)
            for size, value in zip((small, large), figures[name], strict=True):
                report("\n%s at %s offers: p50 %.2f ms", name, f"{size:,}", value)
                use_database(databases[size])
                explain(query)
    finally:
        for server in servers:
            api.stop(server)
        for url in databases.values():
            use_database(url)
            api.drop_database()

    report("\n%-30s %12s %12s %8s", "query (p50 ms, 1 client)", f"{small:,}", f"{large:,}", "ratio")
    missed = []
    for name, _, _ in api.QUERIES:
        ratio = figures[name][1] / figures[name][0]
        if ratio > 1.5:
            missed.append(f"{name} {ratio:.2f}x")
        report("%-30s %12.2f %12.2f %7.2fx", name, figures[name][0], figures[name][1], ratio)
    report("target (p50 at %s within 1.5x of %s): %s", f"{large:,}", f"{small:,}",
           "met" if not missed else "NOT met: " + ", ".join(missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
