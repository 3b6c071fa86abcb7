"""The facts stored about providers, GPUs and instance types, and every change to them.

- the curated files: the GPU catalog (`gpu_catalog_sync`), the providers and their capability cells
  (`providers_sync`, each changed answer recorded as a CapabilityChange), the instance-type facts
  (`instance_types_sync`, through `instance_facts_sync`, the entry point for any source of SKU facts);
- what a provider API or a dated dataset says about Kubernetes (`capability_facts_sync`, inside a run).

Each one recomputes the stored Kubernetes answers of the offers it feeds (providers.kubernetes_profiles).
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from scrapers.base import ScrapedCapability, ScrapeResult
from scrapers.normalize import gpu_catalog

from .capabilities import QUESTIONS
from .curated import ProviderRecord, load_providers
from .ingest import SyncCounts
from .kubernetes_profiles import offer_kubernetes_refresh
from .models import (
    Capability,
    CapabilityChange,
    CapabilityOrigin,
    Confidence,
    DataSource,
    GpuModel,
    KubernetesFact,
    Provider,
)

logger = logging.getLogger(__name__)


def _fields(record, names: str) -> dict:
    """The record's attributes of these (space-separated) names, as a model's update_or_create defaults."""
    return {name: getattr(record, name) for name in names.split()}


def gpu_catalog_sync() -> int:
    """Upsert the GPU catalog from scrapers/data/gpus.toml; returns the number of entries."""
    specs = gpu_catalog()
    for spec in specs:
        GpuModel.objects.update_or_create(slug=spec.slug, defaults={
            **_fields(spec, "name vendor family architecture memory_gb memory_type form_factor mig_source_url "
                            "source_url verified_on"),
            "mig_profiles": list(spec.mig_profiles),
        })
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
            slug=record.slug, defaults=_fields(record, "name name_zh website kind headquarters"))
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


def instance_facts_sync(*, provider_slug: str, origin: str, facts, now: datetime | None = None) -> int:
    """Replace every instance-type fact of one provider and one origin ("curated", "provider_api", "catalog") with
    `facts` (providers.kubernetes.Fact), then recompute that provider's offer answers.

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
                             gpudirect_rdma=fact.gpudirect_rdma, detail=fact.detail, detail_zh=fact.detail_zh,
                             source_url=fact.source_url,
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
