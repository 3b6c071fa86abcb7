"""Does the API stay flat from 100,000 to 1,000,000 offers? p50 of each bench/api.py request family at both sizes, in
one run, every request different, and EXPLAIN ANALYZE of the SQL one request of each family runs.

It loads bench/api.py's data (the real snapshot copied under numbered regions) into a throw-away PostgreSQL database
twice, `--offers` and `--to` offers (BENCH_DATABASE_URL + `_small` / `_large`, default postgres://postgres@127.0.0.1:
5432/h_scale_bench_*), serves each with gunicorn as bench/api.py does, both up at once, and measures each query at one
client on both, taking turns: `--requests` different requests per family drawn by bench/_mix.py, the same sequence
for both sizes (so no count or page is ever asked twice: every count is computed); then prints the plans of the
count and of the page statement of one request per family (captured from the selectors themselves, so they are the
SQL the API runs). Targets (issues 17 and 41), one line each: p50 at 1,000,000 within 1.5x of 100,000 per family.

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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/h_scale_bench")

import api  # noqa: E402  (bench/api.py: data, servers)

from bench import _mix, _targets  # noqa: E402

logger = logging.getLogger("bench.scale")
report = logger.info


def latencies(urls: list[str]) -> list[float]:
    import httpx

    with httpx.Client(timeout=120) as client:
        found = []
        for url in urls:
            started = time.perf_counter()
            response = client.get(url)
            found.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}")
    return found


def p50_in_turns(bases: list[str], queries: list[str], turns: int = 4) -> list[float]:
    """p50 (ms) of each server over the same `queries` (each asked once per server), the servers taking turns
    (`turns` chunks, the order rotating), so that the machine's changing load weighs on both sizes alike."""
    collected: list[list[float]] = [[] for _ in bases]
    size = -(-len(queries) // turns)
    for turn in range(turns):
        chunk = queries[turn * size:(turn + 1) * size]
        order = list(range(len(bases)))
        order = order[turn % len(order):] + order[:turn % len(order)]
        for index in order:
            collected[index] += latencies([f"{bases[index]}?{query}" for query in chunk])
    return [statistics.median(found) * 1000 for found in collected]


def explain(query: str) -> None:
    """EXPLAIN ANALYZE of every statement on the offers table that the API's selectors run for `query` (reported
    as unavailable if the selectors' internals it calls have changed)."""
    try:
        _explain(query)
    except Exception as error:  # noqa: BLE001  (a bench on a changed tree still reports its figures)
        report("  EXPLAIN unavailable on this tree: %r", error)


def _explain(query: str) -> None:
    from django.db import connection
    from django.http import QueryDict
    from django.test.utils import CaptureQueriesContext

    from providers import offer_reads, versions
    from providers.filters import offer_filterset

    with versions.data_version_scope(), CaptureQueriesContext(connection) as captured:
        filterset = offer_filterset(QueryDict(query))
        assert filterset.is_valid(), filterset.errors
        offer_reads.offer_count(filters=filterset)
        offer_reads.offer_page(filters=filterset, offset=0, limit=50)
    statements = [q["sql"] for q in captured.captured_queries if "providers_offer" in q["sql"]]
    with connection.cursor() as cursor:
        for label, sql in zip(("count", "page"), statements, strict=False):
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}")
            report("  %s:", label)
            for (line,) in cursor.fetchall():
                report("    %s", line)


def serve(database_url: str) -> tuple[str, subprocess.Popen]:
    port = api.free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "API_ANON_RATE": "off",
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
    parser.add_argument("--requests", type=int, default=80, help="different requests per family and size")
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args()
    _targets.django_with_plain_figures(logger)
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
        use_database(databases[small])
        catalog = api.catalog_of_rows()
        seen: set[str] = set()
        warmup = [_mix.ours(params) for params in _mix.stream(1, "mixed", 10, catalog, seen)]
        p50_in_turns([bases[small], bases[large]], warmup, turns=1)  # connections and imports of both servers
        figures = {}
        for family in _mix.FAMILIES:
            queries = [_mix.ours(params) for params in _mix.stream(args.seed, family, args.requests, catalog, seen)]
            figures[family] = p50_in_turns([bases[small], bases[large]], queries)
            for size, value in zip((small, large), figures[family], strict=True):
                report("\n%s at %s offers: p50 %.2f ms over %d different requests; plans of ?%s", family,
                       f"{size:,}", value, len(queries), queries[0])
                use_database(databases[size])
                explain(queries[0])
    finally:
        for server in servers:
            api.stop(server)
        for url in databases.values():
            use_database(url)
            api.drop_database()

    report("\n%-30s %12s %12s %8s", "family (p50 ms, 1 client)", f"{small:,}", f"{large:,}", "ratio")
    for family in _mix.FAMILIES:
        report("%-30s %12.2f %12.2f %7.2fx", family, figures[family][0], figures[family][1],
               figures[family][1] / figures[family][0])
    report("(every request different; 2-core machine shared with the database, the client and any other work)\n")
    for family in _mix.FAMILIES:
        _targets.at_most(f"p50 at {large:,} / p50 at {small:,} offers, every request different, {family}",
                         figures[family][1] / figures[family][0], 1.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
