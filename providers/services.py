"""Writes. Every change to providers, capabilities, the GPU catalog and offers goes through these functions.

`source_scrape` is the one ingestion path: the Celery task, `manage.py scrape` and the bundled snapshot all call it,
and it hands whatever the client returned to `offers_sync` (idempotent upsert on the natural key, history only on
change, never deletes, refuses a response that would deactivate more than half of a source's offers).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

import httpx
from django.db import transaction
from django.utils import timezone

from scrapers import registry
from scrapers.base import NotConfiguredError, ScrapedOffer, ScrapeError, ScrapeResult, SourceInfo, TransientScrapeError
from scrapers.normalize import (
    GpuResolver,
    default_gpu_resolver,
    gpu_catalog,
    per_gpu,
    quantize_money,
    region_geography,
    to_usd,
)

from .curated import ProviderRecord, load_providers
from .models import (
    Capability,
    CapabilityChange,
    CapabilityOrigin,
    DataSource,
    GpuModel,
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
            values = {
                "value": cell.value,
                "label": cell.label,
                "detail": cell.detail,
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


def _record_change(provider, key, current, value, label, source_url, now) -> None:
    CapabilityChange.objects.create(
        provider=provider,
        key=key,
        old_value=current.value if current else "",
        old_label=current.label if current else "",
        new_value=value,
        new_label=label,
        source_url=source_url,
        origin=CapabilityOrigin.CURATED,
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


@dataclass
class SyncCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deactivated: int = 0
    skipped: int = 0
    unknown_gpus: Counter = field(default_factory=Counter)


def source_scrape(*, slug: str, offline: bool = False, transport: httpx.BaseTransport | None = None) -> ScrapeRun:
    """Fetch one source and sync its offers, recording a ScrapeRun whatever happens.

    A failure of any kind leaves every stored offer as it was. Transient errors are recorded and then re-raised
    (so the Celery task can retry with backoff); other scrape errors are recorded and the failed run returned.
    """
    client_class = registry.SOURCES[slug]
    source = source_register(client_class.info)
    run = ScrapeRun.objects.create(source=source, started_at=timezone.now(), offline=offline)
    try:
        client = registry.make_client(slug, offline=offline, transport=transport)
        result = client.fetch()
        with transaction.atomic():
            counts = offers_sync(source=source, run=run, result=result, now=run.started_at)
    except NotConfiguredError as exc:
        _finish(run, RunStatus.NOT_CONFIGURED, error=str(exc))
        logger.info("source %s not configured: %s", slug, exc)
        return run
    except ScrapeError as exc:
        _finish(run, RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        logger.warning("source %s failed: %s", slug, exc)
        if isinstance(exc, TransientScrapeError):
            raise
        return run
    except Exception as exc:
        _finish(run, RunStatus.FAILED, error=f"internal error: {type(exc).__name__}: {exc}")
        raise
    run.created, run.updated, run.unchanged = counts.created, counts.updated, counts.unchanged
    run.deactivated, run.skipped = counts.deactivated, counts.skipped
    run.unknown_gpus = dict(counts.unknown_gpus)
    _finish(run, RunStatus.SUCCEEDED)
    logger.info(
        "source %s: %s created, %s updated, %s unchanged, %s deactivated, %s rejected, unknown GPUs %s",
        slug, counts.created, counts.updated, counts.unchanged, counts.deactivated, counts.skipped,
        dict(counts.unknown_gpus) or "none",
    )
    return run


def _finish(run: ScrapeRun, status: str, error: str = "") -> None:
    run.status = status
    run.error = error
    run.finished_at = timezone.now()
    run.save()


def offers_sync(
    *, source: DataSource, run: ScrapeRun, result: ScrapeResult, now: datetime, resolver: GpuResolver | None = None
) -> SyncCounts:
    """Upsert one source's offers on (source, instance_type, region) in bulk; call inside a transaction.

    - new offers are created, changed ones updated, history appended only when price or availability changed;
    - offers the response no longer lists are deactivated (never deleted), unless that would be more than half of
      the source's active offers, which raises ShrinkRefusedError and leaves everything as it was;
    - rows whose GPU name the catalog does not know are stored with no GPU model and counted in unknown_gpus.
    """
    resolver = resolver or default_gpu_resolver()
    gpu_ids = dict(GpuModel.objects.values_list("slug", "id"))
    rates = exchange_rates_latest()
    counts = SyncCounts(skipped=len(result.rejected))

    incoming: dict[tuple[str, str], dict] = {}
    for scraped in result.offers:
        values = _normalise(scraped, source, resolver, gpu_ids, rates, counts)
        incoming[(scraped.instance_type, scraped.region)] = values

    existing = {
        (offer.instance_type, offer.region): offer
        for offer in Offer.objects.filter(source=source).only("id", "instance_type", "region", *OFFER_FIELDS)
    }
    active_before = sum(1 for offer in existing.values() if offer.is_active)
    unseen_active = [offer.id for key, offer in existing.items() if offer.is_active and key not in incoming]
    if active_before and Decimal(len(unseen_active)) > MAX_DEACTIVATED_SHARE * active_before:
        raise ShrinkRefusedError(
            f"response lists {len(incoming)} offers but would deactivate {len(unseen_active)} of "
            f"{active_before} active ones; refusing it as a broken or partial response"
        )

    to_create: list[Offer] = []
    to_update: list[Offer] = []
    changed_history: list[Offer] = []
    for key, values in incoming.items():
        offer = existing.get(key)
        if offer is None:
            to_create.append(
                Offer(source=source, instance_type=key[0], region=key[1], first_seen=now, last_seen=now,
                      last_run=run, **values)
            )
            continue
        if all(getattr(offer, name) == value for name, value in values.items()):
            counts.unchanged += 1
            continue
        if any(getattr(offer, name) != values[name] for name in HISTORY_FIELDS):
            changed_history.append(offer)
        for name, value in values.items():
            setattr(offer, name, value)
        to_update.append(offer)

    Offer.objects.bulk_create(to_create, batch_size=2000)
    Offer.objects.bulk_update(to_update, OFFER_FIELDS, batch_size=2000)
    if unseen_active:
        Offer.objects.filter(id__in=unseen_active).update(is_active=False)
    Offer.objects.filter(source=source, is_active=True).update(last_seen=now, last_run=run)
    PriceObservation.objects.bulk_create(
        [_observation(offer, run, now) for offer in (*to_create, *changed_history)], batch_size=2000
    )
    counts.created, counts.updated, counts.deactivated = len(to_create), len(to_update), len(unseen_active)
    return counts


def _normalise(scraped: ScrapedOffer, source, resolver, gpu_ids, rates, counts: SyncCounts) -> dict:
    slug = resolver.resolve(scraped.gpu_name, scraped.gpu_memory_gb)
    if slug is None:
        counts.unknown_gpus[scraped.gpu_name] += 1
    geography = region_geography(source.provider.slug, scraped.region)
    price_usd = to_usd(scraped.price_hour, scraped.currency, rates)
    spot_usd = to_usd(scraped.spot_price_hour, scraped.currency, rates)
    return {
        "provider_id": source.provider_id,
        "country": geography.country,
        "continent": geography.continent,
        "gpu_id": gpu_ids.get(slug) if slug else None,
        "gpu_name": scraped.gpu_name[:100],
        "gpu_count": scraped.gpu_count.quantize(Decimal("0.001")),
        "gpu_memory_gb": _q(scraped.gpu_memory_gb, "0.1"),
        "vcpus": _q(scraped.vcpus, "0.01"),
        "ram_gb": _q(scraped.ram_gb, "0.01"),
        "currency": scraped.currency,
        "price_hour": quantize_money(scraped.price_hour),
        "spot_price_hour": quantize_money(scraped.spot_price_hour),
        "price_hour_usd": price_usd,
        "spot_price_hour_usd": spot_usd,
        "price_per_gpu_hour_usd": per_gpu(price_usd, scraped.gpu_count),
        "spot_price_per_gpu_hour_usd": per_gpu(spot_usd, scraped.gpu_count),
        "availability": scraped.availability,
        "available_count": scraped.available_count,
        "is_active": True,
    }


def _q(value: Decimal | None, places: str) -> Decimal | None:
    return None if value is None else value.quantize(Decimal(places))


def _observation(offer: Offer, run: ScrapeRun, now: datetime) -> PriceObservation:
    return PriceObservation(
        offer=offer,
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


# --- the bundled snapshot ------------------------------------------------------------------------------------


def snapshot_load() -> list[ScrapeRun]:
    """Load everything the embedded default shows: GPU catalog, curated providers, and every catalog source's
    recorded payload replayed through the same ingestion path as a live scrape."""
    gpu_catalog_sync()
    providers_sync()
    runs = []
    for slug, client in registry.SOURCES.items():
        if client.info.kind == "catalog":
            runs.append(source_scrape(slug=slug, offline=True))
    return runs
