"""Benchmark of the REST API against Datasette on the same 100,000 offers.

One run does everything on this machine, all traffic to 127.0.0.1:
1. creates a throw-away PostgreSQL database (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/
   h_api_bench), migrates it, loads the bundled snapshot (real providers, capabilities, GPU catalog, ~2,000 real
   catalog offers) and copies those offers under numbered extra regions until there are `--offers` rows. The copies
   are load for the benchmark only, in a database that is dropped at the end;
2. serves the API with gunicorn as the Dockerfile does (production settings, `--workers` processes of `--threads`
   threads, keep-alive, persistent DB connections) and
   measures five representative filtered queries at 1 and 8 concurrent clients: requests/second, p50 and p95;
3. writes the same rows (one flat table, with each provider's capability answers as columns, with the three
   indexes the PostgreSQL schema had before migration 0004) to a SQLite file, serves it with Datasette and runs the
   equivalent table queries against its JSON API with the same clients;
4. prints both, the ratio (ours / Datasette's requests per second; the target is >= 1 on every query), and checks
   that both sides counted the same number of matching rows, so the queries really are equivalent.

    .venv/bin/python bench/api.py [--offers 100000] [--seconds 8] [--workers 2] [--threads 4]

The API's rate limit is switched off for the run (API_ANON_RATE=off): every request comes from one IP and DRF
keeps one timestamp per request in that IP's history, so a limit high enough not to trigger would measure the
growing history rather than the API. Each measurement is bounded by `--seconds` and by MAX_REQUESTS requests.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH_DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/h_api_bench")
os.environ["DATABASE_URL"] = BENCH_DATABASE_URL
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "comparator.settings.local")

logger = logging.getLogger("bench.api")
report = logger.info  # the figures are the script's output

MAX_REQUESTS = 2000
CONCURRENCY = (1, 8)

# name, our query, Datasette's equivalent on the flat table (active offers, same order, 50 rows a page).
QUERIES = [
    ("default page", "",
     "is_active=1&_sort=price_per_gpu_hour_usd"),
    ("H100 under $4/GPU-h", "gpu=h100,h100-sxm,h100-pcie&price_per_gpu_hour_max=4",
     "is_active=1&gpu_slug__in=h100,h100-sxm,h100-pcie&price_per_gpu_hour_usd__lte=4&_sort=price_per_gpu_hour_usd"),
    ("managed k8s + MIG, N. America", "offering=managed&mig=yes&continent=NA",
     "is_active=1&offering=managed&mig=yes&continent=NA&_sort=price_per_gpu_hour_usd"),
    ("8+ GPUs, 80+ GB, by memory", "gpu_count_min=8&gpu_memory_min=80&ordering=-gpu_memory",
     "is_active=1&gpu_count__gte=8&gpu_memory_gb__gte=80&_sort_desc=gpu_memory_gb"),
    ("spot on two providers", "provider=azure,oci&spot=true&ordering=price_hour",
     "is_active=1&provider_slug__in=azure,oci&spot_price_hour__notnull=1&_sort=price_hour_usd"),
]

FLAT_COLUMNS = [
    "id", "provider_slug", "provider_name", "provider_kind", "source_slug", "instance_type", "region", "country",
    "continent", "gpu_slug", "gpu_name", "gpu_vendor", "gpu_family", "gpu_count", "gpu_memory_gb", "vcpus", "ram_gb",
    "currency", "price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd", "price_per_gpu_hour_usd",
    "spot_price_per_gpu_hour_usd", "availability", "first_seen", "last_seen", "is_active",
]
CAPABILITY_COLUMNS = ["offering", "mig", "mps", "time_slicing", "gpu_operator", "scale_to_zero", "spot_nodes"]
SQLITE_TYPES = {
    "id": "INTEGER PRIMARY KEY", "is_active": "INTEGER", "gpu_count": "REAL", "gpu_memory_gb": "REAL", "vcpus": "REAL",
    "ram_gb": "REAL", "price_hour": "REAL", "spot_price_hour": "REAL", "price_hour_usd": "REAL",
    "spot_price_hour_usd": "REAL", "price_per_gpu_hour_usd": "REAL", "spot_price_per_gpu_hour_usd": "REAL",
}


# --- data ----------------------------------------------------------------------------------------------------------


def recreate_database() -> None:
    import psycopg
    from django.db import connections

    name = connections["default"].settings_dict["NAME"]
    admin = {**connections["default"].get_connection_params(), "dbname": "postgres", "autocommit": True}
    with psycopg.connect(**admin) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def drop_database() -> None:
    import psycopg
    from django.db import connections

    settings = connections["default"]
    name = settings.settings_dict["NAME"]
    params = {**settings.get_connection_params(), "dbname": "postgres", "autocommit": True}
    connections.close_all()
    with psycopg.connect(**params) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def populate(total: int) -> int:
    """The real snapshot, then copies of its active offers under extra regions up to `total` offers."""
    from django.core.management import call_command
    from django.db import connection

    from providers import services
    from providers.models import Offer

    call_command("migrate", verbosity=0)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("providers").setLevel(logging.WARNING)
    services.snapshot_load()
    fields = [field.attname for field in Offer._meta.concrete_fields if field.attname != "id"]
    originals = list(Offer.objects.filter(is_active=True).order_by("id").values(*fields))
    real = Offer.objects.count()
    copies, copy_round = [], 0
    while real + len(copies) < total:
        copy_round += 1
        for values in originals[: total - real - len(copies)]:
            # A numbered copy of the region keeps the natural key (source, instance type, region) unique.
            copies.append(Offer(**{**values, "region": f"{values['region']}~bench{copy_round}"}))
    Offer.objects.bulk_create(copies, batch_size=5000)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # the steady state autovacuum keeps a live database in
    return Offer.objects.count()


def export_sqlite(path: Path) -> int:
    """The same offers as one flat table (what a Datasette user would publish), indexed on the filtered columns."""
    from providers.models import Capability, Offer

    answers: dict[int, dict[str, str]] = {}
    for provider_id, key, value in Capability.objects.values_list("provider_id", "key", "value"):
        answers.setdefault(provider_id, {})[key] = value
    rows = Offer.objects.order_by("id").values_list(
        "id", "provider__slug", "provider__name", "provider__kind", "source__slug", "instance_type", "region",
        "country", "continent", "gpu__slug", "gpu__name", "gpu__vendor", "gpu__family", "gpu_count", "gpu_memory_gb",
        "vcpus", "ram_gb", "currency", "price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd",
        "price_per_gpu_hour_usd", "spot_price_per_gpu_hour_usd", "availability", "first_seen", "last_seen",
        "is_active", "provider_id",
    )
    database = sqlite3.connect(path)
    columns = FLAT_COLUMNS + CAPABILITY_COLUMNS
    # Typed columns, so that Datasette's text parameters compare as numbers where the column is numeric.
    definitions = ", ".join(f"{column} {SQLITE_TYPES.get(column, 'TEXT')}" for column in columns)
    database.execute(f"CREATE TABLE offers ({definitions})")
    placeholders = ", ".join("?" for _ in columns)

    def flat(row):
        *values, provider_id = row
        values = [float(v) if hasattr(v, "as_tuple") else (v.isoformat() if hasattr(v, "isoformat") else v)
                  for v in values]
        values[-1] = 1 if values[-1] else 0
        cells = answers.get(provider_id, {})
        return [*values, *(cells.get(key, "unknown") for key in CAPABILITY_COLUMNS)]

    count = 0
    batch = []
    for row in rows.iterator(chunk_size=5000):
        batch.append(flat(row))
        if len(batch) == 5000:
            database.executemany(f"INSERT INTO offers VALUES ({placeholders})", batch)
            count += len(batch)
            batch = []
    database.executemany(f"INSERT INTO offers VALUES ({placeholders})", batch)
    count += len(batch)
    # The indexes the PostgreSQL schema had on offers when this baseline was set (before providers migration 0004),
    # kept as they were: Datasette's side is not tuned further, and the API's own indexes are part of what is
    # measured (Offer.Meta.indexes: partial, ordering-shaped indexes SQLite would need in another form).
    for column in ("is_active, price_per_gpu_hour_usd", "gpu_slug, is_active", "provider_slug, is_active"):
        database.execute(f"CREATE INDEX idx_{column.replace(', ', '_')} ON offers ({column})")
    database.commit()
    database.execute("ANALYZE")
    database.close()
    return count


# --- servers and clients -------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before answering {url}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {seconds}s")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def measure(url: str, clients: int, seconds: float) -> dict:
    """`clients` threads, each with its own keep-alive connection, send the same GET until `seconds` have passed or
    MAX_REQUESTS were sent; every answer must be a 200."""
    import httpx

    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    sent = [0]

    def client_loop():
        with httpx.Client(timeout=60) as client:
            while time.monotonic() < deadline:
                with lock:
                    if sent[0] >= MAX_REQUESTS:
                        return
                    sent[0] += 1
                start = time.perf_counter()
                response = client.get(url)
                elapsed = time.perf_counter() - start
                if response.status_code != 200:
                    raise RuntimeError(f"{url} answered {response.status_code}: {response.text[:300]}")
                with lock:
                    latencies.append(elapsed)

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(client_loop) for _ in range(clients)]:
            future.result()
    wall = time.perf_counter() - started
    latencies.sort()
    return {
        "requests": len(latencies),
        "rps": len(latencies) / wall,
        "p50": statistics.median(latencies) * 1000,
        "p95": latencies[max(0, int(len(latencies) * 0.95) - 1)] * 1000,
    }


def run_suite(label: str, urls: list[str], seconds: float) -> dict:
    import httpx

    results = {}
    for (name, _, _), url in zip(QUERIES, urls, strict=True):
        for _ in range(5):  # warm caches and connections
            httpx.get(url, timeout=60)
        for clients in CONCURRENCY:
            results[(name, clients)] = figures = measure(url, clients, seconds)
            report("%-10s %-28s c=%d  %7.1f req/s  p50 %7.1f ms  p95 %7.1f ms  (%d requests)", label, name,
                   clients, figures["rps"], figures["p50"], figures["p95"], figures["requests"])
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=8.0, help="per query and concurrency level")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker (gthread, keep-alive)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)

    import django

    django.setup()
    import httpx

    recreate_database()
    try:
        started = time.perf_counter()
        total = populate(args.offers)
        report("PostgreSQL: %d offers loaded in %.0fs", total, time.perf_counter() - started)
        with tempfile.TemporaryDirectory() as folder:
            sqlite_path = Path(folder) / "bench.db"
            report("SQLite for Datasette: %d offers exported", export_sqlite(sqlite_path))

            port = free_port()
            env = {**os.environ, "DATABASE_URL": BENCH_DATABASE_URL, "API_ANON_RATE": "off",
                   "DJANGO_SETTINGS_MODULE": "comparator.settings.production",
                   "DJANGO_SECRET_KEY": "bench-only-" + os.urandom(16).hex(), "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
                   "DATABASE_CONN_MAX_AGE": "600", "LOG_LEVEL": "WARNING"}
            gunicorn = subprocess.Popen(
                [str(Path(sys.executable).with_name("gunicorn")), "comparator.wsgi", "-b", f"127.0.0.1:{port}",
                 "-k", "gthread", "-w", str(args.workers), "--threads", str(args.threads), "--log-level", "warning"],
                cwd=ROOT, env=env)
            ours_base = f"http://127.0.0.1:{port}/api/v1/offers/"
            try:
                wait_until_up(ours_base, gunicorn)
                ours_urls = [f"{ours_base}?{query}" if query else ours_base for _, query, _ in QUERIES]
                ours_counts = [httpx.get(url, timeout=60).json()["count"] for url in ours_urls]
                ours = run_suite("api", ours_urls, args.seconds)
            finally:
                stop(gunicorn)

            port = free_port()
            datasette = subprocess.Popen(
                [str(Path(sys.executable).with_name("datasette")), "serve", str(sqlite_path), "-h", "127.0.0.1",
                 "-p", str(port), "--setting", "suggest_facets", "off", "--setting", "sql_time_limit_ms", "10000"],
                cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            theirs_base = f"http://127.0.0.1:{port}/bench/offers.json"
            try:
                wait_until_up(theirs_base, datasette)
                theirs_urls = [f"{theirs_base}?{query}&_size=50" for _, _, query in QUERIES]
                theirs_counts = [httpx.get(url, timeout=60).json()["filtered_table_rows_count"]
                                 for url in theirs_urls]
                theirs = run_suite("datasette", theirs_urls, args.seconds)
            finally:
                stop(datasette)
    finally:
        drop_database()

    report("")
    report("%-28s %3s %11s %11s %7s %17s %17s %15s", "query", "c", "api req/s", "dsette req/s", "ratio",
           "api p50/p95 ms", "dsette p50/p95", "rows api/dsette")
    below = []
    for index, (name, _, _) in enumerate(QUERIES):
        for clients in CONCURRENCY:
            a, b = ours[(name, clients)], theirs[(name, clients)]
            ratio = a["rps"] / b["rps"]
            if ratio < 1:
                below.append(f"{name} c={clients}")
            report("%-28s %3d %11.1f %11.1f %6.2fx %8.1f/%-8.1f %8.1f/%-8.1f %7d/%-7d", name, clients, a["rps"],
                   b["rps"], ratio, a["p50"], a["p95"], b["p50"], b["p95"], ours_counts[index], theirs_counts[index])
    mismatched = [name for (name, _, _), a, b in zip(QUERIES, ours_counts, theirs_counts, strict=True) if a != b]
    if mismatched:
        report("row counts differ for: %s (the queries are not equivalent there)", ", ".join(mismatched))
    report("target (our throughput >= Datasette's on every query): %s",
           "met" if not below else "NOT met for " + ", ".join(below))
    return 0


if __name__ == "__main__":
    sys.exit(main())
