"""Digest benchmark: one weekly send to 10,000 confirmed subscribers over 500 distinct saved filters, with a week of
price and availability history for 100,000 offers; prints the time and the number of database queries.

It creates a scratch database (`bench_digest_<pid>` on BENCH_POSTGRES_URL, default the local trust server), migrates
it, seeds it and drops it at the end, whatever happens. The GPU catalog and the providers with their curated
capabilities are the project's real curated data; offers, history, subscribers and filters are synthetic (numbered
instance types, generated filters) and only ever live in the scratch database. Emails go to Django's in-memory
backend, so each message is fully built (MIME, both parts) but nothing leaves the process.

Figures, for the run and again for twice the subscribers on the same filters:
- seconds for the change computation and rendering (dry: every distinct filter's digest) and for the whole send;
- database queries, split into the one-per-email Delivery insert (the exactly-once record of each send) and all
  others. Target from issue 6: the query count depends on the number of distinct filters, not on the number of
  subscribers, so "all others" must stay the same when the subscribers double.

    .venv/bin/python bench/digest.py [--offers 100000] [--subscribers 10000] [--filters 500]
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import _targets  # noqa: E402

logger = logging.getLogger("bench.digest")

ADMIN_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
SEND_AT = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)  # a Monday, one hour after the send boundary


class QueryCounter:
    """Counts queries by kind through connection.execute_wrapper (no list of 10,000 captured statements)."""

    def __init__(self):
        self.counts: Counter[str] = Counter()

    def __call__(self, execute, sql, params, many, context):
        kind = "delivery insert" if sql.lstrip().upper().startswith('INSERT INTO "DIGEST_DELIVERY"') else "other"
        self.counts[kind] += 1
        return execute(sql, params, many, context)


def seed(offers: int, subscribers: int, filters: int, rng: random.Random) -> list[str]:
    from digest.models import Subscription
    from digest.savedfilters import saved_filter_parse
    from digest.weeks import digest_week
    from providers import facts_sync
    from providers.models import (
        CapabilityChange,
        DataSource,
        GpuModel,
        Offer,
        PriceObservation,
        Provider,
        RunStatus,
        ScrapeRun,
    )

    week = digest_week(SEND_AT)
    before, mid = week.start - timedelta(days=10), week.start + timedelta(days=3)
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    providers = list(Provider.objects.order_by("slug"))
    sources = [DataSource.objects.create(slug=f"bench-{p.slug}", name=f"bench {p.slug}", kind="api", provider=p,
                                         url="https://example.org/bench") for p in providers]
    for source in sources:
        ScrapeRun.objects.create(source=source, started_at=before, status=RunStatus.SUCCEEDED)
        ScrapeRun.objects.create(source=source, started_at=mid, status=RunStatus.SUCCEEDED)
    gpus = list(GpuModel.objects.order_by("slug"))

    rows, history = [], []
    for index in range(offers):
        source = sources[index % len(sources)]
        gpu = gpus[index % len(gpus)]
        count = Decimal((1, 2, 4, 8)[index // len(gpus) % 4])
        price = (Decimal("0.40") + Decimal(index % 400) / 100) * count
        roll = rng.random()
        new = roll < 0.01
        gone = 0.01 <= roll < 0.02
        rows.append(Offer(
            provider_id=source.provider_id, source=source, instance_type=f"bench-{gpu.slug}-{index}",
            region=f"region-{index % 40}", country="US", continent="NA", gpu=gpu, gpu_name=gpu.name, gpu_count=count,
            gpu_memory_gb=gpu.memory_gb, currency="USD", price_hour=price, price_hour_usd=price,
            price_per_gpu_hour_usd=price / count, availability="available", first_seen=mid if new else before,
            last_seen=before if gone else mid, is_active=not gone,
        ))
    Offer.objects.bulk_create(rows, batch_size=5000)
    for offer in rows:
        start_at = offer.first_seen
        history.append(PriceObservation(offer=offer, observed_at=start_at, price_hour=offer.price_hour,
                                        price_hour_usd=offer.price_hour, currency="USD", availability="available"))
        if not offer.is_active or start_at == mid:
            continue
        roll = rng.random()
        if roll < 0.20:  # a fifth of the offers change price in the week, a third of those by less than 5%
            factor = Decimal(rng.choice(["0.85", "0.90", "0.97", "1.02", "1.08", "1.20"]))
            new_price = (offer.price_hour * factor).quantize(Decimal("0.00001"))
            history.append(PriceObservation(offer=offer, observed_at=mid, price_hour=new_price,
                                            price_hour_usd=new_price, currency="USD", availability="available"))
        elif roll < 0.25:
            history.append(PriceObservation(offer=offer, observed_at=mid, price_hour=offer.price_hour,
                                            price_hour_usd=offer.price_hour, currency="USD",
                                            availability="unavailable"))
    PriceObservation.objects.bulk_create(history, batch_size=5000)
    for provider in providers[:5]:
        CapabilityChange.objects.create(provider=provider, key="scale_to_zero", old_value="no", new_value="yes",
                                        origin="curated", changed_at=mid, source_url="https://example.org/bench")

    queries: set[str] = set()
    prices = ["1", "1.5", "2", "2.5", "3", "4", "5", "8", "10", "20"]
    while len(queries) < filters:
        params = [f"gpu={rng.choice(gpus).slug},{rng.choice(gpus).slug}",
                  f"price_per_gpu_hour_max={rng.choice(prices)}"]
        if rng.random() < 0.3:
            params.append(f"mig={rng.choice(['yes', 'no', 'unknown'])}")
        if rng.random() < 0.3:
            params.append(f"provider={rng.choice(providers).slug}")
        parsed = saved_filter_parse("&".join(params))
        if not parsed.is_valid:
            raise RuntimeError(f"generated filter refused: {parsed.errors}")
        queries.add(parsed.query)
    ordered = sorted(queries)
    add_subscribers(ordered, subscribers, offset=0)
    logger.info("seeded %s offers, %s observations, %s subscribers over %s filters", len(rows), len(history),
                Subscription.objects.count(), len(ordered))
    return ordered


def add_subscribers(queries: list[str], count: int, *, offset: int) -> None:
    from django.utils import timezone

    from digest.models import Subscription

    now = timezone.now()
    Subscription.objects.bulk_create(
        [Subscription(email=f"bench{offset + index}@example.org", filter_query=queries[index % len(queries)],
                      language=("en", "zh-hans")[index % 2], confirmed_at=now) for index in range(count)],
        batch_size=5000,
    )


def measure(label: str, queries: list[str]) -> dict:
    from django.core import mail
    from django.db import connection

    from digest import selectors, services
    from digest.emails import digest_render
    from digest.weeks import digest_week

    counter = QueryCounter()
    with connection.execute_wrapper(counter):
        started = time.perf_counter()
        changes = selectors.week_changes(week=digest_week(SEND_AT))
        for query in queries:
            for language in ("en", "zh-hans"):
                digest_render(selectors.digest_build(query=query, changes=changes), language=language)
        dry_seconds = time.perf_counter() - started
    dry_queries = sum(counter.counts.values())

    counter = QueryCounter()
    mail.outbox = []
    with connection.execute_wrapper(counter):
        started = time.perf_counter()
        result = services.digest_send(at=SEND_AT)
        send_seconds = time.perf_counter() - started
    mail.outbox = []
    figures = {"label": label, "dry_seconds": dry_seconds, "dry_queries": dry_queries, "send_seconds": send_seconds,
               "inserts": counter.counts["delivery insert"], "other": counter.counts["other"], "sent": result.sent,
               "skipped": result.skipped, "claimed": result.claimed, "filters": result.filters}
    print(f"{label}: {result.claimed} subscribers over {result.filters} filters: {result.sent} sent, "
          f"{result.skipped} skipped (no change), {result.failed} failed")
    print(f"  change computation + rendering of every filter in both languages: {dry_seconds:.1f} s, "
          f"{dry_queries} queries")
    print(f"  whole send: {send_seconds:.1f} s ({result.sent / send_seconds:.0f} emails/s), "
          f"{figures['inserts'] + figures['other']} queries = {figures['inserts']} Delivery inserts (one per email "
          f"sent, one per quiet filter) + {figures['other']} others")
    return figures


def run_benchmark(name: str, offers: int, subscribers: int, filters: int) -> int:
    base = ADMIN_URL.rsplit("/", 1)[0]
    os.environ["DATABASE_URL"] = f"{base}/{name}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "comparator.settings.test"
    os.environ["EMAIL_BACKEND"] = "django.core.mail.backends.locmem.EmailBackend"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    from digest.models import Delivery

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    queries = seed(offers, subscribers, filters, random.Random(6))
    print(f"seeded {offers} offers with a week of history, {subscribers} subscribers, {len(queries)} filters "
          f"in {time.perf_counter() - started:.0f} s")
    first = measure(f"{subscribers} subscribers", queries)

    Delivery.objects.all().delete()  # the same week again, with twice the subscribers on the same filters
    add_subscribers(queries, subscribers, offset=subscribers)
    second = measure(f"{2 * subscribers} subscribers", queries)

    print(f"queries other than the Delivery records: {first['other']} with {subscribers} subscribers, "
          f"{second['other']} with {2 * subscribers} (they should depend on the {len(queries)} filters only)\n")
    met = _targets.at_most(f"queries other than Delivery records, {2 * subscribers:,} / {subscribers:,} subscribers",
                           second["other"] / first["other"], 1.0)
    return 0 if met else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--filters", type=int, default=500)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    name = f"bench_digest_{os.getpid()}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        return run_benchmark(name, args.offers, args.subscribers, args.filters)
    finally:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())
