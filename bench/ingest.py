"""Ingestion benchmark: how fast `providers.ingest.offers_sync` stores a large response, against a raw bulk insert
of the same rows into the same PostgreSQL database, measured in the same run.

It creates a scratch database (`bench_ingest_<pid>` on BENCH_POSTGRES_URL, default the local trust server), migrates
it, runs three syncs of the same source and drops the database at the end, whatever happens:

1. first sync: every offer is new (offers + one history row each);
2. unchanged re-run: the same response again (nothing but last_seen may be written);
3. a re-run where 5% of the offers changed price (updates + history for those only).

The rows are synthetic (instance types numbered per GPU, each in 40 regions, as real catalogs list a type in many
regions, so 1,000,000 offers have 25,000 Kubernetes profiles) and only ever live in the scratch database.
Figures: seconds, offers/second, ratio to the raw insert and to COPY, and peak resident memory of this process. The
response is handed to offers_sync as a generator of ScrapedOffer, as a client that parses as it reads does, so the
peak is what the ingestion itself holds (`--list` hands it a list built first, as a client that returns a list does,
and prints what that list alone costs). `--through-scraper` makes every response with a real scraper instead: the
same offers written as a SkyPilot `vms.csv`, read by `scrapers.skypilot`'s client over HTTP (MockTransport, 64 KiB
chunks) and parsed as it arrives, as a live catalog run does. Targets from issues 3, 17 and 37: first sync <= 3x the
raw insert, unchanged re-run <= 1x the raw COPY, peak memory under 1 GiB (600 MiB through the scraper).

    .venv/bin/python bench/ingest.py [--offers 100000] [--changed 0.05] [--list | --through-scraper]
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import _targets  # noqa: E402

logger = logging.getLogger("bench.ingest")

ADMIN_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
GPUS = [("H100", "80"), ("A100", "40"), ("A100", "80"), ("L40S", "48"), ("RTX 4090", "24"), ("H200", "141"),
        ("MI300X", "192"), ("L4", "24"), ("A10", "24"), ("V100", "16")]
TARGETS = {"first sync": 3.0, "unchanged re-run": 1.0}
REGIONS = 40


def rss_mib() -> float:
    """Resident memory now (not the high-water mark)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux: the high-water mark of the whole process (input, ORM and driver buffers included).
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_offers(count: int, price_bump: set[int] | None = None, start: int = 0) -> list:
    """Offers number `start` to `count - 1` (each offer the same whichever slice builds it)."""
    return list(stream_offers(count, price_bump, start))


def stream_offers(count: int, price_bump: set[int] | None = None, start: int = 0):
    """The same offers, made one at a time as they are read."""
    from scrapers.base import ScrapedOffer

    price_bump = price_bump or set()
    for index in range(start, count):
        # Each instance type in REGIONS regions, as real catalogs list theirs: one Kubernetes profile per type.
        kind = index // REGIONS
        gpu, memory = GPUS[kind % len(GPUS)]
        gpus = Decimal((1, 2, 4, 8)[kind // len(GPUS) % 4])
        price = Decimal("1.25") * gpus + Decimal(index % 97) / 100
        if index in price_bump:
            price += Decimal("0.10")
        yield ScrapedOffer(
            instance_type=f"bench-{gpu.replace(' ', '').lower()}-{kind}",
            region=f"us-east-{index % REGIONS}",
            gpu_name=gpu,
            gpu_count=gpus,
            gpu_memory_gb=Decimal(memory),
            vcpus=Decimal(16) * gpus,
            ram_gb=Decimal(64) * gpus,
            currency="USD",
            price_hour=price,
            spot_price_hour=(price / 2).quantize(Decimal("0.0001")) if index % 3 == 0 else None,
            availability=("available", "limited", "unavailable")[index % 3],
            available_count=index % 9,
        )


CATALOG_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
CHUNK = 64 * 1024


def write_catalog(path: Path, count: int, price_bump: set[int] | None = None) -> None:
    """The same offers as a SkyPilot `vms.csv` (the columns and the GpuInfo literal the real files have), for
    `--through-scraper`: the scraper's own parser then makes the offers from it."""
    with path.open("w") as out:
        out.write(CATALOG_HEADER)
        for offer in stream_offers(count, price_bump):
            mib = int(offer.gpu_memory_gb) * 1024
            info = (f"{{'Gpus': [{{'Name': '{offer.gpu_name}', 'Count': {offer.gpu_count}, 'MemoryInfo': "
                    f"{{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {mib * int(offer.gpu_count)}}}")
            out.write(f'{offer.instance_type},{offer.gpu_name},{offer.gpu_count},{offer.vcpus},{offer.ram_gb},'
                      f'{offer.price_hour},{offer.region},"{info}",{offer.spot_price_hour or ""}\n')


def scraper_offers(path: Path):
    """The offers of a real SkyPilot catalog client (`scrapers.skypilot`, Lambda's) reading `path` as the catalog
    file, served by httpx.MockTransport in 64 KiB chunks as a download arrives: the scraper's own code path, from the
    HTTP body through its CSV parser to ScrapedOffer, as a live run takes it (GitHub's commit date answers 404)."""
    import httpx

    from scrapers.http import build_client
    from scrapers.skypilot import CLIENTS

    def chunks():
        with path.open("rb") as body:
            while chunk := body.read(CHUNK):
                yield chunk

    def route(request):
        if request.url.host == "api.github.com":
            return httpx.Response(404, json={"message": "Not Found"})
        return httpx.Response(200, content=chunks())

    return CLIENTS["skypilot-lambda"](build_client(transport=httpx.MockTransport(route))).fetch().offers


def timed_sync(source, offers, label: str):
    from django.db import transaction
    from django.utils import timezone

    from providers.ingest import offers_sync
    from providers.models import ScrapeRun
    from scrapers.base import ScrapeResult

    now = timezone.now()
    run = ScrapeRun.objects.create(source=source, started_at=now)
    started = time.perf_counter()
    with transaction.atomic():
        counts = offers_sync(source=source, run=run, result=ScrapeResult(offers=offers), now=now)
    elapsed = time.perf_counter() - started
    logger.debug("%s: %s", label, counts)
    return elapsed, counts


RAW_CHUNK = 50_000


def raw_insert(source, count: int) -> tuple[float, float]:
    """Insert the same rows with no ORM and no comparison: pre-built tuples sent with the driver's executemany
    (psycopg pipelines it: the usual fastest INSERT), then the same rows again with COPY (the fastest way PostgreSQL
    takes rows at all). Both into the offers table, under a separate source, each rolled back afterwards. Rows are
    built RAW_CHUNK at a time, outside the timed part, so the baseline's own memory stays small too."""
    from django.db import connection, transaction
    from django.utils import timezone

    from providers import ingest, offer_normalise
    from providers.models import GpuModel
    from scrapers.normalize import default_gpu_resolver

    now = timezone.now()
    gpu_ids = dict(GpuModel.objects.values_list("slug", "id"))
    counts = ingest.SyncCounts()
    columns = ["source_id", "instance_type", "region", *offer_normalise.OFFER_FIELDS, "first_seen", "last_seen"]
    normaliser = offer_normalise.OfferNormaliser(source=source, resolver=default_gpu_resolver(), gpu_ids=gpu_ids,
                                                 rates={})
    column_sql = ", ".join(columns)
    figures = []
    for method in ("insert", "copy"):
        sid = transaction.savepoint()
        elapsed = 0.0
        with connection.cursor() as cursor:
            # Raw means raw: without the data-version trigger (migration 0008), which would add an UPDATE to each
            # of the million one-row INSERT statements (offers_sync writes in a few statements). Rolled back below.
            cursor.execute("ALTER TABLE providers_offer DISABLE TRIGGER providers_offer_data_version")
            for start in range(0, count, RAW_CHUNK):
                rows = [(source.id, offer.instance_type, offer.region, *normaliser.values(offer, counts), now, now)
                        for offer in build_offers(min(count, start + RAW_CHUNK), start=start)]
                started = time.perf_counter()
                if method == "insert":
                    cursor.executemany(
                        f"INSERT INTO providers_offer ({column_sql}) VALUES ({', '.join(['%s'] * len(columns))})",
                        rows)
                else:
                    with cursor.cursor.copy(f"COPY providers_offer ({column_sql}) FROM STDIN") as copy:
                        for row in rows:
                            copy.write_row(row)
                elapsed += time.perf_counter() - started
        figures.append(elapsed)
        transaction.savepoint_rollback(sid)
    return figures[0], figures[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--changed", type=float, default=0.05, help="share of offers whose price changes in run 3")
    parser.add_argument("--list", action="store_true", help="hand offers_sync a list built first, not a generator")
    parser.add_argument("--through-scraper", action="store_true",
                        help="make each response with a real scraper (SkyPilot's catalog client) from a CSV file")
    args = parser.parse_args()
    # Our own handler: Django's LOGGING (set up later) keeps the rest of the process quiet at WARNING.
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

    name = f"bench_ingest_{os.getpid()}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        return run_benchmark(name, args.offers, args.changed, as_list=args.list, scraper=args.through_scraper)
    finally:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        logger.info("dropped scratch database %s", name)


def run_benchmark(name: str, count: int, changed_share: float, as_list: bool = False, scraper: bool = False) -> int:
    base = ADMIN_URL.rsplit("/", 1)[0]
    os.environ["DATABASE_URL"] = f"{base}/{name}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "comparator.settings.test"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction

    from providers import facts_sync
    from providers.models import DataSource, Offer, PriceObservation
    from tests.factories import DataSourceFactory

    call_command("migrate", verbosity=0)
    facts_sync.gpu_catalog_sync()
    source = DataSourceFactory(slug="bench-api", provider__slug="bench-provider")
    raw_source = DataSourceFactory(slug="bench-raw", provider=source.provider)

    step = max(1, round(1 / changed_share)) if changed_share else 0
    bumped = set(range(0, count, step)) if step else set()
    logger.info("scratch database %s, %s offers (synthetic), %s with a changed price in run 3\n",
                name, f"{count:,}", f"{len(bumped):,}")

    with transaction.atomic():
        raw_source = DataSource.objects.get(pk=raw_source.pk)
        raw_seconds, copy_seconds = raw_insert(raw_source, count)
    results = []
    logger.info("peak RSS before the syncs: %.0f MiB", peak_rss_mib())
    folder = tempfile.TemporaryDirectory(prefix="bench-ingest-")
    catalogs = {}
    if scraper:
        # The files a provider's catalog would be, written before anything is timed (the download, not our work).
        for label, bump in (("base", None), ("bumped", bumped)):
            catalogs[label] = Path(folder.name) / f"{label}.csv"
            write_catalog(catalogs[label], count, bump)
        logger.info("catalog files: %s, %.0f MiB each", folder.name, catalogs["base"].stat().st_size / 2**20)

    def response(bump: set[int] | None = None):
        if scraper:
            return scraper_offers(catalogs["bumped" if bump else "base"])
        return build_offers(count, price_bump=bump) if as_list else stream_offers(count, price_bump=bump)

    if as_list:
        offers = build_offers(count)
        logger.info("resident with the response built (a list of %s ScrapedOffer): %.0f MiB", f"{count:,}", rss_mib())
    logger.info("offers handed to offers_sync as %s", "a list built first" if as_list else
                "a real scraper's generator (SkyPilot's catalog client)" if scraper else "a generator")
    # Making the offers is the client's work, not the ingestion's: the raw baselines build their rows outside the
    # timed part, and so does a list. With a generator it happens inside the sync, so it is timed alone here, in the
    # same run, and subtracted for the "net" figures (both are printed).
    started = time.perf_counter()
    for _ in response():
        pass
    making = 0.0 if as_list else time.perf_counter() - started
    logger.info("making the %s offers alone (the generator, read to the end): %.2f s%s", f"{count:,}",
                time.perf_counter() - started, "" if not as_list else " (not subtracted: the list is built first)")
    for label in ("first sync", "unchanged re-run"):
        seconds, counts = timed_sync(source, offers if as_list else response(), label)
        results.append((label, seconds, counts, peak_rss_mib()))
    # The response a provider would send next: the old one is gone by then, as it is here.
    offers = None
    changed = response(bumped)
    seconds, counts = timed_sync(source, changed, "5% changed re-run")
    del changed
    results.append(("5% changed re-run", seconds, counts, peak_rss_mib()))
    folder.cleanup()

    logger.info("%-22s %9s %9s %12s %11s %15s", "", "seconds", "net", "vs INSERT", "vs COPY", "peak RSS MiB")
    logger.info("%-22s %9.2f %9s %11.2fx %10.2fx %15s", "raw INSERT (baseline)", raw_seconds, "",
                1.0, raw_seconds / copy_seconds, "")
    logger.info("%-22s %9.2f %9s %11.2fx %10.2fx %15s", "raw COPY", copy_seconds, "",
                copy_seconds / raw_seconds, 1.0, "")
    ratios = {}
    for label, seconds, counts, rss in results:
        net = seconds - making
        logger.info("%-22s %9.2f %9.2f %11.2fx %10.2fx %15.0f   (created %s, updated %s, unchanged %s)", label,
                    seconds, net, net / raw_seconds, net / copy_seconds, rss, counts.created,
                    counts.updated, counts.unchanged)
        if label in TARGETS:
            ratios[label] = net / (raw_seconds if label == "first sync" else copy_seconds)
    peak = max(rss for *_, rss in results)

    # The figures only count if the syncs did what they claim.
    assert results[0][2].created == count and results[1][2].unchanged == count
    assert results[2][2].updated == len(bumped) and results[2][2].unchanged == count - len(bumped)
    history = PriceObservation.objects.filter(offer__source=source).count()
    assert history == count + len(bumped), history
    assert Offer.objects.filter(source=source, is_active=True).count() == count

    logger.info("")
    met = [_targets.at_most(f"{label} (net) / raw {'INSERT' if label == 'first sync' else 'COPY'}, {count:,} offers",
                            ratios[label], goal) for label, goal in TARGETS.items()]
    if scraper:
        met.append(_targets.at_most(f"peak memory of the three syncs through a real scraper, {count:,} offers", peak,
                                    600, "MiB", digits=0))
    else:
        met.append(_targets.at_most(f"peak memory of the three syncs, {count:,} offers", peak, 1024, "MiB", digits=0))
    return 0 if all(met) else 1

if __name__ == "__main__":
    sys.exit(main())
