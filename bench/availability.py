"""Availability benchmark: 30 days of 15-minute stock checks for 100,000 offers, as the availability service stores
them (changes only, one counter row per offer and day), and what reading and writing them costs.

It creates its own throw-away database (Django's test database machinery, `test_` + DATABASE_URL's name), loads the
curated providers and GPU catalog and synthetic offers (one API source per provider), then:

1. simulates every offer's stock over 30 days of checks every 15 minutes (2,880 checks each; a state flips at a
   check with probability --flip, in stock ~60% of the time) and stores what availability_apply would have kept:
   an AvailabilityChange per flip (and the first state) and one AvailabilityDay counter per offer and day, written
   with COPY; then computes every offer's 7- and 30-day in-stock shares with the service's own SQL;
   reports history rows per offer-day;
2. times a filtered API page of 50 offers that carries the 7-day share (a stored column) against the same page
   without the availability columns (the selector's query), and against computing the share per request from the
   counters; and the same filter with `in_stock_7d_min=50` against it without;
3. runs one poll of 10,000 offers' states through availability_sync.availability_apply and counts its SQL statements
   (against a poll of 100 states): a bulk write is a constant number of statements.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python bench/availability.py [--offers 100000]

Figures are printed, targets reported (page with the share within 1.5x of the page without it), not asserted.
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import _targets  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "comparator.settings.test")

logger = logging.getLogger("bench.availability")
report = logger.info

DAYS = 30
CHECKS_PER_DAY = 96  # every 15 minutes
FILTER = "gpu_family=H100&ordering=price_per_gpu_hour"
REPEAT = 21


def populate(count: int, now: datetime) -> None:
    import random

    from providers import facts_sync
    from providers.models import DataSource, GpuModel, Offer, Provider

    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    providers = list(Provider.objects.all())
    gpus = list(GpuModel.objects.all())
    sources = {p.id: DataSource.objects.create(slug=f"bench-{p.slug}", name=f"{p.name} (bench)", kind="api",
                                               provider=p, url=p.website, last_success_at=now) for p in providers}
    rng = random.Random(18)
    batch = []
    for index in range(count):
        provider = providers[index % len(providers)]
        gpu = rng.choice(gpus)
        gpu_count = rng.choice((1, 1, 2, 4, 8))
        per_gpu = Decimal(rng.randint(20, 1200)) / 100
        batch.append(Offer(
            provider=provider, source=sources[provider.id], instance_type=f"bench-{index}", region=f"r{index % 40}",
            country="US", continent="NA", gpu=gpu, gpu_name=gpu.name, gpu_count=gpu_count,
            gpu_memory_gb=gpu.memory_gb, currency="USD", price_hour=per_gpu * gpu_count,
            price_hour_usd=per_gpu * gpu_count, price_per_gpu_hour_usd=per_gpu,
            first_seen=now - timedelta(days=DAYS), last_seen=now))
        if len(batch) == 5000:
            Offer.objects.bulk_create(batch)
            batch = []
    Offer.objects.bulk_create(batch)


def simulate(now: datetime, flip: float) -> tuple[int, int]:
    """Store 30 days of checks per offer as the service would: changes and day counters. Returns (changes, days)."""
    import numpy as np
    from django.db import connection

    from providers.models import AvailabilityChange, AvailabilityDay, Offer

    ids = np.array(list(Offer.objects.order_by("id").values_list("id", flat=True)))
    checks = DAYS * CHECKS_PER_DAY
    first_day = (now - timedelta(days=DAYS - 1)).date()
    start = datetime.combine(first_day, datetime.min.time(), tzinfo=UTC)
    rng = np.random.default_rng(18)
    quote = connection.ops.quote_name
    changes = days = 0
    with connection.cursor() as cursor:
        raw = cursor.cursor
        for offset in range(0, len(ids), 5000):
            chunk = ids[offset:offset + 5000]
            flips = rng.random((len(chunk), checks)) < flip
            flips[:, 0] = True  # the first state is a change (from nothing)
            initial = rng.random(len(chunk)) < 0.6
            # In stock at each check: the initial state, flipped at every later flip.
            parity = (np.cumsum(flips, axis=1) - 1) % 2
            in_stock = np.where(initial[:, None], parity == 0, parity == 1)
            per_day = in_stock.reshape(len(chunk), DAYS, CHECKS_PER_DAY).sum(axis=2)
            buffer = io.StringIO()
            rows, columns = np.nonzero(flips)
            for row, column in zip(rows.tolist(), columns.tolist(), strict=True):
                moment = start + timedelta(minutes=15 * column)
                state = "available" if in_stock[row, column] else "unavailable"
                buffer.write(f"{chunk[row]}\t{moment.isoformat()}\t{state}\t\\N\tf\n")
            changes += len(rows)
            with raw.copy(f"COPY {quote(AvailabilityChange._meta.db_table)} "
                          f"(offer_id, changed_at, availability, available_count, recorded) FROM STDIN") as copy:
                copy.write(buffer.getvalue())
            buffer = io.StringIO()
            for row, offer_id in enumerate(chunk.tolist()):
                for day in range(DAYS):
                    buffer.write(f"{offer_id}\t{first_day + timedelta(days=day)}\t{CHECKS_PER_DAY}\t"
                                 f"{int(per_day[row, day])}\n")
            days += len(chunk) * DAYS
            with raw.copy(f"COPY {quote(AvailabilityDay._meta.db_table)} (offer_id, day, checks, in_stock) "
                          f"FROM STDIN") as copy:
                copy.write(buffer.getvalue())
            # The offer's current state: its last check's.
            last = in_stock[:, -1]
            Offer.objects.filter(id__in=chunk[last].tolist()).update(availability="available")
            Offer.objects.filter(id__in=chunk[~last].tolist()).update(availability="unavailable")
    return changes, days


def shares_refresh(now: datetime) -> float:
    from django.db import transaction

    from providers import availability_sync
    from providers.models import DataSource, Offer

    Offer.objects.update(availability_checked_at=now)
    started = time.perf_counter()
    with transaction.atomic():
        for source in DataSource.objects.all():
            availability_sync._in_stock_shares_refresh(source=source, checked_at=now)
    return time.perf_counter() - started


def median_ms(func) -> float:
    func()
    samples = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        func()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def turns(*funcs) -> list[float]:
    """Median ms of each function over REPEAT rounds, taking turns (one of each per round)."""
    for func in funcs:
        func()
    samples = [[] for _ in funcs]
    for _ in range(REPEAT):
        for index, func in enumerate(funcs):
            started = time.perf_counter()
            func()
            samples[index].append((time.perf_counter() - started) * 1000)
    return [statistics.median(values) for values in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--flip", type=float, default=0.01, help="chance that a check finds the state changed")
    args = parser.parse_args()

    _targets.django_with_plain_figures(logger)
    from django.db import connection, transaction
    from django.db.models import FloatField, Sum
    from django.db.models.functions import Cast
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from providers import availability_sync, offer_reads
    from providers.filters import offer_filterset
    from providers.models import AvailabilityDay, DataSource, Offer
    from scrapers.availability import ScrapedAvailability

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        assert connection.vendor == "postgresql", "the benchmark writes with COPY: PostgreSQL only"
        now = timezone.now()
        started = time.perf_counter()
        populate(args.offers, now)
        report("loaded %s offers in %.1f s", f"{args.offers:,}", time.perf_counter() - started)
        started = time.perf_counter()
        changes, days = simulate(now, args.flip)
        report("simulated %s checks (%s per offer over %s days) in %.1f s", f"{args.offers * DAYS * CHECKS_PER_DAY:,}",
               f"{DAYS * CHECKS_PER_DAY:,}", DAYS, time.perf_counter() - started)
        refresh_s = shares_refresh(now)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        offer_days = args.offers * DAYS

        report("\nHistory kept (changes only, flip chance %.3f per check):", args.flip)
        report(f"  stock changes        {changes:>12,}  ({changes / offer_days:.2f} per offer-day)")
        report(f"  day counter rows     {days:>12,}  ({days / offer_days:.2f} per offer-day)")
        report(f"  history rows         {changes + days:>12,}  ({(changes + days) / offer_days:.2f} per offer-day; "
               f"one row per check would be {CHECKS_PER_DAY} per offer-day)")
        report(f"  7- and 30-day shares of all {args.offers:,} offers recomputed in the database in {refresh_s:.1f} s")

        # --- a filtered page of 50 offers with and without the share ----------------------------------------
        filterset = offer_filterset({"gpu_family": "H100", "ordering": "price_per_gpu_hour"})
        assert filterset.is_valid(), filterset.errors
        ids = list(filterset.bare_qs.values_list("id", flat=True)[:50])
        without = tuple(name for name in offer_reads.OFFER_ROW_FIELDS if "stock" not in name
                        and not name.startswith("availability_"))
        # Both read the same way (a prepared values() query of the same joins, `id IN` the page's ids).
        share_rows = Offer.objects.order_by().values(*offer_reads.OFFER_ROW_FIELDS)
        plain_rows = Offer.objects.order_by().values(*without)
        today = now.date()

        def page_with_share():
            return list(share_rows.filter(id__in=ids))

        def page_without_share():
            return list(plain_rows.filter(id__in=ids))

        def page_with_share_per_request():
            rows = list(plain_rows.filter(id__in=ids))
            shares = dict(AvailabilityDay.objects.filter(offer_id__in=ids, day__gt=today - timedelta(days=7))
                          .values("offer_id").annotate(share=Cast(Sum("in_stock"), FloatField())
                                                       / Cast(Sum("checks"), FloatField()))
                          .values_list("offer_id", "share"))
            return rows, shares

        with_ms, without_ms, live_ms = turns(page_with_share, page_without_share, page_with_share_per_request)
        client = Client(HTTP_HOST="localhost")
        api = f"/api/v1/offers/?{FILTER}"
        api_ms, api_filtered_ms = turns(lambda: client.get(api), lambda: client.get(f"{api}&in_stock_7d_min=50"))
        assert client.get(f"{api}&in_stock_7d_min=50").status_code == 200
        ratio = with_ms / without_ms
        report(f"\nA filtered page of 50 offers ({FILTER}), median of {REPEAT}, in turns:")
        report(f"  rows with the 7-day share (stored column)      {with_ms:>7.2f} ms")
        report(f"  the same rows without availability columns    {without_ms:>7.2f} ms   "
               f"ratio {ratio:.2f}x")
        report(f"  without, plus the share summed per request     {live_ms:>7.2f} ms   "
               f"ratio {live_ms / without_ms:.2f}x (the alternative not taken)")
        report(f"  API page                                      {api_ms:>7.2f} ms")
        report(f"  API page with in_stock_7d_min=50              {api_filtered_ms:>7.2f} ms   ratio "
               f"{api_filtered_ms / api_ms:.2f}x")

        # --- one poll of 10,000 offers is a bulk write ------------------------------------------------------
        source = DataSource.objects.order_by("id").first()
        poll_size = 10_000
        have = Offer.objects.filter(source=source).count()
        if have < poll_size:
            Offer.objects.bulk_create([Offer(
                provider_id=source.provider_id, source=source, instance_type=f"poll-{i}", region="r", gpu_name="H100",
                gpu_count=1, currency="USD", first_seen=now, last_seen=now) for i in range(poll_size - have)])
        keys = list(Offer.objects.filter(source=source).values_list("instance_type", "region")[:poll_size])
        statements = {}
        for size in (100, poll_size):
            states = [ScrapedAvailability(key[0], key[1], ("available", "limited", "unavailable")[i % 3],
                                          3 if i % 3 == 1 else None) for i, key in enumerate(keys[:size])]
            moment = timezone.now()
            with transaction.atomic(), CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                counts = availability_sync.availability_apply(source=source, states=states, now=moment)
                elapsed = time.perf_counter() - started
            writes = [q["sql"].split()[0].upper() for q in captured.captured_queries
                      if q["sql"].split()[0].upper() in {"INSERT", "UPDATE", "DELETE", "COPY"}]
            statements[size] = (len(captured.captured_queries), len(writes), elapsed, counts)
        report(f"\nOne poll through availability_sync.availability_apply ({source.slug}):")
        for size, (total, writes, elapsed, counts) in statements.items():
            report(f"  {size:>6,} states: {total} SQL statements ({writes} writes), {elapsed * 1000:.0f} ms, "
                   f"{counts.changed:,} changes")
        same = statements[100][0] == statements[poll_size][0]
        report(f"  statements independent of the number of offers: {'yes' if same else 'NO'}")
        report("")
        _targets.at_most("page with the 7-day share / the same page without availability columns", ratio, 1.5)
        _targets.line("SQL statements of one poll independent of its size",
                      f"{statements[100][0]} at 100 states, {statements[poll_size][0]} at {poll_size:,}",
                      "the same number", same)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
