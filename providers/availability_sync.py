"""Live stock: one check of a source's stock stored on its offers (`availability_apply`), with the changes, the
per-day check counters and the 7- and 30-day in-stock shares. The poll that asks a source is a run
(providers.runs.availability_poll)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.utils import timezone

from scrapers.availability import IN_STOCK, STATES, ScrapedAvailability

from .bulk import BATCH_SIZE, bulk_set
from .models import Availability, AvailabilityChange, AvailabilityDay, DataSource, Offer

AVAILABILITY_WINDOWS = {"in_stock_share_7d": 7, "in_stock_share_30d": 30}


@dataclass
class AvailabilityCounts:
    checked: int = 0
    changed: int = 0
    unmatched: int = 0


def availability_apply(*, source: DataSource, states: list[ScrapedAvailability], now: datetime,
                       recorded: bool = False) -> AvailabilityCounts:
    """Store one check of a source's stock; call inside a transaction. A constant number of bulk statements,
    whatever the number of offers (bench/availability.py counts them for 10,000):

    - states are matched to the source's active offers on (instance_type, region); others are counted as unmatched;
      a state that is not available / limited / unavailable is ignored (the last known state stays);
    - an AvailabilityChange is appended only where the state or the count differs from the offer's latest change
      (the first known state is a change too), and the offer's `availability_since` moves to `now`;
    - every checked offer gets its state, `availability_checked_at = now` and one more check (in stock or not) in
      its AvailabilityDay counter for `now`'s UTC day (an upsert adding one);
    - the checked offers' 7- and 30-day in-stock shares are then recomputed from the counters, in the database;
    - a `recorded` replay (the snapshot) sets states and changes only: it adds no check, so replaying it twice
      changes nothing.
    """
    counts = AvailabilityCounts()
    ids = dict(((key[0], key[1]), key[2]) for key in Offer.objects.filter(source=source, is_active=True)
               .values_list("instance_type", "region", "id"))
    stated: dict[int, tuple[str, int | None]] = {}
    for state in states:
        pk = ids.get((state.instance_type, state.region))
        if pk is None:
            counts.unmatched += 1
        elif state.availability in STATES:
            # Sold out is sold out: a source's "0 left" and another's silence are the same state, not a change.
            count = state.available_count if state.availability != Availability.UNAVAILABLE else None
            stated[pk] = (state.availability, count)
    if not stated:
        return counts
    latest = _latest_changes(source)
    changed = [pk for pk, value in stated.items() if latest.get(pk) != value]
    _changes_insert(changed, [stated[pk] for pk in changed], now=now, recorded=recorded)
    checked_ids = sorted(stated)
    bulk_set(
        Offer, checked_ids,
        availability=[stated[pk][0] for pk in checked_ids],
        available_count=[stated[pk][1] for pk in checked_ids],
        availability_checked_at=[now] * len(checked_ids),
        availability_recorded=[recorded] * len(checked_ids),
    )
    if changed:
        bulk_set(Offer, changed, availability_since=[now] * len(changed))
    if not recorded:
        # A replayed recording is not a check: replaying it again must change nothing, and it says nothing about
        # the last 7 or 30 days.
        _availability_days_add(checked_ids, [stated[pk][0] in IN_STOCK for pk in checked_ids], now.date())
        _in_stock_shares_refresh(source=source, checked_at=now)
    counts.checked, counts.changed = len(stated), len(changed)
    return counts


def _changes_insert(ids: list[int], states: list[tuple[str, int | None]], *, now: datetime, recorded: bool) -> None:
    """Append one AvailabilityChange per offer: on PostgreSQL a single INSERT from arrays, elsewhere bulk_create."""
    if not ids:
        return
    if connection.vendor != "postgresql":
        AvailabilityChange.objects.bulk_create(
            [AvailabilityChange(offer_id=pk, changed_at=now, availability=state, available_count=count,
                                recorded=recorded) for pk, (state, count) in zip(ids, states, strict=True)],
            batch_size=BATCH_SIZE)
        return
    table = connection.ops.quote_name(AvailabilityChange._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (offer_id, changed_at, availability, available_count, recorded) "
            f"SELECT v.id, %s, v.state, v.count, %s FROM unnest(%s::bigint[], %s::varchar[], %s::integer[]) "
            f"AS v(id, state, count)",
            [now, recorded, ids, [state for state, _ in states], [count for _, count in states]],
        )


def _latest_changes(source: DataSource) -> dict[int, tuple[str, int | None]]:
    """Offer id -> (state, count) of its latest AvailabilityChange, for the source's active offers: one query
    (DISTINCT ON over the (offer, changed_at) index on PostgreSQL, a correlated subquery elsewhere)."""
    from django.db.models import OuterRef, Subquery

    if connection.vendor == "postgresql":
        rows = (AvailabilityChange.objects.filter(offer__source=source, offer__is_active=True)
                .order_by("offer_id", "-changed_at", "-id").distinct("offer_id")
                .values_list("offer_id", "availability", "available_count"))
        return {pk: (state, count) for pk, state, count in rows}
    latest = AvailabilityChange.objects.filter(offer=OuterRef("pk")).order_by("-changed_at", "-id")
    rows = (Offer.objects.filter(source=source, is_active=True)
            .annotate(state=Subquery(latest.values("availability")[:1]),
                      count=Subquery(latest.values("available_count")[:1]))
            .filter(state__isnull=False).values_list("id", "state", "count"))
    return {pk: (state, count) for pk, state, count in rows}


def _availability_days_add(ids: list[int], in_stock: list[bool], day) -> None:
    """One more check for each offer on `day` (one more in stock where it was): a single upsert that adds."""
    table = connection.ops.quote_name(AvailabilityDay._meta.db_table)
    conflict = (f"ON CONFLICT (offer_id, day) DO UPDATE SET checks = {table}.checks + 1, "
                f"in_stock = {table}.in_stock + excluded.in_stock")
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"INSERT INTO {table} (offer_id, day, checks, in_stock) "
                f"SELECT v.id, %s::date, 1, v.in_stock FROM unnest(%s::bigint[], %s::integer[]) AS v(id, in_stock) "
                f"{conflict}",
                [day, ids, [int(flag) for flag in in_stock]],
            )
            return
        stamp = connection.ops.adapt_datefield_value(day)
        for start in range(0, len(ids), 300):  # SQLite's limit on variables per statement
            batch = list(zip(ids[start:start + 300], in_stock[start:start + 300], strict=True))
            cursor.execute(
                f"INSERT INTO {table} (offer_id, day, checks, in_stock) VALUES "
                f"{', '.join(['(%s, %s, 1, %s)'] * len(batch))} {conflict}",
                [value for pk, flag in batch for value in (pk, stamp, int(flag))],
            )


def _in_stock_shares_refresh(*, source: DataSource, checked_at: datetime) -> None:
    """The 7- and 30-day in-stock shares of the offers just checked, summed from their day counters in the
    database (one UPDATE with a correlated aggregate per window)."""
    from datetime import timedelta

    from django.db.models import FloatField, OuterRef, Subquery, Sum
    from django.db.models.functions import Cast

    # The windows end today, not on the check's date: a replayed recording (dated years back) falls outside them.
    today = timezone.now().date()
    shares = {}
    for name, days in AVAILABILITY_WINDOWS.items():
        window = (AvailabilityDay.objects.filter(offer=OuterRef("pk"), day__gt=today - timedelta(days=days),
                                                 day__lte=today)
                  .values("offer")
                  .annotate(share=Cast(Sum("in_stock"), FloatField()) / Cast(Sum("checks"), FloatField()))
                  .values("share"))
        shares[name] = Subquery(window)
    Offer.objects.filter(source=source, availability_checked_at=checked_at).update(**shares)
