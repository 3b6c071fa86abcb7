"""Reads. Views, the API and the digest ask these functions; they never build querysets of their own."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.db.models import Count, Max, Prefetch, Q, QuerySet

from .models import Capability, DataSource, ExchangeRate, Offer, Provider, ScrapeRun


def exchange_rates_latest() -> dict[str, Decimal]:
    """Units of each currency per 1 EUR from the latest ECB day we have (empty when none is loaded)."""
    latest = ExchangeRate.objects.order_by("-date").values_list("date", flat=True).first()
    if latest is None:
        return {}
    return dict(ExchangeRate.objects.filter(date=latest).values_list("currency", "per_eur"))


def exchange_rate_date() -> date | None:
    return ExchangeRate.objects.order_by("-date").values_list("date", flat=True).first()


def offer_list(*, include_inactive: bool = False) -> QuerySet[Offer]:
    offers = Offer.objects.select_related("provider", "gpu", "source")
    if not include_inactive:
        offers = offers.filter(is_active=True)
    return offers.order_by("price_per_gpu_hour_usd", "id")


def provider_list() -> QuerySet[Provider]:
    return (
        Provider.objects.prefetch_related(Prefetch("capabilities", queryset=Capability.objects.order_by("key")))
        .annotate(active_offers=Count("offers", filter=Q(offers__is_active=True)))
        .order_by("name")
    )


def source_status_list() -> list[tuple[DataSource, ScrapeRun | None]]:
    """Every source with its latest run, in two queries whatever the number of sources and runs.

    Runs are created in time order, so the highest id of a source is its latest run.
    """
    sources = list(DataSource.objects.select_related("provider").order_by("slug"))
    latest_ids = ScrapeRun.objects.values("source_id").annotate(last=Max("id")).values("last")
    latest = {run.source_id: run for run in ScrapeRun.objects.filter(id__in=latest_ids)}
    return [(source, latest.get(source.id)) for source in sources]
