"""Reads for the advisor: the candidate offers (selected by the one OfferFilterSet), their providers' capability
cells, each offer's own Kubernetes answers (advisor.answers) and the latest exchange rates, turned into the engine's
plain data. A fixed number of queries whatever the number of offers: one for the offers (with provider, GPU and
source joined, only the columns used), one for the cells, two for the rates, two for the Kubernetes answers (one
per machine type), plus the FilterSet's choice look-ups.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import defaultdict

from django.conf import settings
from django.db.models import QuerySet

from providers.filters import offer_filterset
from providers.models import Capability, Offer
from providers.offer_reads import offers_filtered
from providers.selectors import exchange_rates_latest

from . import engine
from .answers import offer_answers
from .manifests import build_manifest
from .types import Advice, Cell, GpuData, OfferData, WorkloadSpec

logger = logging.getLogger(__name__)


def _filter_data(spec: WorkloadSpec) -> dict[str, str]:
    data: dict[str, str] = {}
    if spec.gpu:
        data["gpu"] = spec.gpu
    if spec.gpu_family:
        data["gpu_family"] = spec.gpu_family
    # The minimum memory per GPU is checked by the engine, not with the FilterSet's `gpu_memory_min`: that filter
    # reads only the memory the source reported, and some sources (Azure's catalog) report none although the GPU
    # model, and so its memory, is known from our catalog.
    # GPUs per node is honoured for every kind: a node type with fewer GPUs is never a candidate.
    data["gpu_count_min"] = str(spec.gpus_per_node)
    # Places as recorded, whether the provider or only a catalog states the region: the advisor does not yet say how
    # many of its candidates rest on a catalog's copy of a region (the offers page and the API do).
    data["unknown"] = "include"
    return data


def _filtered(data: dict[str, str]) -> QuerySet[Offer]:
    filterset = offer_filterset(data)
    if not filterset.is_valid():
        # The form and the serializer validate every field first, so this is a programming error, not bad input.
        raise ValueError(f"advisor built invalid offer filters {data!r}: {filterset.errors.as_json()}")
    return (offers_filtered(filters=filterset).select_related(None).select_related("provider", "gpu", "source")
            .only(*OFFER_FIELDS))


# What _offer_data reads of an offer and its relations: the rest (the stored Kubernetes answers above all, which
# offer_answers reads once per machine type) is left in the database.
OFFER_FIELDS = (
    "id", "instance_type", "region", "country", "continent", "gpu_name", "gpu_count", "gpu_memory_gb",
    "price_hour_usd", "spot_price_hour_usd", "availability", "last_seen", "vcpus", "ram_gb", "form_factor",
    "efa_interfaces",
    "provider__slug", "provider__name", "provider__name_zh", "provider__kind", "source__name", "source__url",
    "gpu__slug", "gpu__name", "gpu__memory_gb", "gpu__vendor", "gpu__mig_profiles", "gpu__mig_source_url",
    "gpu__source_url", "gpu__family",
)


def advisor_offer_list(*, spec: WorkloadSpec) -> QuerySet[Offer]:
    """Active offers with the GPU, memory per GPU and GPUs per node asked for, where the data may live.

    Countries and continents are alternatives ("in DE, or anywhere in North America"), so with both given the
    result is the union of two FilterSet queries; an offer whose country or continent is not recorded never matches.
    """
    data = _filter_data(spec)
    if spec.countries and spec.continents:
        return (_filtered({**data, "country": ",".join(spec.countries)})
                | _filtered({**data, "continent": ",".join(spec.continents)}))
    if spec.countries:
        data["country"] = ",".join(spec.countries)
    if spec.continents:
        data["continent"] = ",".join(spec.continents)
    return _filtered(data)


def _offer_data(offer: Offer) -> OfferData:
    gpu = offer.gpu
    return OfferData(
        id=offer.id, provider_slug=offer.provider.slug, provider_name=offer.provider.name,
        provider_name_zh=offer.provider.name_zh, provider_kind=offer.provider.kind, instance_type=offer.instance_type,
        region=offer.region,
        country=offer.country, continent=offer.continent, gpu_name=offer.gpu_name, gpu_count=offer.gpu_count,
        gpu_memory_gb=offer.gpu_memory_gb, price_hour_usd=offer.price_hour_usd,
        spot_price_hour_usd=offer.spot_price_hour_usd, availability=offer.availability,
        source_name=offer.source.name, source_url=offer.source.url, last_seen=offer.last_seen,
        vcpus=offer.vcpus, ram_gb=offer.ram_gb, form_factor=offer.form_factor, efa_interfaces=offer.efa_interfaces,
        gpu=GpuData(slug=gpu.slug, name=gpu.name, memory_gb=gpu.memory_gb, vendor=gpu.vendor,
                           mig_profiles=tuple(gpu.mig_profiles or ()), mig_source_url=gpu.mig_source_url,
                           source_url=gpu.source_url, family=gpu.family) if gpu else None,
    )


def _cells(provider_ids: set[int]) -> dict[str, dict[str, Cell]]:
    cells: dict[str, dict[str, Cell]] = defaultdict(dict)
    rows = Capability.objects.filter(provider_id__in=provider_ids).select_related("provider")
    for cap in rows:
        cells[cap.provider.slug][cap.key] = Cell(
            key=cap.key, value=cap.value, label=cap.label, detail=cap.detail, source_url=cap.source_url,
            verified_on=cap.verified_on, confidence=cap.confidence, amount=cap.amount, currency=cap.currency,
        )
    return dict(cells)


_slots: tuple[threading.BoundedSemaphore, threading.BoundedSemaphore] | None = None
_slots_lock = threading.Lock()


def _advice_slots() -> tuple[threading.BoundedSemaphore, threading.BoundedSemaphore]:
    """This process's advice slots (settings.ADVISOR_CONCURRENT_PER_PROCESS) and its one place in line, made on first
    use."""
    global _slots
    with _slots_lock:
        if _slots is None:
            _slots = (threading.BoundedSemaphore(max(1, settings.ADVISOR_CONCURRENT_PER_PROCESS)),
                      threading.BoundedSemaphore(1))
        return _slots


def advice_get(*, spec: WorkloadSpec, budget_seconds: float | None = None) -> Advice:
    """The advice for a validated `spec` (see inputs.spec_errors), with the starter manifest for the chosen offer.

    An advice ranks every candidate offer (about half a CPU-second on the bundled snapshot), so a process computes
    at most settings.ADVISOR_CONCURRENT_PER_PROCESS at once and lets one more request wait up to
    settings.ADVISOR_WAIT_SECONDS for a slot; any other raises engine.AdviceBusy at once (answered 503 with
    Retry-After) instead of holding a web thread the other pages need (bench/advisor.py measures them while 8
    clients ask for advice). Raises engine.AdviceOverBudget when ranking runs past `budget_seconds` (default
    settings.ADVISOR_BUDGET_SECONDS, counted from the call)."""
    slots, line = _advice_slots()
    if not slots.acquire(blocking=False):
        if not line.acquire(blocking=False):
            raise engine.AdviceBusy()
        try:
            if not slots.acquire(timeout=settings.ADVISOR_WAIT_SECONDS):
                raise engine.AdviceBusy()
        finally:
            line.release()
    try:
        return _advice(spec, budget_seconds)
    finally:
        slots.release()


def _advice(spec: WorkloadSpec, budget_seconds: float | None) -> Advice:
    budget = settings.ADVISOR_BUDGET_SECONDS if budget_seconds is None else budget_seconds
    deadline = time.monotonic() + budget if budget else None
    offers = list(advisor_offer_list(spec=spec))
    offer_data = [_offer_data(offer) for offer in offers]
    cells = _cells({offer.provider_id for offer in offers})
    advice = engine.advise(
        spec,
        offers=offer_data,
        cells=cells,
        per_eur=exchange_rates_latest(),
        answers=offer_answers(offer_data),
        deadline=deadline,
    )
    logger.info("advice for %s: %d candidates, %d ranked", spec.kind, advice.candidates, advice.ranked)
    if advice.chosen is None:
        return advice
    return dataclasses.replace(advice, manifest=build_manifest(spec, advice.chosen, advice.packing))
