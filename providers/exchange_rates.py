"""The ECB's euro reference rates, by which offers in other currencies get their USD prices."""

from __future__ import annotations

import logging
from decimal import Decimal

import httpx
from django.db import transaction

from scrapers import ecb
from scrapers.base import ScrapeError

from .models import ExchangeRate

logger = logging.getLogger(__name__)


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
