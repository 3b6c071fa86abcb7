"""Writes. Every change to providers, capabilities, the GPU catalog and offers goes through these functions.

`source_scrape` is the one ingestion path: the Celery task, `manage.py scrape` and the bundled snapshot all call it,
and it hands whatever the client returned to `offers_sync` (idempotent upsert on the natural key, history only on
change, never deletes, refuses a response that would deactivate more than half of a source's offers).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

import httpx
from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection, transaction
from django.utils import timezone

from scrapers import registry
from scrapers.base import (
    NotConfiguredError,
    ScrapedCapability,
    ScrapedOffer,
    ScrapeError,
    ScrapeResult,
    SourceInfo,
    TransientScrapeError,
)
from scrapers.http import build_client
from scrapers.normalize import (
    GpuResolver,
    default_gpu_resolver,
    gpu_catalog,
    per_gpu,
    quantize_money,
    region_geography,
    to_usd,
)

from .capabilities import QUESTIONS
from .curated import ProviderRecord, load_providers
from .models import (
    Availability,
    Capability,
    CapabilityChange,
    CapabilityOrigin,
    Confidence,
    DataSource,
    GpuModel,
    KubernetesFact,
    LinkCheck,
    Offer,
    PriceObservation,
    Provider,
    RunStatus,
    ScrapeRun,
)
from .selectors import exchange_rates_latest

logger = logging.getLogger(__name__)

# A successful response that would deactivate more than this share of a source's active offers is refused:
# providers' APIs fail by returning empty or partial lists far more often than half a catalog disappears.
MAX_DEACTIVATED_SHARE = Decimal("0.5")

OFFER_FIELDS = (
    "provider_id", "country", "continent", "gpu_id", "gpu_name", "gpu_count", "gpu_memory_gb", "vcpus", "ram_gb",
    "currency", "price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd", "price_per_gpu_hour_usd",
    "spot_price_per_gpu_hour_usd", "availability", "available_count", "is_active",
)
HISTORY_FIELDS = ("price_hour", "spot_price_hour", "availability", "available_count")


class ShrinkRefusedError(ScrapeError):
    """The response would deactivate too many offers; it is treated as a broken response."""


# --- curated data --------------------------------------------------------------------------------------------


def gpu_catalog_sync() -> int:
    """Upsert the GPU catalog from providers/data/gpus.toml; returns the number of entries."""
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
        },
    )
    return source


# --- ingestion -----------------------------------------------------------------------------------------------

# How many refusal reasons a run keeps for reviewers (the counts are always complete).
MAX_REJECTIONS_KEPT = 50
# Row limits of the Offer columns: a value past them would make PostgreSQL refuse the whole batch, so such a row is
# refused alone instead (max_digits minus decimal_places, as powers of ten).
OFFER_LIMITS = {
    "gpu_count": Decimal(10) ** 3, "gpu_memory_gb": Decimal(10) ** 7, "vcpus": Decimal(10) ** 5,
    "ram_gb": Decimal(10) ** 7, "price_hour": Decimal(10) ** 7, "spot_price_hour": Decimal(10) ** 7,
}
AVAILABILITIES = {choice.value for choice in Availability}
# Position of the fields offers_sync needs by index in a row of OFFER_FIELDS values.
_ACTIVE = OFFER_FIELDS.index("is_active")
_HISTORY = tuple(OFFER_FIELDS.index(name) for name in HISTORY_FIELDS)


@dataclass
class SyncCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deactivated: int = 0
    skipped: int = 0
    unknown_gpus: Counter = field(default_factory=Counter)
    capabilities_changed: int = 0
    capabilities_rejected: int = 0
    facts_stored: int = 0
    rejections: list[str] = field(default_factory=list)

    def note(self, reason: str) -> None:
        if len(self.rejections) < MAX_REJECTIONS_KEPT:
            self.rejections.append(reason)


def source_scrape(*, slug: str, offline: bool = False, transport: httpx.BaseTransport | None = None) -> ScrapeRun:
    """Fetch one source and store what it returned, recording a ScrapeRun whatever happens.

    Offers, capability facts, Kubernetes facts, the run's counts and the source's `last_success_at` are written in
    one transaction (an `offline` replay of recorded payloads stores offers only: it is not a live answer), so a
    run is either stored whole or not at all. A failure of any kind leaves every stored offer as it was and is
    recorded on the run with a readable reason. Transient errors are recorded and then re-raised
    (so the Celery task can retry with backoff); other scrape errors (bad key, broken or shrunken response) are
    recorded and the failed run returned; an internal error or a time limit is recorded and re-raised.
    """
    client_class = registry.SOURCES[slug]
    source = source_register(client_class.info)
    started = timezone.now()
    # A run still marked running was cut off (worker killed, machine lost): the per-source lock of the Celery task
    # means none is really running now, so say what happened to it instead of leaving it "running" forever.
    ScrapeRun.objects.filter(source=source, status=RunStatus.RUNNING).update(
        status=RunStatus.FAILED, finished_at=started,
        error="interrupted: the worker stopped before the run finished; nothing it read was stored",
    )
    run = ScrapeRun.objects.create(source=source, started_at=started, offline=offline)
    try:
        client = registry.make_client(slug, offline=offline, transport=transport)
        result = client.fetch()
        with transaction.atomic():
            counts = offers_sync(source=source, run=run, result=result, now=run.started_at)
            dataset = getattr(client_class, "capability_dataset", False)
            if not offline or dataset:
                # A replayed recording is not news from the provider: its Kubernetes facts would pose as "provider
                # API, fetched now" (some recordings are years old), so only live runs may replace curated cells.
                # A dataset at a commit is the exception: its recorded copy is the dataset, dated by the commit.
                capability_facts_sync(source=source, result=result, fetched_at=run.started_at, counts=counts,
                                      dataset=dataset)
            for name in ("created", "updated", "unchanged", "deactivated", "skipped", "capabilities_changed",
                         "capabilities_rejected", "facts_stored", "rejections"):
                setattr(run, name, getattr(counts, name))
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


def _fail(run: ScrapeRun, status: str, error: str) -> None:
    # Only these columns: the counts of a sync that was rolled back must not be saved with the failed run.
    run.status, run.error, run.finished_at = status, error, timezone.now()
    run.save(update_fields=["status", "error", "finished_at"])


def offers_sync(
    *, source: DataSource, run: ScrapeRun, result: ScrapeResult, now: datetime, resolver: GpuResolver | None = None
) -> SyncCounts:
    """Upsert one source's offers on (source, instance_type, region) in bulk; call inside a transaction.

    - new offers are created, changed ones updated, history appended only when price or availability changed;
    - every offer the response lists gets last_seen = now; last_run is the run that last created or changed it;
    - offers the response no longer lists are deactivated (never deleted), unless that would be more than half of
      the source's active offers, which raises ShrinkRefusedError and leaves everything as it was; so does a
      response with nothing in it at all;
    - a row that cannot be stored (blank or over-long key, a number past its column, an unknown availability) or
      that repeats an earlier row's key is refused alone, counted in `skipped` with its reason;
    - rows whose GPU name the catalog does not know are stored with no GPU model and counted in unknown_gpus.

    The number of queries does not grow with the number of offers; existing offers are compared as plain tuples
    (no model instances), so an unchanged re-run writes nothing but last_seen (bench/ingest.py measures it).
    """
    if not result.offers and not result.capabilities and not result.kubernetes_facts:
        raise ShrinkRefusedError("the response is empty; refusing it as a broken response")
    normaliser = OfferNormaliser(
        source=source,
        resolver=resolver or default_gpu_resolver(),
        gpu_ids=dict(GpuModel.objects.values_list("slug", "id")),
        rates=exchange_rates_latest(),
    )
    counts = SyncCounts(skipped=len(result.rejected))
    for reason in result.rejected:
        counts.note(reason)

    incoming: dict[tuple[str, str], tuple] = {}
    for scraped in result.offers:
        key = (scraped.instance_type, scraped.region)
        problem = _offer_problem(scraped) or ("repeats an earlier row's key" if key in incoming else None)
        if problem:
            counts.skipped += 1
            counts.note(f"offer {scraped.instance_type!r} in {scraped.region!r}: {problem}")
            continue
        incoming[key] = normaliser.values(scraped, counts)

    existing: dict[tuple[str, str], tuple[int, tuple]] = {
        (row[1], row[2]): (row[0], row[3:])
        for row in Offer.objects.filter(source=source).values_list("id", "instance_type", "region", *OFFER_FIELDS)
    }
    active_before = sum(1 for _, values in existing.values() if values[_ACTIVE])
    unseen_active = [pk for key, (pk, values) in existing.items() if values[_ACTIVE] and key not in incoming]
    if active_before and Decimal(len(unseen_active)) > MAX_DEACTIVATED_SHARE * active_before:
        raise ShrinkRefusedError(
            f"response lists {len(incoming)} offers but would deactivate {len(unseen_active)} of "
            f"{active_before} active ones; refusing it as a broken or partial response"
        )

    to_create: list[tuple] = []
    to_update: list[Offer] = []
    history_ids: list[int] = []
    for key, values in incoming.items():
        found = existing.get(key)
        if found is None:
            to_create.append((source.pk, key[0], key[1], *values, now, now, run.pk))
            continue
        pk, stored = found
        if stored == values:
            counts.unchanged += 1
            continue
        if any(stored[index] != values[index] for index in _HISTORY):
            history_ids.append(pk)
        to_update.append(Offer(pk=pk, last_seen=now, last_run=run, **dict(zip(OFFER_FIELDS, values, strict=True))))

    _offers_create(to_create)
    _offers_update(to_update)
    for start in range(0, len(unseen_active), BATCH_SIZE):
        Offer.objects.filter(id__in=unseen_active[start:start + BATCH_SIZE]).update(is_active=False)
    # Unchanged offers were seen too; created and updated ones already carry `now`. Only last_seen, which is in no
    # index, so PostgreSQL can rewrite the rows in place (see migration 0003); last_run keeps the run that last
    # created or changed the offer.
    Offer.objects.filter(source=source, is_active=True, last_seen__lt=now).update(last_seen=now)
    if to_create:
        _history_of_created(source=source, run=run, now=now)
    updated_by_id = {offer.pk: offer for offer in to_update}
    PriceObservation.objects.bulk_create([_observation(updated_by_id[pk], run, now) for pk in history_ids],
                                         batch_size=BATCH_SIZE)
    counts.created, counts.updated, counts.deactivated = len(to_create), len(to_update), len(unseen_active)
    return counts


BATCH_SIZE = 2000
UPDATED_FIELDS = (*OFFER_FIELDS, "last_seen", "last_run_id")
CREATED_COLUMNS = ("source_id", "instance_type", "region", *OFFER_FIELDS, "first_seen", "last_seen", "last_run_id")
HISTORY_COLUMNS = ("price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd", "currency",
                   "availability", "available_count")


def _offers_create(rows: list[tuple]) -> None:
    """Insert new offers given as tuples in CREATED_COLUMNS order.

    On PostgreSQL through COPY, the fastest way it takes rows (no model instances, no per-value preparation);
    elsewhere bulk_create. Values were range-checked by _offer_problem, so one bad row cannot sink a batch.
    """
    if not rows:
        return
    if connection.vendor != "postgresql":
        Offer.objects.bulk_create([Offer(**dict(zip(CREATED_COLUMNS, row, strict=True))) for row in rows],
                                  batch_size=BATCH_SIZE)
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
    offers were created with first_seen = now and last_run = run, which no older offer of the source has."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(name) for name in HISTORY_COLUMNS)
    stamp = connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(PriceObservation._meta.db_table)} (offer_id, observed_at, run_id, {columns}) "
            f"SELECT id, %s, %s, {columns} FROM {quote(Offer._meta.db_table)} "
            f"WHERE source_id = %s AND first_seen = %s AND last_run_id = %s",
            # Adapted as the ORM would (SQLite stores datetimes as text in its own format).
            [stamp, run.pk, source.pk, stamp, run.pk],
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
    return None


class OfferNormaliser:
    """Turns a ScrapedOffer into the tuple of OFFER_FIELDS values stored for it.

    GPU names and regions repeat across thousands of rows, so their lookups are memoised per run.
    """

    def __init__(self, *, source: DataSource, resolver: GpuResolver, gpu_ids: dict[str, int],
                 rates: dict[str, Decimal]):
        self.source = source
        self.resolver = resolver
        self.gpu_ids = gpu_ids
        self.rates = rates
        self._gpus: dict[tuple[str, Decimal | None], str | None] = {}
        self._places: dict[str, tuple[str, str]] = {}

    def values(self, scraped: ScrapedOffer, counts: SyncCounts) -> tuple:
        gpu_key = (scraped.gpu_name, scraped.gpu_memory_gb)
        if gpu_key not in self._gpus:
            self._gpus[gpu_key] = self.resolver.resolve(scraped.gpu_name, scraped.gpu_memory_gb)
        slug = self._gpus[gpu_key]
        if slug is None:
            counts.unknown_gpus[scraped.gpu_name] += 1
        place = self._places.get(scraped.region)
        if place is None:
            geography = region_geography(self.source.provider.slug, scraped.region)
            place = self._places[scraped.region] = (geography.country, geography.continent)
        price_usd = to_usd(scraped.price_hour, scraped.currency, self.rates)
        spot_usd = to_usd(scraped.spot_price_hour, scraped.currency, self.rates)
        gpu_count = scraped.gpu_count.quantize(Decimal("0.001"))
        memory = scraped.gpu_memory_gb
        if memory is None and slug is not None:
            # The source names the GPU but not its memory (Azure's catalog rows): the catalog entry knows it, unless
            # the entry itself is a "form factor not stated" guess-free placeholder whose variants differ in memory.
            spec = self.resolver.specs[slug]
            if spec.form_factor != "unspecified":
                memory = spec.memory_gb
        # The order is OFFER_FIELDS'.
        return (
            self.source.provider_id,
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
            per_gpu(price_usd, scraped.gpu_count),
            per_gpu(spot_usd, scraped.gpu_count),
            scraped.availability,
            scraped.available_count,
            True,
        )


def _q(value: Decimal | None, places: str) -> Decimal | None:
    return None if value is None else value.quantize(Decimal(places))


def _observation(offer: Offer, run: ScrapeRun, now: datetime) -> PriceObservation:
    return PriceObservation(
        offer_id=offer.pk,
        observed_at=now,
        price_hour=offer.price_hour,
        spot_price_hour=offer.spot_price_hour,
        price_hour_usd=offer.price_hour_usd,
        spot_price_hour_usd=offer.spot_price_hour_usd,
        currency=offer.currency,
        availability=offer.availability,
        available_count=offer.available_count,
        run=run,
    )


# --- Kubernetes facts from provider APIs ---------------------------------------------------------------------


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


# --- the weekly source-link check ----------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkOutcome:
    ok: bool
    status_code: int | None = None
    error: str = ""


def source_links_check(*, concurrency: int = 8, timeout: float = 15.0,
                       transport: httpx.BaseTransport | None = None, now: datetime | None = None) -> dict[str, int]:
    """Ask every distinct capability source URL whether it still answers, and record the answer in LinkCheck.

    HEAD first (cheap); a HEAD answered with an error is asked again with GET, because many sites refuse HEAD but
    serve the page. 2xx/3xx (after redirects) is ok; 4xx/5xx, a timeout or a connection error is broken, with the
    code or error kept and `failing_since` set on the first failure of a streak. At most `concurrency` requests run
    at once and each has `timeout` seconds. Returns {"checked": n, "broken": m}.
    """
    now = now or timezone.now()
    urls = sorted(set(Capability.objects.exclude(source_url="").values_list("source_url", flat=True)))
    with build_client(transport=transport, timeout=httpx.Timeout(timeout)) as http:
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            outcomes = dict(zip(urls, pool.map(lambda url: _probe(http, url), urls), strict=True))
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


def _probe(http: httpx.Client, url: str) -> LinkOutcome:
    try:
        response = http.head(url)
        if response.status_code >= 400:
            with http.stream("GET", url) as streamed:
                response = streamed
    except httpx.TimeoutException:
        return LinkOutcome(ok=False, error="timed out")
    except httpx.HTTPError as exc:
        return LinkOutcome(ok=False, error=f"could not connect: {exc}")
    ok = response.status_code < 400
    return LinkOutcome(ok=ok, status_code=response.status_code, error="" if ok else f"HTTP {response.status_code}")


# --- the bundled snapshot ------------------------------------------------------------------------------------


def snapshot_load() -> list[ScrapeRun]:
    """Load everything the embedded default shows, through the same services a live run uses: the GPU catalog,
    the curated providers, the bundled ECB rates (first, so EUR and CNY prices get their USD value), then the
    recorded payload of every source in `registry.snapshot_sources()` replayed offline."""
    gpu_catalog_sync()
    providers_sync()
    exchange_rates_sync(offline=True)
    return [source_scrape(slug=slug, offline=True) for slug in registry.snapshot_sources()]


# --- exchange rates ------------------------------------------------------------------------------------------


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
