"""Benchmark of the REST API against a fair Datasette baseline and a hand-tuned endpoint, every request different.

One run does everything on this machine, all traffic to 127.0.0.1:
1. creates a throw-away PostgreSQL database (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/
   h_api_bench), migrates it, loads the bundled snapshot (real providers, capabilities, GPU catalog, the real
   catalog offers) and copies those offers in SQL under numbered extra regions until there are `--offers` rows
   (`grow`, which bench/scale.py uses too). The copies are load for the benchmark only, in a database that is
   dropped at the end;
2. writes the same rows to a SQLite file as one flat table with each offer's own Kubernetes answers as columns (its
   profile's, which the API filters on; "unknown" for an offer without one), the `kubernetes` object the API lists
   as JSON text, price columns that sort unpriced offers last as the API does, and DATASETTE_INDEXES;
3. serves three sides at once, each with `--workers` processes and the same clients: the API with gunicorn as the
   Dockerfile does (production settings, `--threads` threads per process, keep-alive, persistent DB connections;
   it computes every page: the kept pages were removed on 2026-12-04, see the ledger); the hand-tuned WSGI endpoint of
   bench/handtuned.py under the same gunicorn (the practical limit: same rows, order, count rule and per-profile
   split); Datasette under uvicorn (bench/datasette_app.py);
4. draws every request from bench/_mix.py (six families of real filter combinations, new values per request, never
   the same query twice) and sends every side the same sequence, in turns (`--turns` chunks, the order of the sides
   rotating, so that the machine's changing load weighs on all alike), at each of `--clients`:
   - run "different": every request different, the data unchanged (what the targets are judged on);
   - run "repeated": one URL per family asked again and again (labelled: it measures kept copies);
   - run "churn": every request different while a writer updates one offer every `--bump-seconds` (each write
     raises providers.DataVersion, as a live scraper's run does; about 40 an hour in production), so what is kept
     under the data version is thrown away as it is in production (Datasette's file is immutable: it does not see
     the writes);
5. checks, on `--check` requests of the stream, that every side counts the same rows and that the hand-tuned
   endpoint returns the API's first page (ids in order), and prints per run and family requests/second and p50,
   then one target line per target (bench/_targets.py): the API >= 1.0x Datasette and >= 0.8x the hand-tuned
   endpoint in requests/second on every family at every client count of the "different" run (issue #41);
6. with `--ledger`, then serves LEDGER (the API as served, and the same with one speed mechanism switched off each)
   and measures them on the "different" and "churn" runs with new requests: what each mechanism buys.

    .venv/bin/python bench/api.py [--offers 100000] [--requests 120] [--clients 1,8] [--turns 3] [--workers 2]
        [--threads 4] [--bump-seconds 5] [--check 42] [--runs different,repeated,churn] [--ledger]

The API's rate limit is switched off for the run (API_ANON_RATE=off): every request comes from one IP.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import secrets
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
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH_DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/h_api_bench")
os.environ["DATABASE_URL"] = BENCH_DATABASE_URL
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "comparator.settings.local")

from bench import _mix, _targets  # noqa: E402

logger = logging.getLogger("bench.api")
report = logger.info  # the figures are the script's output

# The sides of the main runs: the API as served (it computes every page) and the two baselines.
SIDES = {"api": {}, "hand": "hand", "datasette": "datasette"}
# The ledger's sides (--ledger): the API as served, and the same with one mechanism switched off each (the API's own
# settings where it has one, else bench/variants.py), measured on the "different" and "churn" runs.
SERVED = {}  # the API as served: it computes every page
LEDGER = {
    "served": SERVED,
    "no remembered lookups": {**SERVED, "BENCH_WITHOUT": "remembered"},
    "no index-range split": {**SERVED, "BENCH_WITHOUT": "range_split"},
    "no count cap": {**SERVED, "BENCH_WITHOUT": "count_cap"},
}
GOALS = {"datasette": 1.0, "hand": 0.8}  # the API's requests/second over the side's, every family (issue #41)

FLAT_COLUMNS = [
    "id", "provider_slug", "provider_name", "provider_kind", "source_slug", "instance_type", "region", "country",
    "continent", "region_confirmed", "gpu_slug", "gpu_name", "gpu_vendor", "gpu_family", "gpu_count",
    "gpu_memory_gb", "vcpus", "ram_gb",
    "currency", "price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd", "price_per_gpu_hour_usd",
    "spot_price_per_gpu_hour_usd", "availability", "first_seen", "last_seen", "is_active",
]
# Each offer's own Kubernetes answers (its KubernetesProfile's columns, as the API filters them), and the
# `kubernetes` object the API lists per offer (the answers without their reasons) as JSON text, so Datasette serves
# the same information.
PROFILE_COLUMNS = ["managed_node", "byo", "mig", "mps", "time_slicing", "rdma", "fabric", "fabric_class",
                   "gpu_operator", "scale_to_zero", "spot_nodes"]
SQLITE_TYPES = {
    "id": "INTEGER PRIMARY KEY", "is_active": "INTEGER", "region_confirmed": "INTEGER", "gpu_count": "REAL",
    "gpu_memory_gb": "REAL", "vcpus": "REAL", "ram_gb": "REAL", "price_hour": "REAL", "spot_price_hour": "REAL",
    "price_hour_usd": "REAL", "spot_price_hour_usd": "REAL", "price_per_gpu_hour_usd": "REAL",
    "spot_price_per_gpu_hour_usd": "REAL", "price_per_gpu_hour_order": "REAL", "price_hour_order": "REAL",
    "gpu_memory_or_unknown": "REAL", "price_per_gpu_hour_or_unknown": "REAL", "spot_or_unknown": "INTEGER",
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

    from providers.snapshot import snapshot_load

    call_command("migrate", verbosity=0)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("providers").setLevel(logging.WARNING)
    logging.getLogger("scrapers").setLevel(logging.ERROR)
    snapshot_load()
    return grow(total)


def grow(total: int) -> int:
    """Copies of the snapshot's active offers, each under a numbered copy of its region (which keeps the natural key
    (source, instance type, region) unique), inserted in SQL until there are `total` offers; then VACUUM ANALYZE,
    the steady state autovacuum keeps a live database in."""
    from django.db import connection

    from providers.models import Offer

    columns = [field.column for field in Offer._meta.concrete_fields if field.attname != "id"]
    copied = ", ".join("region || '~bench' || %s" if column == "region" else column for column in columns)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), count(*) FILTER (WHERE region NOT LIKE '%%~bench%%' AND is_active), "
                       "coalesce(max(substring(region from '~bench([0-9]+)$')::int), 0) FROM providers_offer")
        count, originals, copy_round = cursor.fetchone()
        while count < total:
            copy_round += 1
            cursor.execute(
                f"INSERT INTO providers_offer ({', '.join(columns)}) SELECT {copied} FROM providers_offer "
                "WHERE is_active AND region NOT LIKE '%%~bench%%' ORDER BY id LIMIT %s",
                [copy_round, min(originals, total - count)])
            count += cursor.rowcount
        cursor.execute("VACUUM ANALYZE")
    return count


# Datasette's indexes: one for each of the API's (Offer.Meta.indexes) in the form Datasette's queries can use, and
# none that steers SQLite into a slower plan. Datasette binds every filter value as a parameter (`is_active = :p0`),
# so a partial index (WHERE is_active) is never chosen: `is_active` leads instead. Ascending orders sort on the
# `*_order` columns (the price with NULL as 1e18: unpriced offers last, as the API lists them); SQLite appends the
# rowid (`id`, Datasette's tiebreak) to every index; DESC sorts NULLs last in SQLite, as the API's memory index does.
# The API reads its Kubernetes filters through each offer's profile (an index on (profile, price)); the flat table
# holds the answers themselves, so each answer column the requests filter on gets an (answer, price) index, which
# serves its count and its page.
DATASETTE_INDEXES = {
    "offer_active_price": "is_active, price_per_gpu_hour_order",
    "offer_active_gpu_price": "is_active, gpu_slug, price_per_gpu_hour_order",
    "offer_active_provider_price": "is_active, provider_slug, price_per_gpu_hour_order",
    "offer_active_price_hour": "is_active, price_hour_order",
    "offer_active_provider_hour": "is_active, provider_slug, price_hour_order",
    "offer_active_gpu_hour": "is_active, gpu_slug, price_hour_order",
    "offer_active_place_hour": "is_active, continent, region_confirmed, price_hour_order",
    "offer_active_memory": "is_active, gpu_memory_gb DESC",
    **{f"offer_active_{column}_price": f"is_active, {column}, price_per_gpu_hour_order"
       for column in ("managed_node", "byo", "mig", "fabric_class", "fabric")},
}
NO_PRICE = 1e18  # the *_order columns' stand-in for NULL; gpu_memory_or_unknown's too (it passes any minimum)
NO_PRICE_UNDER_A_CEILING = -1.0  # price_per_gpu_hour_or_unknown's stand-in for NULL (it passes any ceiling)


def export_sqlite(path: Path) -> int:
    """The same offers as one flat table (what a Datasette user would publish), with DATASETTE_INDEXES."""
    import json

    from providers.models import KubernetesProfile, Offer
    from providers.serializers import kubernetes_data, kubernetes_states

    profiles = {row[0]: row[1:] for row in KubernetesProfile.objects.values_list("id", *PROFILE_COLUMNS, "answers")}
    rows = Offer.objects.order_by("id").values_list(
        "id", "provider__slug", "provider__name", "provider__kind", "source__slug", "instance_type", "region",
        "country", "continent", "region_confirmed", "gpu__slug", "gpu__name", "gpu__vendor", "gpu__family",
        "gpu_count", "gpu_memory_gb", "vcpus", "ram_gb", "currency", "price_hour", "spot_price_hour", "price_hour_usd",
        "spot_price_hour_usd", "price_per_gpu_hour_usd", "spot_price_per_gpu_hour_usd", "availability", "first_seen",
        "last_seen", "is_active", "spot_savings_pct", "kubernetes_profile_id",
    )
    database = sqlite3.connect(path)
    columns = FLAT_COLUMNS + PROFILE_COLUMNS + ["kubernetes", "price_per_gpu_hour_order", "price_hour_order",
                                                "gpu_memory_or_unknown", "price_per_gpu_hour_or_unknown",
                                                "spot_or_unknown"]
    # Typed columns, so that Datasette's text parameters compare as numbers where the column is numeric.
    definitions = ", ".join(f"{column} {SQLITE_TYPES.get(column, 'TEXT')}" for column in columns)
    database.execute(f"CREATE TABLE offers ({definitions})")
    placeholders = ", ".join("?" for _ in columns)

    def flat(row):
        *values, spot_savings, profile_id = row
        values = [float(v) if hasattr(v, "as_tuple") else (v.isoformat() if hasattr(v, "isoformat") else v)
                  for v in values]
        values[-1] = 1 if values[-1] else 0
        confirmed = FLAT_COLUMNS.index("region_confirmed")
        values[confirmed] = 1 if values[confirmed] else 0
        *states, answers = profiles.get(profile_id) or (*(["unknown"] * len(PROFILE_COLUMNS)), None)
        kubernetes = json.dumps(kubernetes_states(kubernetes_data(answers)))  # as the API lists it
        order = [NO_PRICE if values[FLAT_COLUMNS.index(column)] is None else values[FLAT_COLUMNS.index(column)]
                 for column in ("price_per_gpu_hour_usd", "price_hour_usd", "gpu_memory_gb")]
        per_gpu = values[FLAT_COLUMNS.index("price_per_gpu_hour_usd")]
        # spot=true with unknown=include: a spot price, or spot sold at a stated saving whose price is not published
        spot_or_unknown = int(values[FLAT_COLUMNS.index("spot_price_hour")] is not None or spot_savings is not None)
        return [*values, *states, kubernetes, *order, NO_PRICE_UNDER_A_CEILING if per_gpu is None else per_gpu,
                spot_or_unknown]

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
    for name, columns_sql in DATASETTE_INDEXES.items():
        database.execute(f"CREATE INDEX {name} ON offers ({columns_sql})")
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


def start_servers(sqlite_path: Path, workers: int, threads: int,
                  sides: dict[str, dict | str]) -> tuple[dict[str, str], list[subprocess.Popen]]:
    """Every side of `sides` up at once: "hand" (bench/handtuned.py under gunicorn), "datasette" (uvicorn with as
    many worker processes), or a dict of environment variables for the API under gunicorn as in the Dockerfile
    (bench.variants when it names BENCH_WITHOUT). Returns each side's offers URL and the processes."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "DATABASE_URL": BENCH_DATABASE_URL, "BENCH_DATABASE_URL": BENCH_DATABASE_URL,
           "API_ANON_RATE": "off", "DJANGO_SETTINGS_MODULE": "comparator.settings.production",
           "DJANGO_SECRET_KEY": secrets.token_urlsafe(64), "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
           "DJANGO_SSL_REDIRECT": "false",  # plain HTTP on loopback; TLS ends at the proxy in production
           "SITE_URL": "http://127.0.0.1",
           "DATABASE_CONN_MAX_AGE": "600", "LOG_LEVEL": "WARNING", "BENCH_SQLITE": str(sqlite_path)}
    gunicorn = [str(bin_dir / "gunicorn"), "-k", "gthread", "-w", str(workers), "--threads", str(threads),
                "--log-level", "warning"]
    urls, processes = {}, []
    try:
        for side, spec in sides.items():
            port = free_port()
            side_env = env
            if spec == "datasette":
                command = [str(bin_dir / "uvicorn"), "--factory", "bench.datasette_app:app", "--workers",
                           str(workers), "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
                urls[side] = f"http://127.0.0.1:{port}/bench/offers.json"
            else:
                app = "bench.handtuned:application" if spec == "hand" else (
                    "bench.variants:application" if "BENCH_WITHOUT" in spec else "comparator.wsgi")
                command = [*gunicorn, app, "-b", f"127.0.0.1:{port}"]
                side_env = env if spec == "hand" else {**env, **spec}
                urls[side] = f"http://127.0.0.1:{port}/api/v1/offers/"
            process = subprocess.Popen(command, cwd=ROOT, env=side_env, stdout=subprocess.DEVNULL)
            processes.append(process)
            wait_until_up(urls[side], process)
    except BaseException:
        for process in processes:
            stop(process)
        raise
    return urls, processes


def run_urls(urls: list[str], clients: int) -> tuple[list[float], float]:
    """`clients` threads, each with its own keep-alive connection, take the next URL of `urls` until none is left;
    every answer must be a 200. Returns the latencies and the wall time."""
    import httpx

    latencies: list[float] = []
    lock = threading.Lock()
    position = [0]

    def client_loop():
        with httpx.Client(timeout=120, headers={"Accept-Encoding": "identity"}) as client:
            while True:
                with lock:
                    if position[0] >= len(urls):
                        return
                    url = urls[position[0]]
                    position[0] += 1
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
    return latencies, time.perf_counter() - started


def figures(latencies: list[float], wall: float) -> dict:
    latencies = sorted(latencies)
    return {
        "requests": len(latencies),
        "rps": len(latencies) / wall if wall else 0.0,
        "p50": statistics.median(latencies) * 1000,
        "p95": latencies[max(0, int(len(latencies) * 0.95) - 1)] * 1000,
    }


def side_url(base: dict[str, str], side: str, params: list[tuple[str, str]]) -> str:
    query = _mix.datasette(params) if side == "datasette" else _mix.ours(params)
    return f"{base[side]}?{query}" if query else base[side]


def in_turns(base: dict[str, str], requests: list[list[tuple[str, str]]], clients: int, turns: int) -> dict:
    """The same requests to every side of `base`, in `turns` chunks, each chunk served by every side one after the
    other (the order rotating), so that a change in the machine's load weighs on every side alike."""
    sides = list(base)
    collected = {side: ([], 0.0) for side in sides}
    size = -(-len(requests) // turns)
    for turn in range(turns):
        chunk = requests[turn * size:(turn + 1) * size]
        if not chunk:
            break
        order = sides[turn % len(sides):] + sides[:turn % len(sides)]
        for side in order:
            latencies, wall = run_urls([side_url(base, side, params) for params in chunk], clients)
            collected[side] = (collected[side][0] + latencies, collected[side][1] + wall)
    return {side: figures(*collected[side]) for side in sides}


class Churn:
    """While running, a writer touches one active offer every `seconds` (UPDATE ... last_seen), which raises the data
    version in the same transaction, as a scraper's write does."""

    def __init__(self, seconds: float):
        self.seconds, self.bumps, self._stop = seconds, 0, threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        import psycopg

        rng = random.Random(41)
        with psycopg.connect(BENCH_DATABASE_URL, autocommit=True) as conn:
            (low, high), = conn.execute("SELECT min(id), max(id) FROM providers_offer WHERE is_active").fetchall()
            while not self._stop.wait(self.seconds):
                conn.execute("UPDATE providers_offer SET last_seen = now() WHERE id = (SELECT id FROM providers_offer "
                             "WHERE is_active AND id >= %s ORDER BY id LIMIT 1)", [rng.randint(low, high)])
                self.bumps += 1

    def __enter__(self):
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.elapsed = time.monotonic() - self.started


def catalog_of_rows() -> dict:
    """GPU models, providers and continents that active offers have: the values the requests draw from."""
    from providers.models import Offer

    active = Offer.objects.filter(is_active=True).order_by()
    return {
        "gpus": sorted(set(active.exclude(gpu=None).values_list("gpu__slug", flat=True))),
        "providers": sorted(set(active.values_list("provider__slug", flat=True))),
        "continents": sorted(set(active.exclude(continent="").values_list("continent", flat=True)) - {None}),
    }


def answer(side: str, url: str) -> tuple[tuple[int, bool], list, dict | tuple | None]:
    """((count, exact), the first page, offers left out for an unknown answer by provider, or (total, False) past
    the count limit) as the side answers (Datasette has no such count: None). The page is its ids for Datasette,
    whose rows are a flat table, and every field of every row for the others (each row's `url` read as its path: the
    sides listen on other ports), so the hand-tuned endpoint is checked to write what the API writes, not fewer
    fields. Datasette counts exactly; its count is read by the API's rule (exact up to COUNT_EXACT_UP_TO or the
    first page's end, else "more than" that), which is what the others must agree with."""
    import httpx

    from providers.offer_reads import COUNT_EXACT_UP_TO

    data = httpx.get(url, timeout=120).json()
    if side == "datasette":
        rows = data["rows"]
        ids = [row["id"] if isinstance(row, dict) else row[data["columns"].index("id")] for row in rows]
        found, limit = data["filtered_table_rows_count"], max(COUNT_EXACT_UP_TO, len(ids))
        return (min(found, limit), found <= limit), ids, None
    counted = (data["count"], data["count_exact"])
    page = [{**row, "url": urlsplit(row["url"]).path} for row in data["results"]]
    left_out = data["left_out_for_unknown"]
    # Past the count limit both sides name the providers among the first offers each found, in no set order: then
    # the total and the limit are what must agree.
    return counted, page, left_out["by_provider"] if left_out["exact"] else (left_out["total"], False)


def page_difference(api: list[dict], hand: list[dict]) -> str:
    """The first difference between two pages, in words."""
    if [row["id"] for row in api] != [row["id"] for row in hand]:
        return "other offers or order"
    for ours, theirs in zip(api, hand, strict=True):
        for key in sorted(set(ours) | set(theirs)):
            if ours.get(key, "(missing)") != theirs.get(key, "(missing)"):
                return (f"offer {ours['id']} {key}: api {ours.get(key, '(missing)')!r}, "
                        f"hand {theirs.get(key, '(missing)')!r}")
        if list(ours) != list(theirs):
            return f"offer {ours['id']}: fields in another order"
    return "none"


def check(base: dict[str, str], requests: list[list[tuple[str, str]]]) -> tuple[list[str], dict]:
    """Every side's count and first page for `requests`, and the API's and hand-tuned endpoint's offers left out for
    an unknown answer: the problems found, and tallies."""
    problems, tally = [], {"requests": len(requests), "counts_equal": 0, "hand_page_equal": 0,
                           "datasette_page_equal": 0, "left_out_equal": 0}
    for params in requests:
        answers = {side: answer(side, side_url(base, side, params)) for side in base}
        counts = {side: count for side, (count, _ids, _left_out) in answers.items()}
        if len(set(counts.values())) == 1:
            tally["counts_equal"] += 1
        else:
            problems.append(f"counts differ for ?{_mix.ours(params)}: {counts}")
        if answers["hand"][1] == answers["api"][1]:
            tally["hand_page_equal"] += 1
        else:
            problems.append(f"hand-tuned first page differs for ?{_mix.ours(params)}: "
                            f"{page_difference(answers['api'][1], answers['hand'][1])}")
        if answers["datasette"][1] == [row["id"] for row in answers["api"][1]]:
            tally["datasette_page_equal"] += 1
        if answers["hand"][2] == answers["api"][2]:
            tally["left_out_equal"] += 1
        else:
            problems.append(f"left out for unknown differs for ?{_mix.ours(params)}: api {answers['api'][2]}, "
                            f"hand {answers['hand'][2]}")
    return problems, tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=120, help="per family, client count, run and side")
    parser.add_argument("--clients", default="1,8", help="concurrent clients, comma-separated")
    parser.add_argument("--turns", type=int, default=3, help="chunks the sides take turns on")
    parser.add_argument("--workers", type=int, default=2, help="server processes of every side")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker (gthread, keep-alive)")
    parser.add_argument("--bump-seconds", type=float, default=5.0, help="churn run: seconds between data writes")
    parser.add_argument("--check", type=int, default=42, help="requests whose counts and pages are compared")
    parser.add_argument("--runs", default="different,repeated,churn")
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--ledger", action="store_true",
                        help="then measure the API as served against itself with one mechanism off each (LEDGER)")
    args = parser.parse_args()
    client_counts = [int(value) for value in args.clients.split(",")]
    runs = [run for run in args.runs.split(",") if run]
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)

    _targets.django_with_plain_figures(logger)

    from bench import handtuned
    from providers.offer_reads import COUNT_EXACT_UP_TO

    assert handtuned.COUNT_EXACT_UP_TO == COUNT_EXACT_UP_TO, "the hand-tuned endpoint counts by another rule"
    started_all = time.perf_counter()
    recreate_database()
    bumps: dict = {}
    ledger: dict = {}
    try:
        started = time.perf_counter()
        total = populate(args.offers)
        report("PostgreSQL: %d offers loaded in %.0fs", total, time.perf_counter() - started)
        catalog = catalog_of_rows()
        report("drawing from %d GPU models, %d providers, %d continents (seed %d)", len(catalog["gpus"]),
               len(catalog["providers"]), len(catalog["continents"]), args.seed)
        seen: set[str] = set()
        with tempfile.TemporaryDirectory() as folder:
            sqlite_path = Path(folder) / "bench.db"
            report("SQLite for Datasette: %d offers exported", export_sqlite(sqlite_path))
            base, processes = start_servers(sqlite_path, args.workers, args.threads, SIDES)
            try:
                warm_up(base, catalog, seen, args.seed)
                checked = [params for family in _mix.FAMILIES
                           for params in _mix.stream(args.seed + 1, family, -(-args.check // 6), catalog, seen)]
                problems, tally = check(base, checked)
                report("checked %d requests: %d with equal counts on all sides", tally["requests"],
                       tally["counts_equal"])
                results = measure_runs(base, runs, client_counts, catalog, seen, args, 0, bumps)
            finally:
                for process in processes:
                    stop(process)
            if args.ledger:
                base, processes = start_servers(sqlite_path, args.workers, args.threads, LEDGER)
                try:
                    warm_up(base, catalog, seen, args.seed + 2)
                    ledger = measure_runs(base, [run for run in runs if run != "repeated"], client_counts, catalog,
                                          seen, args, 50, bumps)
                finally:
                    for process in processes:
                        stop(process)
    finally:
        drop_database()

    report("")
    report("Requests/second (p50 ms) per run, client count and family; every side got the same requests, in turns.")
    sides = list(SIDES)
    report("%-9s %2s %-26s %-16s %-16s %-16s %8s %8s", "run", "c", "family", *sides, "api/dset", "api/hand")
    for (run, clients, family), f in results.items():
        report("%-9s %2d %-26s %-16s %-16s %-16s %7.2fx %7.2fx", run, clients, family,
               *(f"{f[side]['rps']:7.1f} ({f[side]['p50']:5.1f})" for side in sides),
               f["api"]["rps"] / f["datasette"]["rps"], f["api"]["rps"] / f["hand"]["rps"])
    if bumps:
        done = sum(b for b, _s in bumps.values())
        seconds = sum(s for _b, s in bumps.values())
        report("churn: %d data-version bumps in %.0f s of measuring (%.0f an hour; live scrapers: about 40 an hour)",
               done, seconds, done / seconds * 3600 if seconds else 0)
    gains = {}
    if ledger:
        report("")
        report("Ledger: the served API's requests/second over the same API with one mechanism switched off (>1: the "
               "mechanism helps), same requests, in turns")
        variants = [side for side in LEDGER if side != "served"]
        report("%-9s %2s %-26s %10s  %s", "run", "c", "family", "served", "  ".join(f"{v[3:]:>22}" for v in variants))
        for (run, clients, family), f in ledger.items():
            report("%-9s %2d %-26s %10.1f  %s", run, clients, family, f["served"]["rps"], "  ".join(
                f"{f['served']['rps'] / f[v]['rps']:21.2f}x" for v in variants))
            for variant in variants:
                gains.setdefault((variant[3:], run), []).append(f["served"]["rps"] / f[variant]["rps"])
    report("")
    report("Gain of each mechanism (requests/second with it over without it; geometric mean over families and client "
           "counts, min-max):")
    for (mechanism, run), values in gains.items():
        if values:
            report("  %-34s %-9s %5.2fx  (%.2f-%.2fx)", mechanism, run, statistics.geometric_mean(values),
                   min(values), max(values))
    report("")
    report("Checked %d requests (every family): counts equal on all sides for %d; the hand-tuned endpoint's "
           "first page equals the API's, field by field, for %d; Datasette's for %d (its memory order breaks ties by "
           "id, the API's by "
           "price); the hand-tuned endpoint's offers left out for an unknown answer (per provider) equal the API's for "
           "%d", tally["requests"], tally["counts_equal"], tally["hand_page_equal"], tally["datasette_page_equal"],
           tally["left_out_equal"])
    for problem in problems[:20]:
        report("  %s", problem)
    report("(api: as served; hand: bench/handtuned.py; dset: Datasette. 2-core machine "
           "shared with the database, the clients and any other work: only ratios within one run are compared.)")
    report("total time %.0f s", time.perf_counter() - started_all)
    report("")
    if "different" in runs:
        for clients in client_counts:
            for family in _mix.FAMILIES:
                f = results[("different", clients, family)]
                for side, goal in GOALS.items():
                    label = "datasette" if side == "datasette" else "hand-tuned"
                    _targets.at_least(f"api/{label} req/s, every request different, {family}, c={clients}",
                                      f["api"]["rps"] / f[side]["rps"], goal)
    _targets.line("same rows on all sides (sampled requests)",
                  f"{tally['counts_equal']}/{tally['requests']} counts equal, "
                  f"{tally['hand_page_equal']}/{tally['requests']} hand-tuned first pages equal field by field, "
                  f"{tally['left_out_equal']}/{tally['requests']} hand-tuned left-out counts equal",
                  f"{tally['requests']}/{tally['requests']} all three",
                  tally["counts_equal"] == tally["requests"] == tally["hand_page_equal"] == tally["left_out_equal"])
    return 0


def warm_up(base: dict[str, str], catalog: dict, seen: set[str], seed: int) -> None:
    """Connections, imports, the hand-tuned catalog; these URLs are never asked again."""
    warmup = _mix.stream(seed, "mixed", 30, catalog, seen)
    for side in base:
        run_urls([side_url(base, side, params) for params in warmup], 2)


def measure_runs(base, runs, client_counts, catalog, seen, args, seed_offset, bumps) -> dict:
    results = {}
    for run in runs:
        for clients in client_counts:
            for family in _mix.FAMILIES:
                seed = args.seed + seed_offset + 100 * clients + (7 if run == "churn" else 0)
                requests = _mix.stream(seed, family, args.requests, catalog, seen)
                if run == "repeated":
                    requests = [requests[0]] * args.requests
                if run == "churn":
                    with Churn(args.bump_seconds) as churn:
                        measured = in_turns(base, requests, clients, args.turns)
                    bumps[(seed_offset, clients, family)] = (churn.bumps, churn.elapsed)
                else:
                    measured = in_turns(base, requests, clients, args.turns)
                results[(run, clients, family)] = measured
                report("%-9s c=%d %-26s %s", run, clients, family, "  ".join(
                    f"{side} {f['rps']:6.1f}/s {f['p50']:5.1f}ms" for side, f in measured.items()))
    return results

if __name__ == "__main__":
    sys.exit(main())
