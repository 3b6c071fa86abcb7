"""Reads for the digest: what changed in a week, and what one saved filter's subscribers get to see of it.

The work is split so its cost follows the number of distinct saved filters, never the number of subscribers:

- `week_changes` reads the week's price and availability history, stock changes (back in stock, sold out), new
  and vanished offers and capability changes once per sending run, in a fixed handful of queries, and keeps only
  what changed (net over the week);
- `digest_build` applies one saved filter through OfferFilterSet to that result: a few queries per filter, shared
  by every subscriber of the filter.

An offer is in a filter's digest when it matches the filter as it stands now (an offer that vanished is matched as
it was last listed). Price changes compare the listed price at the start of the week with the last one of the week,
in the offer's own currency, so an exchange-rate move alone is never reported as a price change.
"""

from __future__ import annotations

import bisect
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, F, OuterRef, Subquery

from nodesoftware.changes import NodeSoftwareChange, changes_between
from providers.capabilities import QUESTIONS
from providers.models import (
    AvailabilityChange,
    CapabilityChange,
    Offer,
    PriceObservation,
    Provider,
    RunStatus,
    ScrapeRun,
)
from scrapers.availability import IN_STOCK

from .models import Subscription, SubscriptionStatus
from .savedfilters import saved_filter_offers
from .weeks import DigestWeek

logger = logging.getLogger(__name__)

# An offer no longer listed carries the time of the last run that listed it (`last_seen`), not the time it
# vanished: it vanished at its source's next successful run. Offers last seen longer than this before the week
# are not considered (a source that has failed for longer is a data problem the sources page shows, not news).
GONE_LOOKBACK = timedelta(days=14)


@dataclass(frozen=True)
class PriceMove:
    kind: str  # "on_demand" or "spot"
    old: Decimal
    new: Decimal
    currency: str

    @property
    def change(self) -> Decimal:
        return (self.new - self.old) / self.old


@dataclass
class WeekChanges:
    """Everything that changed in one week, for all offers, keyed by offer id."""

    week: DigestWeek
    prices: dict[int, list[PriceMove]] = field(default_factory=dict)
    availability: dict[int, tuple[str, str]] = field(default_factory=dict)
    new: set[int] = field(default_factory=set)
    gone: set[int] = field(default_factory=set)
    capabilities: list[CapabilityChange] = field(default_factory=list)
    # From the stock checks (AvailabilityChange), net over the week: offer id -> when its final state began.
    back_in_stock: dict[int, datetime] = field(default_factory=dict)
    sold_out: dict[int, datetime] = field(default_factory=dict)
    # From the node-software data files (no query): driver changes and Kubernetes versions leaving support.
    node_software: list[NodeSoftwareChange] = field(default_factory=list)

    def touched(self) -> set[int]:
        return (self.prices.keys() | self.availability.keys() | self.new | self.gone | self.back_in_stock.keys()
                | self.sold_out.keys())


def week_changes(*, week: DigestWeek, threshold: Decimal | None = None) -> WeekChanges:
    """What changed between `week.start` (inclusive) and `week.end` (exclusive), in six queries (two more when
    stock changed in the week: `stock_changes`).

    - a price change is reported when the last price of the week differs from the price listed at its start by at
      least `threshold` (a fraction, settings.DIGEST_PRICE_CHANGE_THRESHOLD by default), on-demand and spot apart;
      a price missing at either end, a zero start price or a change of currency is not compared;
    - an availability change is reported when the availability at the end differs from the one at the start;
    - new offers were first seen in the week; gone offers stopped being listed in it;
    - capability changes recorded in the week are collapsed per provider and question (first old, last new value)
      and dropped when they end where they started.
    """
    threshold = settings.DIGEST_PRICE_CHANGE_THRESHOLD if threshold is None else threshold
    start, end = week.start, week.end
    changes = WeekChanges(week=week)

    # The last observation of the week per offer: observations come ordered, the last one written wins.
    final: dict[int, tuple] = {}
    window = (
        PriceObservation.objects.filter(observed_at__gte=start, observed_at__lt=end)
        .order_by("offer_id", "observed_at", "id")
        .values_list("offer_id", "price_hour", "spot_price_hour", "currency", "availability")
    )
    for offer_id, *state in window.iterator(chunk_size=5000):
        final[offer_id] = tuple(state)

    # The state at the start of the week: each offer's latest observation before it (index offer, observed_at).
    before = PriceObservation.objects.filter(offer_id=OuterRef("pk"), observed_at__lt=start).order_by(
        "-observed_at", "-id"
    )
    baseline = (
        Offer.objects.filter(id__in=PriceObservation.objects.filter(observed_at__gte=start, observed_at__lt=end)
                             .values("offer_id"))
        .annotate(
            b_price=Subquery(before.values("price_hour")[:1]),
            b_spot=Subquery(before.values("spot_price_hour")[:1]),
            b_currency=Subquery(before.values("currency")[:1]),
            b_availability=Subquery(before.values("availability")[:1]),
        )
        .filter(b_currency__isnull=False)
        .values_list("id", "b_price", "b_spot", "b_currency", "b_availability")
    )
    for offer_id, old_price, old_spot, old_currency, old_availability in baseline.iterator(chunk_size=5000):
        new_price, new_spot, new_currency, new_availability = final[offer_id]
        moves = []
        if old_currency == new_currency:
            for kind, old, new in (("on_demand", old_price, new_price), ("spot", old_spot, new_spot)):
                if old is None or new is None or old <= 0 or old == new:
                    continue
                move = PriceMove(kind=kind, old=old, new=new, currency=new_currency)
                if abs(move.change) >= threshold:
                    moves.append(move)
        if moves:
            changes.prices[offer_id] = moves
        if old_availability != new_availability:
            changes.availability[offer_id] = (old_availability, new_availability)

    # Gone: not listed now, and its source's first successful run after it was last listed falls in the week.
    runs: dict[int, list[datetime]] = defaultdict(list)
    for source_id, started_at in (
        ScrapeRun.objects.filter(status=RunStatus.SUCCEEDED, started_at__gte=start - GONE_LOOKBACK, started_at__lt=end)
        .order_by("started_at")
        .values_list("source_id", "started_at")
    ):
        runs[source_id].append(started_at)
    for offer_id, source_id, last_seen in Offer.objects.filter(
        is_active=False, last_seen__gte=start - GONE_LOOKBACK, last_seen__lt=end
    ).values_list("id", "source_id", "last_seen"):
        starts = runs.get(source_id, [])
        position = bisect.bisect_right(starts, last_seen)
        if position < len(starts) and start <= starts[position] < end:
            changes.gone.add(offer_id)

    changes.new = set(
        Offer.objects.filter(first_seen__gte=start, first_seen__lt=end).values_list("id", flat=True)
    ) - changes.gone
    for offer_id in changes.new | changes.gone:
        # A new offer has no start price to compare; a vanished one is reported as vanished.
        changes.prices.pop(offer_id, None)
        changes.availability.pop(offer_id, None)

    stock_changes(changes)

    collapsed: dict[tuple[int, str], CapabilityChange] = {}
    for change in CapabilityChange.objects.filter(changed_at__gte=start, changed_at__lt=end).select_related(
        "provider"
    ).order_by("changed_at", "id"):
        first = collapsed.get((change.provider_id, change.key))
        if first is not None:
            change.old_value, change.old_label = first.old_value, first.old_label
        collapsed[(change.provider_id, change.key)] = change
    changes.capabilities = sorted(
        (change for change in collapsed.values() if change.old_value != change.new_value),
        key=lambda change: (change.provider.name.lower(), change.key),
    )
    changes.node_software = changes_between(week.start.date(), week.end.date())
    return changes


def stock_changes(changes: WeekChanges) -> None:
    """Fill `back_in_stock` and `sold_out` from the week's stock changes, in two queries: an offer is back in stock
    when it was sold out at the start of the week (its latest change before it) and in stock (available or limited)
    at the end; sold out when it was in stock at the start and sold out at the end. An offer whose first known state
    falls in the week has no start to compare and is in neither; replayed recordings are never news."""
    start, end = changes.week.start, changes.week.end
    final: dict[int, tuple[str, datetime]] = {}
    for offer_id, state, changed_at in (
        AvailabilityChange.objects.filter(changed_at__gte=start, changed_at__lt=end, recorded=False)
        .order_by("offer_id", "changed_at", "id").values_list("offer_id", "availability", "changed_at")
        .iterator(chunk_size=5000)
    ):
        final[offer_id] = (state, changed_at)
    if not final:
        return
    before = AvailabilityChange.objects.filter(offer_id=OuterRef("pk"), changed_at__lt=start).order_by(
        "-changed_at", "-id")
    baseline = (Offer.objects.filter(id__in=AvailabilityChange.objects.filter(
        changed_at__gte=start, changed_at__lt=end, recorded=False).values("offer_id"))
        .annotate(old=Subquery(before.values("availability")[:1])).filter(old__isnull=False)
        .values_list("id", "old"))
    for offer_id, old in baseline.iterator(chunk_size=5000):
        new, since = final[offer_id]
        if old == "unavailable" and new in IN_STOCK:
            changes.back_in_stock[offer_id] = since
        elif old in IN_STOCK and new == "unavailable":
            changes.sold_out[offer_id] = since


# --- one filter's digest ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    rows: list
    total: int

    @property
    def more(self) -> int:
        return self.total - len(self.rows)


@dataclass(frozen=True)
class OfferPriceRow:
    offer: Offer
    move: PriceMove


@dataclass(frozen=True)
class OfferAvailabilityRow:
    offer: Offer
    old: str
    new: str


@dataclass(frozen=True)
class OfferStockRow:
    offer: Offer
    since: datetime


@dataclass(frozen=True)
class CapabilityRow:
    change: CapabilityChange
    question: str  # lazy: a digest is built once per filter and rendered in each subscriber's language


@dataclass(frozen=True)
class NodeSoftwareRow:
    change: NodeSoftwareChange
    provider_name: str


@dataclass
class Digest:
    query: str
    week: DigestWeek
    price_drops: Section
    price_rises: Section
    new_offers: Section
    gone_offers: Section
    availability: Section
    capabilities: Section
    cheapest: list[Offer]
    back_in_stock: Section = field(default_factory=lambda: Section([], 0))
    sold_out: Section = field(default_factory=lambda: Section([], 0))
    node_software: Section = field(default_factory=lambda: Section([], 0))

    @property
    def change_count(self) -> int:
        return sum(section.total for section in (self.price_drops, self.price_rises, self.new_offers,
                                                  self.gone_offers, self.availability, self.capabilities,
                                                  self.back_in_stock, self.sold_out, self.node_software))

    @property
    def has_changes(self) -> bool:
        return self.change_count > 0


def _section(rows: list, limit: int) -> Section:
    return Section(rows=rows[:limit], total=len(rows))


def digest_build(*, query: str, changes: WeekChanges) -> Digest:
    """One saved filter's digest of `changes`: a handful of queries whatever the number of its subscribers.

    Raises ValueError when the saved filter no longer validates (see savedfilters.saved_filter_offers).
    """
    limit = settings.DIGEST_MAX_ROWS_PER_SECTION
    everything = saved_filter_offers(query, include_inactive=True)
    # What the filter shows on the site: active offers only, unless the filter itself asks for the others.
    include_inactive = "include_inactive=true" in query.split("&")
    matching = everything if include_inactive else everything.filter(is_active=True)
    # One plain scan of the filter's offers (ids only) intersected with the week's changes in Python: cheaper than
    # asking the database to join each filter with the week's history.
    rows = list(everything.order_by().values_list("id", "provider_id", "is_active"))
    candidates = {offer_id for offer_id, _provider, _active in rows} & changes.touched()

    drops, rises = [], []
    for offer_id in candidates & changes.prices.keys():
        for move in changes.prices[offer_id]:
            (drops if move.new < move.old else rises).append((offer_id, move))
    drops.sort(key=lambda item: (item[1].change, item[0]))
    rises.sort(key=lambda item: (-item[1].change, item[0]))
    availability = sorted(candidates & changes.availability.keys())
    new = sorted(candidates & changes.new)
    gone = sorted(candidates & changes.gone)

    shown = {offer_id for offer_id, _ in drops[:limit] + rises[:limit]} | set(availability[:limit])
    shown |= set(new[:limit]) | set(gone[:limit])
    # Stock news is about offers one can rent: active ones (the filter's inactive offers are in "no longer listed").
    active = {offer_id for offer_id, _provider, is_active in rows if is_active}
    back = sorted(candidates & active & changes.back_in_stock.keys())
    sold = sorted(candidates & active & changes.sold_out.keys())
    shown |= set(back[:limit]) | set(sold[:limit])
    offers = Offer.objects.select_related("provider", "gpu", "kubernetes_profile").in_bulk(shown) if shown else {}

    capability_rows = []
    if changes.capabilities:
        providers = {provider for _offer, provider, active in rows if active or include_inactive}
        capability_rows = [
            CapabilityRow(change=change, question=QUESTIONS[change.key].label if change.key in QUESTIONS
                          else change.key)
            for change in changes.capabilities if change.provider_id in providers
        ]

    node_rows = []
    if changes.node_software:  # one query for the providers' slugs, only in a week with node-software news
        provider_ids = {provider for _offer, provider, active in rows if active or include_inactive}
        slugs = dict(Provider.objects.filter(id__in=provider_ids).values_list("slug", "name"))
        node_rows = [NodeSoftwareRow(change, slugs[change.provider]) for change in changes.node_software
                     if change.provider in slugs]

    cheapest = list(
        matching.filter(price_per_gpu_hour_usd__isnull=False)
        .order_by(F("price_per_gpu_hour_usd").asc(), "id")[: settings.DIGEST_CHEAPEST_COUNT]
    )
    new_rows = sorted((offers[i] for i in new[:limit]),
                      key=lambda offer: (offer.price_per_gpu_hour_usd is None, offer.price_per_gpu_hour_usd or 0))
    return Digest(
        query=query,
        week=changes.week,
        price_drops=Section([OfferPriceRow(offers[i], m) for i, m in drops[:limit]], len(drops)),
        price_rises=Section([OfferPriceRow(offers[i], m) for i, m in rises[:limit]], len(rises)),
        new_offers=Section(new_rows, len(new)),
        gone_offers=Section([offers[i] for i in gone[:limit]], len(gone)),
        availability=Section(
            [OfferAvailabilityRow(offers[i], *changes.availability[i]) for i in availability[:limit]],
            len(availability),
        ),
        capabilities=_section(capability_rows, limit),
        cheapest=cheapest,
        back_in_stock=Section([OfferStockRow(offers[i], changes.back_in_stock[i]) for i in back[:limit]], len(back)),
        sold_out=Section([OfferStockRow(offers[i], changes.sold_out[i]) for i in sold[:limit]], len(sold)),
        node_software=_section(node_rows, limit),
    )


def subscription_filters_due() -> list[tuple[str, int]]:
    """Distinct saved filters of active subscribers with their subscriber count (for dry runs and the admin)."""
    return list(
        Subscription.objects.filter(status=SubscriptionStatus.ACTIVE)
        .values("filter_query")
        .annotate(subscribers=Count("id"))
        .order_by("filter_query")
        .values_list("filter_query", "subscribers")
    )


def subscription_from_manage_token(token: str) -> Subscription | None:
    """The subscription a manage link names; tokens.TokenInvalid for an altered link, None if it was deleted."""
    from .tokens import manage_token_read

    return Subscription.objects.filter(key=manage_token_read(token)).first()


def subscription_from_unsubscribe_token(token: str) -> Subscription | None:
    from .tokens import unsubscribe_token_read

    return Subscription.objects.filter(key=unsubscribe_token_read(token)).first()
