"""Writes. Every change to providers, capabilities, the GPU catalog and offers goes through these functions.

`source_scrape` is the one ingestion path: the Celery task, `manage.py scrape` and the bundled snapshot all call it,
and it hands whatever the client returned to `offers_sync` (idempotent upsert on the natural key, history only on
change, never deletes, refuses a partial response: see MAX_DEACTIVATED_SHARE). Every run of a source, whichever path
starts it, holds that source's lock (`source_lock`) for its whole length.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import logging
import operator
import pickle
import re
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path

import httpx
from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from scrapers import registry
from scrapers.availability import IN_STOCK, STATES, ScrapedAvailability
from scrapers.base import (
    NotConfiguredError,
    ScrapedCapability,
    ScrapedOffer,
    ScrapeError,
    ScrapeResult,
    SourceInfo,
    TransientScrapeError,
)
from scrapers.links import links_probe
from scrapers.normalize import (
    GpuResolver,
    default_gpu_resolver,
    form_factor_in,
    gpu_catalog,
    per_gpu,
    quantize_money,
    region_geography,
    sku_facts,
    to_usd,
)

from . import pricing
from .bulk import BATCH_SIZE, bulk_set  # noqa: F401
from .capabilities import QUESTIONS
from .curated import ProviderRecord, load_providers
from .kubernetes_profiles import (  # noqa: F401
    _kubernetes_profiles_store,
    _offer_profiles_set,
    _profile_key,
    offer_kubernetes_refresh,
    offer_profiles_for,
)
from .models import (
    Availability,
    AvailabilityChange,
    AvailabilityDay,
    AvailabilityPoll,
    Capability,
    CapabilityChange,
    CapabilityOrigin,
    Confidence,
    DataSource,
    GpuModel,
    KubernetesFact,
    KubernetesProfile,
    LinkCheck,
    Offer,
    PriceObservation,
    Provider,
    RunStatus,
    ScrapeRun,
)
from .selectors import exchange_rates_latest

logger = logging.getLogger(__name__)


# The shrink guard. A successful response that would deactivate more than this share of a source's active offers (and
# more than one offer) is refused as partial, per kind of source: a catalog is a whole file regenerated from the
# provider's API, in which a tenth of the configurations vanishing at once is a broken copy far more often than news;
# a provider API's list follows what is on sale now, which moves more, but a quarter gone at once is a partial page
# far more often than a sale ending; a curated table is our own file. A real shrink past the guard is accepted by an
# operator with `manage.py scrape <source> --allow-shrink`.
MAX_DEACTIVATED_SHARE = {"catalog": Decimal("0.10"), "api": Decimal("0.25"), "curated": Decimal("0.25")}


OFFER_FIELDS = (
    "provider_id", "country", "continent", "gpu_id", "gpu_name", "gpu_count", "gpu_memory_gb", "vcpus", "ram_gb",
    "currency", "price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd", "price_per_gpu_hour_usd",
    "spot_price_per_gpu_hour_usd", "availability", "available_count", "is_active", "price_as_of", "price_dated_by",
    "price_source_url",
    "gpu_fraction", "form_factor", "efa_interfaces", "spot_savings_pct", "spot_interruption", "spot_as_of",
    "gpu_memory_usable_gb",
)


HISTORY_FIELDS = ("price_hour", "spot_price_hour", "availability", "available_count")


class ShrinkRefusedError(ScrapeError):
    """The response would deactivate too many offers; it is treated as a broken response."""


def gpu_catalog_sync() -> int:
    """Upsert the GPU catalog from scrapers/data/gpus.toml; returns the number of entries."""
    specs = gpu_catalog()
    for spec in specs:
        GpuModel.objects.update_or_create(
            slug=spec.slug,
            defaults={
                "name": spec.name,
                "vendor": spec.vendor,
                "family": spec.family,
                "architecture": spec.architecture,
                "memory_gb": spec.memory_gb,
                "memory_type": spec.memory_type,
                "form_factor": spec.form_factor,
                "mig_profiles": list(spec.mig_profiles),
                "mig_source_url": spec.mig_source_url,
                "source_url": spec.source_url,
                "verified_on": spec.verified_on,
            },
        )
    offer_kubernetes_refresh()  # MIG profiles and vendors feed every offer's answers
    return len(specs)


@transaction.atomic
def providers_sync(*, records: list[ProviderRecord] | None = None, now: datetime | None = None) -> int:
    """Upsert providers and their curated capabilities, recording every changed answer.

    A value that a provider API reported (origin provider_api) is fresher than the curated file and is kept; a key
    that disappears from a file becomes unknown rather than silently vanishing.
    """
    now = now or timezone.now()
    records = load_providers() if records is None else records
    for record in records:
        provider, _ = Provider.objects.update_or_create(
            slug=record.slug,
            defaults={
                "name": record.name,
                "name_zh": record.name_zh,
                "website": record.website,
                "kind": record.kind,
                "headquarters": record.headquarters,
            },
        )
        existing = {cap.key: cap for cap in provider.capabilities.all()}
        for key, cell in record.capabilities.items():
            current = existing.pop(key, None)
            if current is not None and current.origin == CapabilityOrigin.PROVIDER_API:
                continue
            # A dated dataset's cell (CNCF AI conformance) stands where the file says nothing known; a curated
            # answer read from the provider's own page replaces it.
            if current is not None and current.origin == CapabilityOrigin.DATASET and cell.value == "unknown":
                continue
            values = {
                "value": cell.value,
                "label": cell.label,
                "detail": cell.detail,
                "label_zh": cell.label_zh,
                "detail_zh": cell.detail_zh,
                "amount": cell.amount,
                "currency": cell.currency,
                "source_url": cell.source_url,
                "verified_on": cell.verified_on,
                "confidence": cell.confidence,
                "origin": CapabilityOrigin.CURATED,
                "fetched_at": None,
            }
            if current is None:
                Capability.objects.create(provider=provider, key=key, **values)
                _record_change(provider, key, None, cell.value, cell.label, cell.source_url, now)
                continue
            if any(getattr(current, name) != value for name, value in values.items()):
                if (current.value, current.label) != (cell.value, cell.label):
                    _record_change(provider, key, current, cell.value, cell.label, cell.source_url, now)
                for name, value in values.items():
                    setattr(current, name, value)
                current.save()
        for key, stale in existing.items():
            if stale.origin == CapabilityOrigin.CURATED and stale.value != "unknown":
                _record_change(provider, key, stale, "unknown", "", "", now)
                stale.delete()
    offer_kubernetes_refresh(now=now)  # a provider cell feeds every answer of its offers
    return len(records)


def _record_change(provider, key, current, value, label, source_url, now, origin=CapabilityOrigin.CURATED) -> None:
    CapabilityChange.objects.create(
        provider=provider,
        key=key,
        old_value=current.value if current else "",
        old_label=current.label if current else "",
        new_value=value,
        new_label=label,
        source_url=source_url,
        origin=origin,
        changed_at=now,
    )


def source_register(info: SourceInfo) -> DataSource:
    dating = pricing.dating_of(info.slug)
    source, _ = DataSource.objects.update_or_create(
        slug=info.slug,
        defaults={
            "name": info.name,
            "kind": info.kind,
            "provider": Provider.objects.get(slug=info.provider),
            "url": info.url,
            "license": info.license,
            "revision": info.revision,
            "as_of": info.as_of or None,
            # The evidence its undated prices were dated by, when some were (providers/pricing.py).
            "price_evidence": " ".join(record.evidence for record in dating),
            "price_evidence_url": dating[0].evidence_url if dating else "",
        },
    )
    return source


# How many refusal reasons a run keeps for reviewers (the counts are always complete).
MAX_REJECTIONS_KEPT = 50


# Row limits of the Offer columns: a value past them would make PostgreSQL refuse the whole batch, so such a row is
# refused alone instead (max_digits minus decimal_places, as powers of ten).
OFFER_LIMITS = {
    "gpu_count": Decimal(10) ** 3, "gpu_memory_gb": Decimal(10) ** 7, "vcpus": Decimal(10) ** 5,
    "ram_gb": Decimal(10) ** 7, "price_hour": Decimal(10) ** 7, "spot_price_hour": Decimal(10) ** 7,
}


AVAILABILITIES = {choice.value for choice in Availability}


FORM_FACTORS = {"", "sxm", "pcie", "nvl"}


# Position of the fields offers_sync needs by index in a row of OFFER_FIELDS values.
_ACTIVE = OFFER_FIELDS.index("is_active")


_AS_OF = OFFER_FIELDS.index("price_as_of")


_AVAILABILITY = OFFER_FIELDS.index("availability")


_GPU, _GPU_COUNT = OFFER_FIELDS.index("gpu_id"), OFFER_FIELDS.index("gpu_count")


_HISTORY = tuple(OFFER_FIELDS.index(name) for name in HISTORY_FIELDS)


@dataclass
class SyncCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deactivated: int = 0
    skipped: int = 0
    corrected: int = 0
    unknown_gpus: Counter = field(default_factory=Counter)
    capabilities_changed: int = 0
    capabilities_rejected: int = 0
    facts_stored: int = 0
    rejections: list[str] = field(default_factory=list)

    def note(self, reason: str) -> None:
        if len(self.rejections) < MAX_REJECTIONS_KEPT:
            self.rejections.append(reason)


class RunSkippedError(Exception):
    """A run that did not start, and recorded nothing: another run of the source holds its lock, or a replay would
    rewind a source that has stored a live answer. Not a ScrapeError: nothing was read, nothing failed."""


@contextmanager
def source_lock(slug: str) -> Iterator[bool]:
    """Hold the lock of one source for the body, yielding whether we got it (never waits).

    The one lock every run of a source takes, whichever path starts it (Celery task, `manage.py scrape`, the
    snapshot). On PostgreSQL a session-level advisory lock: the database frees it when the holder's connection ends,
    so a killed worker never leaves it held. On SQLite (the embedded default, one machine) an flock on a file beside
    the database, which the kernel frees when the process dies.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [f"comparator:source:{slug}"])
            acquired = bool(cursor.fetchone()[0])
        try:
            yield acquired
        finally:
            if acquired:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [f"comparator:source:{slug}"])
        return
    name = str(connection.settings_dict.get("NAME") or "")
    folder = Path(name).parent if name and ":memory:" not in name and "mode=memory" not in name else None
    database = Path(name).name if folder else "memory"
    path = (folder or Path(tempfile.gettempdir())) / f".{database}.source-{slug}.lock"
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def source_scrape(*, slug: str, offline: bool = False, transport: httpx.BaseTransport | None = None,
                  edition: str | None = None, allow_shrink: bool = False) -> ScrapeRun:
    """Fetch one source and store what it returned, recording a ScrapeRun whatever happens.

    Runs under the source's lock (`source_lock`); when another run holds it, raises RunSkippedError and records
    nothing. An `offline` replay of recorded payloads is refused the same way (RunSkippedError) for a source that
    has stored a live answer: old recordings must never overwrite live prices or make rewound offers look fresh.
    Offers, capability facts, Kubernetes facts, the run's counts and the source's `last_success_at` are written in
    one transaction (an offline replay stores offers only: it is not a live answer), so a run is either stored whole
    or not at all. A failure of any kind leaves every stored offer as it was and is recorded on the run with a
    readable reason. Transient errors are recorded and then re-raised (so the Celery task can retry with backoff);
    other scrape errors (bad key, broken or partial response) are recorded and the failed run returned; an internal
    error or a time limit is recorded and re-raised. `allow_shrink` lets an operator accept a response past the
    shrink guard (MAX_DEACTIVATED_SHARE).
    """
    with source_lock(slug) as acquired:
        if not acquired:
            raise RunSkippedError(f"{slug}: another run of this source is still in progress")
        return _source_scrape_locked(slug=slug, offline=offline, transport=transport, edition=edition,
                                     allow_shrink=allow_shrink)


def _source_scrape_locked(*, slug: str, offline: bool, transport: httpx.BaseTransport | None, edition: str | None,
                          allow_shrink: bool) -> ScrapeRun:
    client_class = registry.SOURCES[slug]
    source = source_register(client_class.info)
    if offline and source.last_success_at is not None:
        raise RunSkippedError(
            f"{slug}: not replayed, the source stored a live answer at {source.last_success_at:%Y-%m-%d %H:%M} UTC "
            "and a recording would rewind it"
        )
    started = timezone.now()
    # A run still marked running was cut off (worker killed, machine lost): we hold the source's lock, so none is
    # really running now; say what happened to it instead of leaving it "running" forever.
    ScrapeRun.objects.filter(source=source, status=RunStatus.RUNNING).update(
        status=RunStatus.FAILED, finished_at=started,
        error="interrupted: the worker stopped before the run finished; nothing it read was stored",
    )
    run = ScrapeRun.objects.create(source=source, started_at=started, offline=offline)
    try:
        client = registry.make_client(slug, offline=offline, transport=transport, edition=edition)
        result = client.fetch()
        # A live price answer that states stock is a check too (Lambda's capacity, RunPod's stockStatus): noted as
        # offers_sync reads the offers, which it does once (they may come from a generator).
        stated: list[ScrapedAvailability] = []
        if not offline:
            # A copy (it shares the lists a generator may grow): the client's own result is left as it returned it.
            result = replace(result, offers=_stock_noted(result.offers, stated))
        with transaction.atomic():
            # A replayed recording's rows are as old as the recording (registry.RECORDED_ON), not undated.
            counts = offers_sync(source=source, run=run, result=result, now=run.started_at,
                                 allow_shrink=allow_shrink, recorded_on=registry.recorded_on(slug) if offline else None)
            dataset = getattr(client_class, "capability_dataset", False)
            if not offline or dataset:
                # A replayed recording is not news from the provider: its Kubernetes facts would pose as "provider
                # API, fetched now" (some recordings are years old), so only live runs may replace curated cells.
                # A dataset at a commit is the exception: its recorded copy is the dataset, dated by the commit.
                capability_facts_sync(source=source, result=result, fetched_at=run.started_at, counts=counts,
                                      dataset=dataset)
            for name in ("created", "updated", "unchanged", "deactivated", "skipped", "corrected",
                         "capabilities_changed", "capabilities_rejected", "facts_stored", "rejections"):
                setattr(run, name, getattr(counts, name))
            if stated:
                availability_apply(source=source, states=stated, now=run.started_at)
            run.unknown_gpus = dict(counts.unknown_gpus)
            run.status, run.error, run.finished_at = RunStatus.SUCCEEDED, "", timezone.now()
            run.save()
            if not offline:
                # Freshness means a live answer from the source; the bundled snapshot stays flagged as not live.
                DataSource.objects.filter(pk=source.pk).update(last_success_at=run.started_at)
    except NotConfiguredError as exc:
        _fail(run, RunStatus.NOT_CONFIGURED, str(exc))
        logger.info("source %s not configured: %s", slug, exc)
        return run
    except ScrapeError as exc:
        _fail(run, RunStatus.FAILED, f"{type(exc).__name__}: {exc}")
        logger.warning("source %s failed: %s", slug, exc)
        if isinstance(exc, TransientScrapeError):
            raise
        return run
    except SoftTimeLimitExceeded:
        _fail(run, RunStatus.FAILED, "stopped: the run exceeded its time limit; stored offers were kept")
        logger.error("source %s stopped at its time limit", slug)
        raise
    except Exception as exc:
        _fail(run, RunStatus.FAILED, f"internal error: {type(exc).__name__}: {exc}")
        raise
    logger.info(
        "source %s: %s created, %s updated, %s unchanged, %s deactivated, %s rejected, unknown GPUs %s; "
        "capabilities %s changed, %s rejected; %s Kubernetes facts",
        slug, counts.created, counts.updated, counts.unchanged, counts.deactivated, counts.skipped,
        dict(counts.unknown_gpus) or "none", counts.capabilities_changed, counts.capabilities_rejected,
        counts.facts_stored,
    )
    return run


def _stock_noted(offers: Iterable[ScrapedOffer], stated: list[ScrapedAvailability]) -> Iterator[ScrapedOffer]:
    """`offers`, each passed on as it is read, with the stock of those that state one appended to `stated`."""
    for offer in offers:
        if offer.availability in STATES:
            stated.append(ScrapedAvailability(offer.instance_type, offer.region, offer.availability,
                                              offer.available_count))
        yield offer


def _fail(run: ScrapeRun, status: str, error: str) -> None:
    # Only these columns: the counts of a sync that was rolled back must not be saved with the failed run.
    run.status, run.error, run.finished_at = status, error, timezone.now()
    run.save(update_fields=["status", "error", "finished_at"])


def offers_sync(
    *, source: DataSource, run: ScrapeRun, result: ScrapeResult, now: datetime, resolver: GpuResolver | None = None,
    allow_shrink: bool = False, recorded_on: date | None = None,
) -> SyncCounts:
    """Upsert one source's offers on (source, instance_type, region) in bulk; call inside a transaction.

    - new offers are created, changed ones updated, history appended only when price or availability changed;
    - every offer the response lists gets last_seen = now; last_run is the run that last created or changed it;
    - offers the response no longer lists are deactivated (never deleted), unless that would be more than the share
      MAX_DEACTIVATED_SHARE allows the source's kind (and more than one offer), which raises ShrinkRefusedError and
      leaves everything as it was (`allow_shrink` lifts that guard); so does a response with nothing in it at all;
    - a row that cannot be stored (blank or over-long key, a number past its column, an unknown availability) or
      that repeats an earlier row's key is refused alone, counted in `skipped` with its reason; the stored offer it
      describes, if any, is left exactly as it was (neither updated nor deactivated), as are those of the rows the
      client itself refused (`result.rejected_keys`, and every region of `result.rejected_instance_types`);
    - rows whose GPU name the catalog does not know are stored with no GPU model and counted in unknown_gpus.

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
        as_of=_default_as_of(source, recorded_on),
        today=now.date(),
    )
    counts = SyncCounts(skipped=len(result.rejected), corrected=len(result.corrections))
    noted_rejected, noted_corrections = len(result.rejected), len(result.corrections)
    for reason in (*result.rejected, *result.corrections):
        counts.note(reason)
    stored = _StoredOffers.read(source)
    others = _same_sku_elsewhere(source=source)
    # A live answer that states no date is as fresh as this run; a replay or a file at a commit is undated.
    read_live = now if not run.offline and not source.revision else None
    api_regions = {} if source.kind == "api" else _api_regions(source=source)
    listed_regions: dict[str, set[str]] = {}

    # One pass over the response. `seen` marks stored offers the response names (LISTED, or NAMED when the row was
    # refused because another source lists the SKU); `seen_new` holds the keys of rows with no stored offer.
    seen = bytearray(len(stored))
    seen_new: set[tuple[str, str]] = set()
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
            key = (scraped.instance_type, scraped.region)
            index = stored.index.get(key)
            repeated = seen[index] if index is not None else key in seen_new
            problem = _offer_problem(scraped) or ("repeats an earlier row's key" if repeated else None)
            if problem:
                if not repeated:
                    refused.add(key)
                counts.skipped += 1
                counts.note(f"offer {scraped.instance_type!r} in {scraped.region!r}: {problem}")
                continue
            listed += 1
            values = normaliser.values(scraped, counts)
            # One live price per machine (providers/pricing.py): another source's live offer of the same SKU and
            # region, or the provider's own API listing this size elsewhere only, decides whether this row is live.
            other = others.get(key)
            if other is not None:
                other_id, held = other
                incoming = pricing.Candidate(source.slug, source.kind, values[_AS_OF] or read_live)
                winner, reason = pricing.preferred(held, incoming)
                counts.note(f"offer {key[0]!r} in {key[1]!r}: {reason}")
                if winner is incoming:
                    displaced.append(other_id)
                else:
                    values = _inactive(values)
            elif key[0] in api_regions and key[1] not in api_regions[key[0]] and "" not in api_regions[key[0]]:
                counts.note(f"offer {key[0]!r} in {key[1]!r}: not live: the provider's own API lists this size only "
                            f"in {', '.join(sorted(api_regions[key[0]])) or 'no region'}")
                values = _inactive(values)
            if source.kind == "api":
                listed_regions.setdefault(key[0], set()).add(key[1])
            machine = (key[0], values[_GPU], values[_GPU_COUNT])
            if index is None:
                seen_new.add(key)
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
        if not rows and not result.capabilities and not result.kubernetes_facts:
            raise ShrinkRefusedError("the response is empty; refusing it as a broken response")
        refused |= result.rejected_keys
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
        del stored, seen

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


# How a stored offer was named by the response being read (offers_sync's `seen`).
LISTED, NAMED = 1, 2


_NO_COUNT = -(2**63)  # available_count None in _StoredOffers' array


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
        self.states = bytearray()
        self.active = bytearray()
        self.active_count = 0
        self._state_names: list[str] = []
        self._state_codes: dict[str, int] = {}

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
            stored.index[(instance_type, region)] = len(stored.ids)
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
            stored.active.append(bool(values[_ACTIVE]))
            stored.active_count += bool(values[_ACTIVE])
        return stored

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
        # An API row without a region (RunPod, Linode's type list) does not say where the size is sold.
        if region not in listed[instance_type] and "" not in listed[instance_type]:
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
                   "availability", "available_count")


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


def _default_as_of(source: DataSource, recorded_on: date | None = None) -> datetime | None:
    """The date of rows that state none: the day a replayed recording was captured (`recorded_on`), else the
    source's stated as-of date, else None. A live answer with no stated date is as fresh as the run that read it,
    which `last_seen` and the source's `last_success_at` already say (storing the fetch time here would rewrite
    every offer on every run); a replayed recording whose capture day is not known has none, so "seen within the
    last hour" never matches a replay (OfferFilterSet.filter_seen_within)."""
    as_of = recorded_on or source.as_of
    if isinstance(as_of, str):  # as source_register set it, before a reload
        as_of = date.fromisoformat(as_of) if as_of else None
    if as_of:
        return datetime.combine(as_of, time.min, tzinfo=UTC)
    return None


def _offer_problem(scraped: ScrapedOffer) -> str | None:
    """Why a row cannot be stored as it is, or None. Checked before anything is written."""
    # A blank region is allowed: it means the source ties the price to no region (RunPod prices are the same
    # everywhere; Linode's type list does not say where a GPU plan is sold). Pages show it as "not stated".
    for name, limit in (("instance_type", 120), ("region", 120)):
        value = getattr(scraped, name)
        if not isinstance(value, str) or (name == "instance_type" and not value.strip()):
            return f"{name} is blank"
        if len(value) > limit:
            return f"{name} is longer than {limit} characters"
    if not isinstance(scraped.currency, str) or len(scraped.currency) != 3 or not scraped.currency.isalpha():
        return f"currency {scraped.currency!r} is not an ISO 4217 code"
    if scraped.availability not in AVAILABILITIES:
        return f"availability {scraped.availability!r} must be one of {sorted(AVAILABILITIES)}"
    if scraped.available_count is not None and not 0 <= scraped.available_count < 2**31:
        return f"available_count {scraped.available_count!r} is out of range"
    for name, limit in OFFER_LIMITS.items():
        value = getattr(scraped, name)
        if value is not None and not (value.is_finite() and -limit < value < limit):
            return f"{name} {value} is out of range"
    if scraped.gpu_fraction is not None and not (0 < scraped.gpu_fraction < 1):
        return f"gpu_fraction {scraped.gpu_fraction} must be a share of one GPU, between 0 and 1"
    if scraped.form_factor not in FORM_FACTORS:
        return f"form_factor {scraped.form_factor!r} must be one of {sorted(FORM_FACTORS)}"
    if scraped.efa_interfaces is not None and not 0 <= scraped.efa_interfaces < 2**15:
        return f"efa_interfaces {scraped.efa_interfaces!r} is out of range"
    if scraped.spot_savings_pct is not None and not 0 <= scraped.spot_savings_pct <= 100:
        return f"spot_savings_pct {scraped.spot_savings_pct!r} is not a percentage"
    if len(scraped.spot_interruption) > 12 or len(scraped.price_source_url) > 500:
        return "spot_interruption or price_source_url too long"
    return None


class OfferNormaliser:
    """Turns a ScrapedOffer into the tuple of OFFER_FIELDS values stored for it.

    GPU names and regions repeat across thousands of rows, so their lookups are memoised per run.
    """

    def __init__(self, *, source: DataSource, resolver: GpuResolver, gpu_ids: dict[str, int],
                 rates: dict[str, Decimal], as_of: datetime | None = None, today: date | None = None):
        self.source = source
        # The day retirements are judged on (a type retired on or before it is not live).
        self.today = today or timezone.now().date()
        # The data's date for rows that state none (see offers_sync).
        self.as_of = as_of
        self.sku = sku_facts(source.provider.slug)
        self.resolver = resolver
        self.gpu_ids = gpu_ids
        self.rates = rates
        self._gpus: dict[tuple[str, Decimal | None, str], str | None] = {}
        self._places: dict[str, tuple[str, str]] = {}
        # GPU counts the instance-type layer states from the SKU (providers/data/instance_types): they win over a
        # catalog row's count (SkyPilot's Azure rows give the 8-GPU ND96isr_H100_v5 12 GPUs).
        from . import kubernetes as k8s
        from .models import InstanceTypeFact

        # Likewise the form factor the SKU's fact states, where the source and the names state none.
        self._sku_facts = [k8s.Fact(**fact) for fact in InstanceTypeFact.objects.filter(
            provider_id=source.provider_id, key__in=["gpu_count", "form_factor"]).values(
            "pattern", "key", "value", "number", "source_url", "confidence", "origin")]
        self._sku_counts: dict[str, Decimal | None] = {}
        self._sku_forms: dict[str, str] = {}
        # Read once: a model attribute costs a descriptor call per row, and names repeat across regions.
        self._provider_id = source.provider_id
        self._provider_slug = source.provider.slug
        # The memory sizes of each GPU family: an entry whose variant is unspecified stands for one size only when its
        # family has one (the A10G), not for the A100's 40 and 80 GB.
        self._family_memory: dict[str, set] = {}
        for spec in resolver.specs.values():
            self._family_memory.setdefault(spec.family, set()).add(spec.memory_gb)
        self._forms: dict[tuple[str, str], str] = {}

    def sku_gpu_count(self, instance_type: str) -> Decimal | None:
        if not self._sku_facts:
            return None
        if instance_type not in self._sku_counts:
            from . import kubernetes as k8s

            fact = k8s.facts_for(instance_type, self._sku_facts).get("gpu_count")
            self._sku_counts[instance_type] = fact.number if fact is not None else None
        return self._sku_counts[instance_type]

    def sku_form_factor(self, instance_type: str) -> str:
        """The instance fact's form factor when it is one an offer stores (sxm, pcie, nvl), else ""."""
        if not self._sku_facts:
            return ""
        if instance_type not in self._sku_forms:
            from . import kubernetes as k8s

            fact = k8s.facts_for(instance_type, self._sku_facts).get("form_factor")
            self._sku_forms[instance_type] = fact.value if fact is not None and fact.value in FORM_FACTORS else ""
        return self._sku_forms[instance_type]

    def values(self, scraped: ScrapedOffer, counts: SyncCounts) -> tuple:
        scraped = self.checked(scraped, counts)
        # The form factor the source states, else the one the instance or GPU name spells (gpu_8x_h100_sxm5).
        form = scraped.form_factor
        if not form:
            names = (scraped.instance_type, scraped.gpu_name)
            form = self._forms.get(names)
            if form is None:
                form = self._forms[names] = form_factor_in(*names)
            form = form or self.sku_form_factor(scraped.instance_type)
        # A slice of a GPU reports the slice's memory; the model is named by a whole one's.
        memory_of_one = scraped.gpu_memory_gb
        if memory_of_one is not None and scraped.gpu_fraction:
            memory_of_one = memory_of_one / scraped.gpu_fraction
        gpu_key = (scraped.gpu_name, memory_of_one, form)
        if gpu_key not in self._gpus:
            self._gpus[gpu_key] = self.resolver.resolve(scraped.gpu_name, memory_of_one, form)
        slug = self._gpus[gpu_key]
        if slug is None:
            known_name = memory_of_one is not None and self.resolver.resolve(scraped.gpu_name) is not None
            # "RTX4090" is known, an RTX 4090 with 48 GB is not: say which memory made it unknown.
            counts.unknown_gpus[f"{scraped.gpu_name} ({memory_of_one:g} GB)" if known_name
                                else scraped.gpu_name] += 1
        elif not form and self.resolver.specs[slug].form_factor.lower() in FORM_FACTORS:
            form = self.resolver.specs[slug].form_factor.lower()  # the catalog entry is one form factor
        place = self._places.get(scraped.region)
        if place is None:
            geography = region_geography(self.source.provider.slug, scraped.region)
            place = self._places[scraped.region] = (geography.country, geography.continent)
        price_usd = to_usd(scraped.price_hour, scraped.currency, self.rates)
        spot_usd = to_usd(scraped.spot_price_hour, scraped.currency, self.rates)
        exact_count = self.sku_gpu_count(scraped.instance_type) or scraped.gpu_count
        gpu_count = exact_count.quantize(Decimal("0.001"))
        spec = self.resolver.specs[slug] if slug is not None else None
        memory, usable = pricing.memory_as_sold(
            scraped.gpu_memory_gb, spec, scraped.gpu_fraction,
            variant_unknown=spec is not None and spec.form_factor == "unspecified"
            and len(self._family_memory.get(spec.family, ())) > 1)
        if memory is None and slug is not None:
            # The source names the GPU but not its memory (Azure's catalog rows): the catalog entry knows it, unless
            # the entry itself is a "form factor not stated" guess-free placeholder whose variants differ in memory.
            spec = self.resolver.specs[slug]
            if spec.form_factor != "unspecified":
                memory = spec.memory_gb
        # The order is OFFER_FIELDS'.
        return (
            self._provider_id,
            place[0],
            place[1],
            self.gpu_ids.get(slug) if slug else None,
            scraped.gpu_name[:100],
            gpu_count,
            _q(memory, "0.1"),
            _q(scraped.vcpus, "0.01"),
            _q(scraped.ram_gb, "0.01"),
            scraped.currency,
            quantize_money(scraped.price_hour),
            quantize_money(scraped.spot_price_hour),
            price_usd,
            spot_usd,
            per_gpu(price_usd, exact_count),
            per_gpu(spot_usd, exact_count),
            scraped.availability,
            scraped.available_count,
            # A retired type leaves the live list; its row and history are kept (providers/data/retirements.toml).
            not pricing.is_retired(self._provider_slug, scraped.instance_type, self.today),
            *pricing.price_date(slug=self.source.slug, stated=scraped.price_as_of or self.as_of,
                                instance_type=scraped.instance_type, gpu_name=scraped.gpu_name,
                                price_hour=scraped.price_hour, gpu_count=exact_count),
            scraped.price_source_url[:500],
            _q(scraped.gpu_fraction, "0.0001"),
            form,
            scraped.efa_interfaces,
            scraped.spot_savings_pct,
            scraped.spot_interruption,
            scraped.spot_as_of,
            _q(usable, "0.1"),
        )


    def checked(self, scraped: ScrapedOffer, counts: SyncCounts) -> ScrapedOffer:
        """The sanity rules every row passes, each correction counted and its reason kept on the run:
        - the GPU count (and share of one GPU) of a size whose provider documents it is the documented one
          (SkyPilot's Azure catalog counts 12 GPUs in Standard_ND96isr_H100_v5; Microsoft's page says 8);
        - a spot price equal to the on-demand price is not a spot price (the source filled the column)."""
        where = f"offer {scraped.instance_type!r} in {scraped.region!r}"
        facts = self.sku.get(scraped.instance_type)
        if facts is not None and (scraped.gpu_count, scraped.gpu_fraction) != (facts.gpu_count, facts.gpu_fraction):
            counts.corrected += 1
            counts.note(f"{where}: GPU count {scraped.gpu_count:g} corrected to {facts.gpu_count:g}, as the size's "
                        f"own page states ({facts.source_url})")
            scraped = replace(scraped, gpu_count=facts.gpu_count, gpu_fraction=facts.gpu_fraction)
        if scraped.spot_price_hour is not None and scraped.spot_price_hour == scraped.price_hour:
            counts.corrected += 1
            counts.note(f"{where}: spot price equals the on-demand price {scraped.price_hour}: not a spot price, "
                        f"left out")
            scraped = replace(scraped, spot_price_hour=None)
        return scraped


def _q(value: Decimal | None, places: str) -> Decimal | None:
    return None if value is None else value.quantize(Decimal(places))


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
        currency=offer.currency,
        availability=offer.availability,
        available_count=offer.available_count,
        run=run,
    )


def capability_facts_sync(*, source: DataSource, result: ScrapeResult, fetched_at: datetime,
                          counts: SyncCounts, dataset: bool = False) -> None:
    """Store what a provider API said about Kubernetes; call inside the run's transaction.

    - each valid ScrapedCapability replaces the provider's capability cell (curated or older API value) with
      origin provider_api, the API URL as source, confidence "documented" (the provider itself states it),
      verified_on = the fetch date and fetched_at; a CapabilityChange (origin provider_api) is recorded only when
      the value, label or amount changed; providers_sync keeps these cells over the curated file from then on;
    - an invalid one (unknown key, a value the question does not allow, no http(s) source URL, a bad amount) or a
      repeated key is refused, counted in capabilities_rejected with its reason, and stores nothing;
    - kubernetes_facts are upserted per (source, name) with fetched_at; a name that is blank or too long, or a value
      that is not plain JSON, is refused the same way. Facts the API stops reporting are kept with their old date.

    With `dataset=True` (a dated public dataset such as CNCF AI conformance, not the provider's own API) the cells
    are stored with origin "dataset", the fact's own verified_on (the dataset's date) and its Chinese texts, and
    only where nothing better is known: a curated cell with a known answer, read from the provider's page later,
    is kept (counted and noted, so disagreements are visible), as is a provider-API cell.
    """
    valid: dict[str, ScrapedCapability] = {}
    for fact in result.capabilities:
        problem = _capability_problem(fact) or ("repeats an earlier fact's key" if fact.key in valid else None)
        if problem:
            counts.capabilities_rejected += 1
            counts.note(f"capability {fact.key!r}: {problem}")
            logger.warning("source %s: capability %r refused: %s", source.slug, fact.key, problem)
            continue
        valid[fact.key] = fact
    if valid:
        existing = {cap.key: cap for cap in Capability.objects.filter(provider_id=source.provider_id,
                                                                       key__in=list(valid))}
        origin = CapabilityOrigin.DATASET if dataset else CapabilityOrigin.PROVIDER_API
        for key, fact in valid.items():
            current = existing.get(key)
            if dataset and current is not None and (
                    current.origin == CapabilityOrigin.PROVIDER_API
                    or (current.origin == CapabilityOrigin.CURATED and current.value != "unknown")):
                if current.value != fact.value:
                    counts.note(f"capability {key!r}: kept {current.origin} {current.value!r} over the dataset's "
                                f"{fact.value!r}")
                continue
            amount = None if fact.amount is None else fact.amount.quantize(Decimal("0.0001"))
            values = {
                "value": fact.value,
                "label": fact.label,
                "detail": fact.detail,
                # A translation of the curated text no longer says what the provider's API says; a dataset client
                # may bring its own.
                "label_zh": fact.label_zh,
                "detail_zh": fact.detail_zh,
                "amount": amount,
                "currency": fact.currency if amount is not None else "",
                "source_url": fact.source_url,
                "verified_on": fact.verified_on or fetched_at.date(),
                "confidence": Confidence.DOCUMENTED,
                "origin": origin,
                "fetched_at": fetched_at,
            }
            if current is None or (current.value, current.label, current.amount) != (fact.value, fact.label, amount):
                _record_change(source.provider, key, current, fact.value, fact.label, fact.source_url, fetched_at,
                               origin=origin)
                counts.capabilities_changed += 1
            Capability.objects.update_or_create(provider_id=source.provider_id, key=key, defaults=values)

    facts = []
    for name, value in result.kubernetes_facts.items():
        problem = _kubernetes_fact_problem(name, value)
        if problem:
            counts.capabilities_rejected += 1
            counts.note(f"Kubernetes fact {name!r}: {problem}")
            logger.warning("source %s: Kubernetes fact %r refused: %s", source.slug, name, problem)
            continue
        facts.append(KubernetesFact(provider_id=source.provider_id, source=source, name=name, value=value,
                                    source_url=source.url, fetched_at=fetched_at))
    KubernetesFact.objects.bulk_create(
        facts, update_conflicts=True, unique_fields=["source", "name"],
        update_fields=["provider", "value", "source_url", "fetched_at"],
    )
    counts.facts_stored = len(facts)
    offer_kubernetes_refresh(provider_ids=[source.provider_id], now=fetched_at)


def _capability_problem(fact: ScrapedCapability) -> str | None:
    question = QUESTIONS.get(fact.key)
    if question is None:
        return "not a known question"
    # "unknown" is what we store when nobody said anything; an API that says it has no answer is no fact.
    if fact.value not in question.values:
        return f"value {fact.value!r} must be one of {list(question.values)}"
    if not isinstance(fact.source_url, str) or not fact.source_url.startswith(("https://", "http://")):
        return "no http(s) source_url: every published cell needs its source"
    if len(fact.source_url) > 500 or len(fact.label) > 200:
        return "source_url or label too long"
    if fact.amount is not None:
        if not isinstance(fact.amount, Decimal) or not fact.amount.is_finite() or not 0 <= fact.amount < 10**6:
            return f"amount {fact.amount!r} must be a non-negative Decimal under 1,000,000"
        if not re.fullmatch(r"[A-Z]{3}", fact.currency or ""):
            return "an amount needs an ISO 4217 currency"
    if fact.key == "control_plane_fee" and fact.value == "paid" and fact.amount is None:
        return "'paid' needs the amount per cluster-hour"
    return None


def _kubernetes_fact_problem(name: object, value: object) -> str | None:
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        return "the name must be 1 to 100 characters"
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"the value is not plain JSON ({exc})"
    return None


def source_links_check(*, concurrency: int = 8, timeout: float = 15.0,
                       transport: httpx.BaseTransport | None = None, now: datetime | None = None) -> dict[str, int]:
    """Ask every distinct capability source URL whether it still answers (scrapers.links.links_probe: HEAD, then
    GET when HEAD is refused) and record the answer in LinkCheck, with `failing_since` set on the first failure of a
    streak. Returns {"checked": n, "broken": m}.
    """
    now = now or timezone.now()
    urls = sorted(set(Capability.objects.exclude(source_url="").values_list("source_url", flat=True)))
    outcomes = links_probe(urls, concurrency=concurrency, timeout=timeout, transport=transport)
    previous = {check.url: check for check in LinkCheck.objects.filter(url__in=urls)}
    rows = []
    for url, outcome in outcomes.items():
        before = previous.get(url)
        failing_since = None
        if not outcome.ok:
            failing_since = before.failing_since if before and not before.ok and before.failing_since else now
            logger.warning("source link %s is broken: %s", url, outcome.error or outcome.status_code)
        rows.append(LinkCheck(url=url, ok=outcome.ok, status_code=outcome.status_code, error=outcome.error[:300],
                              checked_at=now, failing_since=failing_since))
    LinkCheck.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["url"],
        update_fields=["ok", "status_code", "error", "checked_at", "failing_since"],
    )
    broken = sum(1 for outcome in outcomes.values() if not outcome.ok)
    logger.info("source links: %s checked, %s broken", len(urls), broken)
    return {"checked": len(urls), "broken": broken}


def snapshot_load() -> tuple[list[ScrapeRun], list[str]]:
    """Load everything the embedded default shows, through the same services a live run uses: the GPU catalog,
    the curated providers, the bundled ECB rates (first, so EUR and CNY prices get their USD value), then the
    recorded payload of every source in `registry.snapshot_sources()` replayed offline (every recorded edition,
    oldest first, of a source published in dated editions), then the dated stock recordings of those sources
    (`registry.SNAPSHOT_AVAILABILITY`), shown as recorded on their date.

    Returns the runs and the reasons of the sources not replayed. A source that has stored a live answer is never
    replayed (source_scrape refuses it), so running this on every start of a live site changes no offer: the
    replay only fills a database that no live run has written to (the curated files and the bundled rates are
    upserts that change nothing the second time; the rates are dated, and the bundled day is older than live ones).
    """
    gpu_catalog_sync()
    providers_sync()
    instance_types_sync()
    exchange_rates_sync(offline=True)
    sources = registry.snapshot_sources()
    runs, skipped = [], []
    for slug in sources:
        try:
            editions = registry.editions(slug)
            if not editions:
                runs.append(source_scrape(slug=slug, offline=True))
                continue
            # Dated editions in order, each dated by itself, so the history is the source's own. Editions older
            # than the newest one loaded are not replayed again (that would rewind the offers and append history).
            loaded = Offer.objects.filter(source__slug=slug).aggregate(newest=Max("price_as_of"))["newest"]
            for edition in editions:
                if loaded is None or edition >= loaded.date().isoformat():
                    # Each edition is the whole page as published that day, dated by itself: SKUs it no longer
                    # lists really left the page then, so the shrink guard (for broken answers) does not apply.
                    runs.append(source_scrape(slug=slug, offline=True, edition=edition, allow_shrink=True))
        except RunSkippedError as exc:
            logger.info("snapshot: %s", exc)
            skipped.append(str(exc))
    replayed = {run.source.slug for run in runs}
    for slug in registry.SNAPSHOT_AVAILABILITY:
        if slug in replayed:
            availability_poll(slug=slug, offline=True)
    return runs, skipped


def exchange_rates_sync(*, offline: bool = False, transport: httpx.BaseTransport | None = None) -> int:
    """Store the ECB's euro reference rates (units of each currency per 1 EUR) and return how many were stored.

    - upserts on (currency, date), so running it twice, or on a day the ECB published nothing new, changes nothing;
    - `offline=True` replays the bundled real ECB file (scrapers/recorded/ecb/), as the embedded default does;
    - a broken response (HTTP error, not XML, no dated Cube, a rate that is not a positive number, no USD) raises
      the ScrapeError before anything is written, so the rates already stored stay in use; it is logged and re-raised
      so a task can retry transient failures;
    - offers are not touched here: their USD prices are computed by offers_sync with the latest rates at the next
      scrape of each source.
    """
    # Imported here because this function is appended after the module's import block (owned by the pipeline).
    from scrapers import ecb

    from .models import ExchangeRate

    try:
        days = ecb.make_client(offline=offline, transport=transport).fetch()
    except ScrapeError as exc:
        logger.warning("ECB exchange rates not updated, keeping the stored ones: %s", exc)
        raise
    rows = [
        ExchangeRate(currency=currency, date=day.day, per_eur=rate.quantize(Decimal("0.000001")),
                     source_url=day.source_url)
        for day in days
        for currency, rate in sorted(day.per_eur.items())
    ]
    with transaction.atomic():
        ExchangeRate.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["currency", "date"], update_fields=["per_eur", "source_url"]
        )
    logger.info(
        "ECB exchange rates: %s rates for %s stored%s",
        len(rows), ", ".join(str(day.day) for day in days), " (recorded copy)" if offline else "",
    )
    return len(rows)


AVAILABILITY_WINDOWS = {"in_stock_share_7d": 7, "in_stock_share_30d": 30}


@dataclass
class AvailabilityCounts:
    checked: int = 0
    changed: int = 0
    unmatched: int = 0


def availability_poll(*, slug: str, offline: bool = False,
                      transport: httpx.BaseTransport | None = None) -> AvailabilityPoll:
    """Ask one source for the stock of the offers we store and record what it said, as an AvailabilityPoll.

    - the client is handed the (instance_type, region) keys of the source's active offers (a source with none yet
      fails the poll: its price run comes first) and states what its stock endpoints say (scrapers/availability.py);
    - a successful answer goes to `availability_apply` in one transaction;
    - any failure (timeout, 429, 5xx, refused key, a truncated, renamed or empty answer) is recorded on the poll and
      changes nothing else: every offer keeps its last known state and the time it was checked, so pages show that
      state with its age; transient errors are re-raised for the task to retry, an internal error too;
    - `offline` replays the source's recorded stock answer (the bundled snapshot): its states are dated on the
      recording's date (scrapers.registry.SNAPSHOT_AVAILABILITY) and flagged `recorded`, never as a live check;
    - it runs under the source's lock (`source_lock`), shared with its price run, so the two never write the same
      offers at once: when the lock is held it raises RunSkippedError and records nothing.
    """
    with source_lock(slug) as acquired:
        if not acquired:
            raise RunSkippedError(f"{slug}: a run of this source is still in progress")
        return _availability_poll_locked(slug=slug, offline=offline, transport=transport)


def _availability_poll_locked(*, slug: str, offline: bool, transport: httpx.BaseTransport | None) -> AvailabilityPoll:
    source = source_register(registry.SOURCES[slug].info)
    started = timezone.now()
    AvailabilityPoll.objects.filter(source=source, status=RunStatus.RUNNING).update(
        status=RunStatus.FAILED, finished_at=started,
        error="interrupted: the worker stopped before the poll finished; nothing it read was stored",
    )
    poll = AvailabilityPoll.objects.create(source=source, started_at=started, offline=offline)
    try:
        known = set(Offer.objects.filter(source=source, is_active=True).values_list("instance_type", "region"))
        if not known:
            raise ScrapeError("no stored offers to check yet: the source's price run comes first")
        client = registry.make_availability_client(slug, offline=offline, transport=transport)
        result = client.fetch_availability(known)
        checked_at = started
        if offline:
            recorded_on = registry.SNAPSHOT_AVAILABILITY.get(slug)
            if recorded_on is None:
                raise ScrapeError(f"{slug} has no dated availability recording to replay")
            checked_at = datetime.fromisoformat(recorded_on).replace(tzinfo=UTC)
        with transaction.atomic():
            counts = availability_apply(source=source, states=result.states, now=checked_at, recorded=offline)
            poll.checked, poll.changed, poll.unmatched = counts.checked, counts.changed, counts.unmatched
            poll.status, poll.error, poll.finished_at = RunStatus.SUCCEEDED, "", timezone.now()
            poll.save()
    except NotConfiguredError as exc:
        _fail(poll, RunStatus.NOT_CONFIGURED, str(exc))
        return poll
    except ScrapeError as exc:
        _fail(poll, RunStatus.FAILED, f"{type(exc).__name__}: {exc}")
        logger.warning("availability of %s not updated, keeping the last known states: %s", slug, exc)
        if isinstance(exc, TransientScrapeError):
            raise
        return poll
    except SoftTimeLimitExceeded:
        _fail(poll, RunStatus.FAILED, "stopped: the poll exceeded its time limit; stored states were kept")
        raise
    except Exception as exc:
        _fail(poll, RunStatus.FAILED, f"internal error: {type(exc).__name__}: {exc}")
        raise
    logger.info("availability of %s: %s offers checked, %s changed, %s states for offers we do not store",
                slug, counts.checked, counts.changed, counts.unmatched)
    return poll


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


def instance_facts_sync(*, provider_slug: str, origin: str, facts, now: datetime | None = None) -> int:
    """Replace every instance-type fact of one provider and one origin ("curated", "provider_api", "catalog") with
    `facts` (providers.curated.InstanceFactRecord), then recompute that provider's offer answers.

    This is the entry point for any source of SKU facts: the curated files (instance_types_sync), a provider API's
    node-type list, or a catalog's per-type EFA count (origin "catalog"). Facts of other origins are left alone; an
    unknown provider slug raises Provider.DoesNotExist before anything is written. Returns the number of facts."""
    from .models import InstanceTypeFact

    provider = Provider.objects.get(slug=provider_slug)
    with transaction.atomic():
        InstanceTypeFact.objects.filter(provider=provider, origin=origin).delete()
        InstanceTypeFact.objects.bulk_create([
            InstanceTypeFact(provider=provider, pattern=fact.pattern, key=fact.key, value=fact.value,
                             number=fact.number, interfaces=fact.interfaces, bandwidth_gbps=fact.bandwidth_gbps,
                             gpudirect_rdma=fact.gpudirect_rdma, detail=fact.detail, source_url=fact.source_url,
                             verified_on=fact.verified_on, confidence=fact.confidence, origin=origin)
            for fact in facts
        ])
        offer_kubernetes_refresh(provider_ids=[provider.pk], now=now)
    return len(facts)


def instance_types_sync(*, files=None, now: datetime | None = None) -> int:
    """Load providers/data/instance_types/*.toml (validated by curated.load_instance_types before anything is
    written) and store each file's facts under its origin. A provider without a file keeps its facts of other
    origins; a file whose provider is not loaded is an error."""
    from .curated import load_instance_types

    files = load_instance_types() if files is None else files
    with transaction.atomic():
        return sum(instance_facts_sync(provider_slug=file.provider, origin=file.origin, facts=file.facts, now=now)
                   for file in files)
