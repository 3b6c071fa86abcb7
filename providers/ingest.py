"""The one ingestion service every scraper's answer goes through: `offers_sync` stores one source's offers.

Idempotent upsert on the natural key (source, instance type, region), history (PriceObservation) only on change,
never deletes, refuses an empty or partial response (the shrink guard, MAX_DEACTIVATED_SHARE) and one whose rows
are all refused, holds a price the price guard doubts, and compares a run with the source's last good full set. Each
row is checked and normalised first (providers.offer_normalise) and then compared with the stored offer. Runs call
it through providers.runs.source_scrape.
"""

from __future__ import annotations

import itertools
import math
import operator
import pickle
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

from django.db import connection

from scrapers.base import ScrapedOffer, ScrapeError, ScrapeResult
from scrapers.normalize import GpuResolver, default_gpu_resolver, names_no_region

from . import pricing
from .bulk import BATCH_SIZE
from .kubernetes_profiles import offer_kubernetes_refresh, offer_profiles_for
from .models import (
    Availability,
    DataSource,
    GpuModel,
    HeldPrice,
    KubernetesProfile,
    Offer,
    PriceObservation,
    ScrapeRun,
)
from .offer_normalise import OFFER_FIELDS, OfferNormaliser, default_as_of, offer_problem
from .selectors import exchange_rates_latest

# The shrink guard. A successful response that would deactivate more than this share of a source's active offers (and
# more than one offer) is refused as partial, per kind of source: a catalog is a whole file regenerated from the
# provider's API, in which a tenth of the configurations vanishing at once is a broken copy far more often than news;
# a provider API's list follows what is on sale now, which moves more, but a quarter gone at once is a partial page
# far more often than a sale ending; a curated table is our own file. A real shrink past the guard is accepted by an
# operator with `manage.py scrape <source> --allow-shrink`.
MAX_DEACTIVATED_SHARE = {"catalog": Decimal("0.10"), "api": Decimal("0.25"), "curated": Decimal("0.25")}

HISTORY_FIELDS = ("price_hour", "spot_price_hour", "availability", "available_count", "commit_1y_price_hour_usd",
                  "commit_3y_price_hour_usd")


class ShrinkRefusedError(ScrapeError):
    """The response would deactivate too many offers; it is treated as a broken response."""


# How many refusal reasons a run keeps for reviewers (the counts are always complete).
MAX_REJECTIONS_KEPT = 50
# Position of the fields offers_sync needs by index in a row of OFFER_FIELDS values.
_ACTIVE = OFFER_FIELDS.index("is_active")
_AS_OF = OFFER_FIELDS.index("price_as_of")
_AVAILABILITY = OFFER_FIELDS.index("availability")
_GPU, _GPU_COUNT = OFFER_FIELDS.index("gpu_id"), OFFER_FIELDS.index("gpu_count")
_PER_GPU = OFFER_FIELDS.index("price_per_gpu_hour_usd")
_SPOT_PER_GPU = OFFER_FIELDS.index("spot_price_per_gpu_hour_usd")
_PRICE, _SPOT = OFFER_FIELDS.index("price_hour"), OFFER_FIELDS.index("spot_price_hour")
_CURRENCY = OFFER_FIELDS.index("currency")
_HISTORY = tuple(OFFER_FIELDS.index(name) for name in HISTORY_FIELDS)


@dataclass
class SyncCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deactivated: int = 0
    skipped: int = 0
    held: int = 0
    corrected: int = 0
    unknown_gpus: Counter = field(default_factory=Counter)
    capabilities_changed: int = 0
    capabilities_rejected: int = 0
    facts_stored: int = 0
    rejections: list[str] = field(default_factory=list)

    def note(self, reason: str) -> None:
        if len(self.rejections) < MAX_REJECTIONS_KEPT:
            self.rejections.append(reason)


def offers_sync(
    *, source: DataSource, run: ScrapeRun, result: ScrapeResult, now: datetime, resolver: GpuResolver | None = None,
    allow_shrink: bool = False, recorded_on: date | None = None,
) -> SyncCounts:
    """Upsert one source's offers on (source, instance_type, region) in bulk; call inside a transaction.

    - new offers are created, changed ones updated, history appended only when price or availability changed;
    - every offer the response lists gets last_seen = now; last_run is the run that last created or changed it;
    - offers the response no longer lists are deactivated (never deleted), unless that would be more than the share
      MAX_DEACTIVATED_SHARE allows the source's kind (and more than one offer), which raises ShrinkRefusedError and
      leaves everything as it was (`allow_shrink` lifts that guard); so does a response with nothing in it at all,
      and one whose rows are all refused (the run fails: nothing it says can be published);
    - a row that cannot be stored (blank or over-long key, a number past its column, an unknown availability) or
      that repeats an earlier row's key with other values is refused alone, counted in `skipped` with its reason (the
      same row again, as a catalog that lists a size once per zone writes it, is the same offer); the stored offer it
      describes, if any, is left exactly as it was (neither updated nor deactivated), as are those of the rows the
      client itself refused (`result.rejected_keys`, and every region of `result.rejected_instance_types`);
    - rows whose GPU name the catalog does not know are stored with no GPU model and counted in unknown_gpus;
    - a row whose price the price guard holds (providers/pricing.py: more than MAX_MOVE times the stored price of the
      same machine, or under its GPU's floor) is kept out like a refused row and stored as a HeldPrice, counted in
      `held`; a later run stating the same price again publishes it;
    - the shrink guard also compares the answer with the source's last good full set (`full_set_size`), so runs
      that each lose a little cannot erode a source.

    `result.offers` is read once, in order, and may be any iterable: a client may hand a generator that parses as it
    goes (then what it refuses may be appended to `result.rejected`, `rejected_keys` and the like while it is read),
    and no offer is kept once it is compared. Memory stays flat in the number of offers (bench/ingest.py: under
    1 GiB at 1,000,000 from a generator): the source's stored offers are read first, in chunks, into a key -> index
    map over arrays (id, a hash of the stored values, a hash of the history fields, the stored stock); each incoming
    row is normalised and its hash compared there and then; the rows to write (changed or new) are spilled to a
    temporary file as they are found. Nothing is written to the database until the whole response has been read
    and the shrink guard has passed; then the spilled rows are written in batches and one COPY. The number of
    queries grows with the number of batches only. An unchanged re-run writes nothing but last_seen.
    """
    normaliser = OfferNormaliser(
        source=source,
        resolver=resolver or default_gpu_resolver(),
        gpu_ids=dict(GpuModel.objects.values_list("slug", "id")),
        rates=exchange_rates_latest(),
        as_of=default_as_of(source, recorded_on),
        today=now.date(),
    )
    counts = SyncCounts(skipped=len(result.rejected), corrected=len(result.corrections))
    noted_rejected, noted_corrections = len(result.rejected), len(result.corrections)
    for reason in (*result.rejected, *result.corrections):
        counts.note(reason)
    stored = _StoredOffers.read(source)
    others = _same_sku_elsewhere(source=source)
    families = dict(GpuModel.objects.values_list("id", "family"))
    # The price guard (providers/pricing.py): holds this source's earlier runs left, key -> the prices held; a row
    # that states them again is published, one the guard holds now is kept in `held_now` (written after the guards).
    holds = {(instance_type, region): (currency, price, spot) for instance_type, region, currency, price, spot
             in HeldPrice.objects.filter(source=source).values_list(
                 "instance_type", "region", "currency", "price_hour", "spot_price_hour")}
    held_now: dict[tuple[str, str], tuple] = {}
    # A live answer that states no date is as fresh as this run; a replay or a file at a commit is undated.
    read_live = now if not run.offline and not source.revision else None
    api_regions = {} if source.kind == "api" else _api_regions(source=source)
    listed_regions: dict[str, set[str]] = {}

    # One pass over the response. `seen` marks stored offers the response names (LISTED, or NAMED when the row was
    # refused because another source lists the SKU); `seen_new` holds the keys of rows with no stored offer. Both keep
    # a hash of the key's first row (`first_of` for stored offers), so a repeat of it can be told from another row.
    seen = bytearray(len(stored))
    first_of = array("q", bytes(8 * len(stored)))
    seen_new: dict[tuple[str, str], int] = {}
    refused: set[tuple[str, str]] = set()  # keys of refused rows: the source still lists these offers
    displaced: list[int] = []
    # The machines (instance type, GPU model, GPU count) of the rows to write: each gets its Kubernetes profile in
    # the same write (a few thousand at most, however many offers).
    machines: set[tuple] = set()
    rows = listed = 0
    history_of = operator.itemgetter(*_HISTORY)
    with _Spill() as changed, _Spill() as created:
        for scraped in result.offers:
            rows += 1
            key = stored.key(scraped.instance_type, scraped.region)
            index = stored.index.get(key)
            first = seen_new.get(key) if index is None else first_of[index] if seen[index] else None
            if _passed_over(scraped, key, first, refused=refused, counts=counts):
                continue
            listed += 1
            if index is None:
                seen_new[key] = hash(scraped)
            else:
                first_of[index] = hash(scraped)
            values = normaliser.values(scraped, counts)
            if _price_held(key, values, family=families.get(values[_GPU]), stored=stored, index=index,
                           holds=holds, held_now=held_now, counts=counts):
                refused.add(key)
                if index is not None:
                    seen[index] = NAMED
                continue
            values = _one_live_price(key, values, source=source, others=others, api_regions=api_regions,
                                     read_live=read_live, displaced=displaced, counts=counts)
            if source.kind == "api":
                listed_regions.setdefault(key[0], set()).add(key[1])
            machine = (key[0], values[_GPU], values[_GPU_COUNT])
            if index is None:
                created.add((source.pk, *key, *values, now, now, run.pk))
                machines.add(machine)
                continue
            seen[index] = LISTED
            kept = None
            if values[_AVAILABILITY] == Availability.UNKNOWN:
                # A price answer that says nothing about stock (Linode's and Vultr's plan lists) keeps what the last
                # check found: the availability poll states it, with its age, and a price run must not wipe it back
                # to unknown.
                kept = stored.stock(index)
                values = _with_availability(values, kept)
            if hash(values) == stored.hashes[index]:
                counts.unchanged += 1
            else:
                changed.add((stored.ids[index], hash(history_of(values)) != stored.history[index], values, machine))
                machines.add(machine)
        seen_new.clear()
        # A generator may have noted what it refused while it was read.
        for reason in (*result.rejected[noted_rejected:], *result.corrections[noted_corrections:]):
            counts.note(reason)
        counts.skipped += len(result.rejected) - noted_rejected
        counts.corrected += len(result.corrections) - noted_corrections
        unseen_active, unread = _shrink_guard(source=source, result=result, stored=stored, seen=seen,
                                              refused=refused, rows=rows, listed=listed, allow_shrink=allow_shrink)
        del stored, seen
        _holds_save(source=source, run=run, held=held_now, now=now)

        # Writes, in batches, from the spilled rows.
        profiles = offer_profiles_for(source, machines, now=now)
        for batch in changed.batches():
            updated = [Offer(pk=pk, last_seen=now, last_run=run, kubernetes_profile_id=profiles[machine],
                             **dict(zip(OFFER_FIELDS, values, strict=True)))
                       for pk, _, values, machine in batch]
            _offers_update(updated)
            PriceObservation.objects.bulk_create(
                [_observation(offer, run, now) for offer, (_, history, _, _) in zip(updated, batch, strict=True)
                 if history])
        if created.count:
            _offers_create((*row, profiles[row[1], row[3 + _GPU], row[3 + _GPU_COUNT]])
                           for batch in created.batches() for row in batch)
    if listed_regions:
        # The provider's API lists each size's regions: another source's copy of a size it lists, in a region it
        # does not list, is not live (DigitalOcean's `regions`; kept with its history as another source).
        displaced += _elsewhere_than_listed(source=source, listed=listed_regions, counts=counts)
    if displaced:
        Offer.objects.filter(id__in=displaced).update(is_active=False)
    for start in range(0, len(unseen_active), BATCH_SIZE):
        Offer.objects.filter(id__in=unseen_active[start:start + BATCH_SIZE]).update(is_active=False)
    # Unchanged offers were seen too; created and updated ones already carry `now`. Only last_seen, which is in no
    # index, so PostgreSQL can rewrite the rows in place (see migration 0003); last_run keeps the run that last
    # created or changed the offer. A refused row's offer keeps its old last_seen too: its stored price was not
    # confirmed by this answer.
    Offer.objects.filter(source=source, is_active=True, last_seen__lt=now).exclude(id__in=unread).update(last_seen=now)
    if created.count:
        _history_of_created(source=source, run=run, now=now)
    counts.created, counts.updated, counts.deactivated = created.count, changed.count, len(unseen_active)
    if changed.count:
        # A changed offer may have left its machine's profile (a new GPU count): drop profiles no offer uses.
        KubernetesProfile.objects.filter(provider_id=source.provider_id, offers__isnull=True).delete()
    if Offer.objects.filter(source=source, kubernetes_profile__isnull=True).exists():
        # Offers stored before their machine had a profile (not by offers_sync): give them theirs.
        offer_kubernetes_refresh(source_ids=[source.pk], now=now)
    return counts


def _price_held(key, values, *, family, stored, index, holds, held_now, counts: SyncCounts) -> bool:
    """Whether the price guard (providers/pricing.py) holds this row: then the stored offer keeps its published price
    and is neither updated nor deactivated, and the hold is noted in `held_now`. A row that states a held price again
    is published."""
    hold = pricing.held_because(family=family, price=values[_PER_GPU], spot=values[_SPOT_PER_GPU],
                                stored_price=stored.price(index), stored_spot=stored.spot_price(index))
    if hold is None:
        return False
    stated = (values[_CURRENCY], values[_PRICE], values[_SPOT])
    if holds.get(key) == stated:
        counts.note(f"offer {key[0]!r} in {key[1]!r}: published: a second run states the price the guard held "
                    f"({hold})")
        return False
    held_now[key] = (*stated, hold)
    counts.held += 1
    counts.note(f"offer {key[0]!r} in {key[1]!r}: price held: {hold}")
    return True


def _one_live_price(key, values, *, source, others, api_regions, read_live, displaced: list[int],
                    counts: SyncCounts) -> tuple:
    """One live price per machine (providers/pricing.py): another source's live offer of the same SKU and region, or
    the provider's own API listing this size elsewhere only, decides whether this row is live. The row's values,
    inactive when it is not; another source's offer this row displaces is added to `displaced`."""
    other = others.get(key)
    if other is not None:
        other_id, held = other
        incoming = pricing.Candidate(source.slug, source.kind, values[_AS_OF] or read_live)
        winner, reason = pricing.preferred(held, incoming)
        counts.note(f"offer {key[0]!r} in {key[1]!r}: {reason}")
        if winner is incoming:
            displaced.append(other_id)
            return values
        return _inactive(values)
    regions = api_regions.get(key[0])
    if regions is not None and key[1] not in regions and not any(map(names_no_region, regions)):
        counts.note(f"offer {key[0]!r} in {key[1]!r}: not live: the provider's own API lists this size only in "
                    f"{', '.join(sorted(regions)) or 'no region'}")
        return _inactive(values)
    return values


def _shrink_guard(*, source, result, stored, seen, refused: set, rows: int, listed: int,
                  allow_shrink: bool) -> tuple[list[int], list[int]]:
    """(stored active offers the response no longer names, to deactivate; stored offers of refused rows, left as
    they are), once the response is read; or ShrinkRefusedError for a response that is empty, all refused, or would
    deactivate more than the source's kind may lose at once, against the stored offers or the last good full set."""
    if not rows and not result.capabilities and not result.kubernetes_facts:
        raise ShrinkRefusedError("the response is empty; refusing it as a broken response")
    if rows and not listed:
        # Every row was refused: nothing the response says can be published, so the run failed (issue #37).
        raise ShrinkRefusedError(f"all {rows} rows of the response were refused; refusing it as a broken response")
    refused = refused | result.rejected_keys
    rejected_types = result.rejected_instance_types
    unseen_active: list[int] = []
    unread: list[int] = []  # offers of refused rows: neither updated, deactivated nor seen
    for key, index in stored.index.items():
        if seen[index] == LISTED:
            continue
        if key in refused or key[0] in rejected_types:
            unread.append(stored.ids[index])
        elif stored.active[index]:
            unseen_active.append(stored.ids[index])
    share = MAX_DEACTIVATED_SHARE.get(source.kind, min(MAX_DEACTIVATED_SHARE.values()))
    if not allow_shrink and len(unseen_active) > max(1, share * stored.active_count):
        raise ShrinkRefusedError(
            f"response lists {listed} offers but would deactivate {len(unseen_active)} of "
            f"{stored.active_count} active ones (a {source.kind} source may lose at most {share:.0%} at once); "
            "refusing it as a broken or partial response"
        )
    # Against the last good full set too, not only the stored one: runs that each lose a little under the share
    # (95%, then 91%, then 89% of a catalog) must not erode a source unseen.
    baseline = source.full_set_size
    if not allow_shrink and baseline and baseline - listed > max(1, share * baseline):
        raise ShrinkRefusedError(
            f"response lists {listed} offers, under {1 - share:.0%} of the {baseline} that the source's fullest "
            f"run since a shrink was last accepted listed; refusing it as a broken or partial response"
        )
    if allow_shrink or not baseline or listed > baseline:
        DataSource.objects.filter(pk=source.pk).update(full_set_size=listed)
        source.full_set_size = listed
    return unseen_active, unread


# How a stored offer was named by the response being read (offers_sync's `seen`).
LISTED, NAMED = 1, 2
_NO_COUNT = -(2**63)  # available_count None in _StoredOffers' array
_NO_PRICE = math.nan  # a price None in _StoredOffers' arrays


class _StoredOffers:
    """A source's stored offers as offers_sync compares them, in about 100 bytes an offer besides the keys: key ->
    index into arrays of ids, hashes of the stored OFFER_FIELDS values and of their history fields, the stored stock
    (availability, available_count) and whether the offer is active. Read in key-less chunks, never as models.

    Hashes compare as the values do (Python's hash agrees with ==: Decimal("3.99000") and Decimal("3.99") are one
    price); two different tuples of values hashing alike, the odds of which are about one in 2**61 per changed row,
    would leave that change unstored until the offer changes again.
    """

    def __init__(self) -> None:
        self.index: dict[tuple[str, str], int] = {}
        self.ids = array("q")
        self.hashes = array("q")
        self.history = array("q")
        self.counts = array("q")
        self.prices = array("d")  # USD per GPU-hour, on-demand and spot, NaN for none (the price guard's baseline)
        self.spots = array("d")
        self.states = bytearray()
        self.active = bytearray()
        self.active_count = 0
        self._state_names: list[str] = []
        self._state_codes: dict[str, int] = {}
        # One string object per distinct instance type or region name: a catalog repeats a few thousand names over
        # a million rows, and each row (stored or incoming) would otherwise keep its own copies alive in the keys.
        self._names: dict[str, str] = {}

    def key(self, instance_type: str, region: str) -> tuple[str, str]:
        """The (instance type, region) key, made of the run's one copy of each name."""
        names = self._names
        return names.setdefault(instance_type, instance_type), names.setdefault(region, region)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def read(cls, source: DataSource) -> _StoredOffers:
        stored = cls()
        history_of = operator.itemgetter(*_HISTORY)
        rows = (Offer.objects.filter(source=source).order_by()
                .values_list("id", "instance_type", "region", *OFFER_FIELDS).iterator(chunk_size=BATCH_SIZE))
        for pk, instance_type, region, *values in rows:
            values = tuple(values)
            stored.index[stored.key(instance_type, region)] = len(stored.ids)
            stored.ids.append(pk)
            stored.hashes.append(hash(values))
            stored.history.append(hash(history_of(values)))
            state, count = values[_AVAILABILITY], values[_AVAILABILITY + 1]
            code = stored._state_codes.get(state)
            if code is None:
                code = stored._state_codes[state] = len(stored._state_names)
                stored._state_names.append(state)
            stored.states.append(code)
            stored.counts.append(_NO_COUNT if count is None else count)
            price, spot = values[_PER_GPU], values[_SPOT_PER_GPU]
            stored.prices.append(_NO_PRICE if price is None else float(price))
            stored.spots.append(_NO_PRICE if spot is None else float(spot))
            stored.active.append(bool(values[_ACTIVE]))
            stored.active_count += bool(values[_ACTIVE])
        return stored

    def price(self, index: int | None) -> float | None:
        """The stored on-demand USD per GPU-hour of the offer at `index` (None for a new row or no price)."""
        return None if index is None or math.isnan(self.prices[index]) else self.prices[index]

    def spot_price(self, index: int | None) -> float | None:
        return None if index is None or math.isnan(self.spots[index]) else self.spots[index]

    def stock(self, index: int) -> tuple[str, int | None]:
        count = self.counts[index]
        return self._state_names[self.states[index]], None if count == _NO_COUNT else count


class _Spill:
    """Rows offers_sync will write, kept on disk (a temporary file, pickled a batch at a time) until the whole
    response has been read and the shrink guard has passed, so memory does not grow with them."""

    def __init__(self) -> None:
        self.count = 0
        self._file = None
        self._batch: list[tuple] = []

    def __enter__(self) -> _Spill:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._file is not None:
            self._file.close()

    def add(self, row: tuple) -> None:
        self._batch.append(row)
        self.count += 1
        if len(self._batch) == BATCH_SIZE:
            self._flush()

    def _flush(self) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile()
        pickle.dump(self._batch, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._batch = []

    def batches(self) -> Iterator[list[tuple]]:
        """The rows added, in order, a batch at a time (read once)."""
        if self._file is not None:
            self._file.seek(0)
            while True:
                try:
                    yield pickle.load(self._file)
                except EOFError:
                    break
        if self._batch:
            yield self._batch


def _holds_save(*, source: DataSource, run: ScrapeRun, held: dict[tuple[str, str], tuple], now: datetime) -> None:
    """Store this run's price holds for `source`: a hold whose price this run states again unchanged keeps its first
    day; one whose row was published, stated otherwise or not listed ends; a new one starts now."""
    kept, kept_keys = [], set()
    for pk, instance_type, region, currency, price, spot in HeldPrice.objects.filter(source=source).values_list(
            "id", "instance_type", "region", "currency", "price_hour", "spot_price_hour"):
        if held.get((instance_type, region), ())[:3] == (currency, price, spot):
            kept.append(pk)
            kept_keys.add((instance_type, region))
    HeldPrice.objects.filter(source=source).exclude(id__in=kept).delete()
    HeldPrice.objects.filter(id__in=kept).update(run=run)
    HeldPrice.objects.bulk_create([
        HeldPrice(source=source, instance_type=key[0], region=key[1], currency=currency, price_hour=price,
                  spot_price_hour=spot, reason=reason, first_held_at=now, run=run)
        for key, (currency, price, spot, reason) in held.items() if key not in kept_keys], batch_size=BATCH_SIZE)


def _with_availability(values: tuple, kept: tuple) -> tuple:
    """`values` with the stored (availability, available_count) in place of the response's."""
    return (*values[:_AVAILABILITY], *kept, *values[_AVAILABILITY + 2:])


def _same_sku_elsewhere(*, source: DataSource) -> dict[tuple[str, str], tuple[int, pricing.Candidate]]:
    """The provider's offers active under its other sources, by key: (id, its candidacy for providers.pricing).

    One provider's SKU in one region is one machine with one live price, whichever of its sources lists it
    (DigitalOcean's API and SkyPilot's copy of it; curated tables beside a catalog). offers_sync asks
    pricing.preferred which of the two is live; the other is stored inactive (or deactivated) with its history,
    shown as another source on the offer page, the reason kept on the run. Most providers have one source: one query
    that finds nothing."""
    others = Offer.objects.filter(provider_id=source.provider_id, is_active=True).exclude(source=source)
    found = {}
    for pk, instance_type, region, slug, kind, as_of, seen, revision, success in others.values_list(
            "id", "instance_type", "region", "source__slug", "source__kind", "price_as_of", "last_seen",
            "source__revision", "source__last_success_at"):
        read_live = seen if success is not None and not revision else None
        found[instance_type, region] = (pk, pricing.Candidate(slug, kind, as_of or read_live))
    return found


def _passed_over(scraped: ScrapedOffer, key: tuple[str, str], first: int | None, *, refused: set,
                 counts: SyncCounts) -> bool:
    """Whether a row is not compared: one that cannot be stored (refused, with its reason), or a repeat of an earlier
    row's key (`first`, the hash of that row): the same row again (a catalog listing a size once per zone) is the same
    offer and passes silently; another row is refused with the reason, the first kept, never merged with it."""
    if first is None:
        problem = offer_problem(scraped)
        if problem:
            refused.add(key)
    elif hash(scraped) == first:
        return True
    else:
        problem = (f"a second row for the same size and region at {scraped.price_hour or '-'} / "
                   f"{scraped.spot_price_hour or '-'} differs from the first, which is kept")
    if problem:
        counts.skipped += 1
        counts.note(f"offer {scraped.instance_type!r} in {scraped.region!r}: {problem}")
    return bool(problem)


def _api_regions(*, source: DataSource) -> dict[str, set[str]]:
    """Instance type -> the regions the provider's own API lists it in (its active API offers), for the provider
    of a source that is not an API."""
    regions: dict[str, set[str]] = {}
    for instance_type, region in Offer.objects.filter(
            provider_id=source.provider_id, is_active=True, source__kind="api").values_list("instance_type", "region"):
        regions.setdefault(instance_type, set()).add(region)
    return regions


def _elsewhere_than_listed(*, source: DataSource, listed: dict[str, set[str]], counts: SyncCounts) -> list[int]:
    """Ids of the provider's live offers from non-API sources, of a size the API `source` lists, in a region it does
    not list it in: they stop being live (each noted on the run)."""
    others = Offer.objects.filter(provider_id=source.provider_id, is_active=True, instance_type__in=list(listed)) \
        .exclude(source__kind="api").values_list("id", "instance_type", "region", "source__slug")
    ids = []
    for pk, instance_type, region, slug in others:
        # An API row without a region, or "global" (RunPod, Linode's type list, Oracle's price list), does not say
        # where the size is sold.
        if region not in listed[instance_type] and not any(map(names_no_region, listed[instance_type])):
            ids.append(pk)
            counts.note(f"offer {instance_type!r} in {region!r}: {slug}'s copy is not live: the provider's own API "
                        f"lists this size only in {', '.join(sorted(listed[instance_type]))}")
    return ids


def _inactive(values: tuple) -> tuple:
    """`values` of a row stored as not live (another source's price for the machine is)."""
    return (*values[:_ACTIVE], False, *values[_ACTIVE + 1:])


UPDATED_FIELDS = (*OFFER_FIELDS, "last_seen", "last_run_id", "kubernetes_profile_id")
CREATED_COLUMNS = ("source_id", "instance_type", "region", *OFFER_FIELDS, "first_seen", "last_seen", "last_run_id",
                   "kubernetes_profile_id")
HISTORY_COLUMNS = ("price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd", "currency",
                   "availability", "available_count", "commit_1y_price_hour_usd", "commit_3y_price_hour_usd")


def _offers_create(rows: Iterable[tuple]) -> None:
    """Insert new offers given as tuples in CREATED_COLUMNS order, read from `rows` as they are written.

    On PostgreSQL through one COPY, the fastest way it takes rows (no model instances, no per-value preparation);
    elsewhere bulk_create, a batch at a time. Values were range-checked by _offer_problem, so one bad row cannot
    sink a batch.
    """
    if connection.vendor != "postgresql":
        rows = iter(rows)
        while batch := list(itertools.islice(rows, BATCH_SIZE)):
            Offer.objects.bulk_create([Offer(**dict(zip(CREATED_COLUMNS, row, strict=True))) for row in batch])
        return
    table = connection.ops.quote_name(Offer._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(Offer._meta.get_field(name).column) for name in CREATED_COLUMNS)
    with connection.cursor() as cursor:
        # cursor.cursor is psycopg's own cursor under Django's wrapper.
        with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


def _history_of_created(*, source: DataSource, run: ScrapeRun, now: datetime) -> None:
    """The first history row of every offer this run created, copied inside the database (portable SQL): the
    offers were created with first_seen = now and last_run = run, which no older offer of the source has. Each row
    is dated like _observation dates it: the data's own date when it states an earlier one, else now."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(name) for name in HISTORY_COLUMNS)
    stamp = connection.ops.adapt_datetimefield_value(now)
    as_of = quote("price_as_of")
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(PriceObservation._meta.db_table)} (offer_id, observed_at, run_id, {columns}) "
            f"SELECT id, CASE WHEN {as_of} IS NOT NULL AND {as_of} < %s THEN {as_of} ELSE %s END, %s, {columns} "
            f"FROM {quote(Offer._meta.db_table)} WHERE source_id = %s AND first_seen = %s AND last_run_id = %s",
            # Adapted as the ORM would (SQLite stores datetimes as text in its own format).
            [stamp, stamp, run.pk, source.pk, stamp, run.pk],
        )


def _offers_update(offers: list[Offer]) -> None:
    """Write changed offers back in batches.

    On PostgreSQL one `UPDATE ... FROM unnest(arrays)` per batch: Django's bulk_update builds a CASE WHEN per
    column with a branch per row, which PostgreSQL evaluates row by row (bench/ingest.py: ~10x slower at 5,000
    changed offers). Elsewhere (SQLite, the embedded default) bulk_update does it portably.
    """
    if not offers:
        return
    if connection.vendor != "postgresql":
        Offer.objects.bulk_update(offers, list(UPDATED_FIELDS), batch_size=BATCH_SIZE)
        return
    fields = [Offer._meta.get_field(name) for name in UPDATED_FIELDS]
    table = connection.ops.quote_name(Offer._meta.db_table)
    names = [connection.ops.quote_name(field.column) for field in fields]
    sql = (
        f"UPDATE {table} AS o SET {', '.join(f'{name} = v.{name}' for name in names)} "
        f"FROM unnest(%s::bigint[], {', '.join(f'%s::{field.db_type(connection)}[]' for field in fields)}) "
        f"AS v(id, {', '.join(names)}) WHERE o.id = v.id"
    )
    with connection.cursor() as cursor:
        for start in range(0, len(offers), BATCH_SIZE):
            batch = offers[start:start + BATCH_SIZE]
            columns = [[offer.pk for offer in batch]]
            columns += [[getattr(offer, field.attname) for offer in batch] for field in fields]
            cursor.execute(sql, columns)


def _observation(offer: Offer, run: ScrapeRun, now: datetime) -> PriceObservation:
    """The history row of a changed offer, dated by the data's own date when it states one before `now` (a dated
    file's price held from then: CoreWeave's daily scrapes replayed in order make a real history), else `now`."""
    return PriceObservation(
        offer_id=offer.pk,
        observed_at=offer.price_as_of if offer.price_as_of and offer.price_as_of < now else now,
        price_hour=offer.price_hour,
        spot_price_hour=offer.spot_price_hour,
        price_hour_usd=offer.price_hour_usd,
        spot_price_hour_usd=offer.spot_price_hour_usd,
        commit_1y_price_hour_usd=offer.commit_1y_price_hour_usd,
        commit_3y_price_hour_usd=offer.commit_3y_price_hour_usd,
        currency=offer.currency,
        availability=offer.availability,
        available_count=offer.available_count,
        run=run,
    )
