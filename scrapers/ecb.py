"""The European Central Bank's euro foreign exchange reference rates: the one source of every currency conversion.

The ECB publishes, each working day around 16:00 CET, how many units of ~30 currencies one euro buys
(https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html), as a
small public XML file with no key: `<Cube time='YYYY-MM-DD'>` holding `<Cube currency='USD' rate='1.1252'/>` rows.
Offers are priced in USD, EUR and CNY, so USD is required (without it nothing converts) and every other currency is
taken as published. Any doubt about the response (not XML, no dated Cube, a rate that is not a positive number)
raises a ScrapeError so the caller stores nothing and the rates already stored stay in use.

Plain Python like every scraper: the service `providers.exchange_rates.exchange_rates_sync` stores what `fetch()`
returns.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

import httpx

from .base import SchemaScrapeError
from .http import RecordedTransport, build_client, get
from .normalize import to_decimal

logger = logging.getLogger(__name__)

DAILY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
RECORDED = Path(__file__).resolve().parent / "recorded" / "ecb" / "eurofxref-daily.xml"

# Without a USD rate no non-USD price can be shown in USD, so such a response is treated as broken.
REQUIRED_CURRENCIES = ("USD",)
# Currencies the product shows besides EUR; a missing one is logged (its prices stay unconverted) but not fatal.
EXPECTED_CURRENCIES = ("USD", "CNY")


@dataclass(frozen=True, slots=True)
class DailyRates:
    """One ECB publication day: units of each currency per 1 EUR."""

    day: date
    per_eur: dict[str, Decimal]
    source_url: str


def parse_reference_rates(content: bytes, source_url: str = DAILY_URL) -> list[DailyRates]:
    """Parse an ECB eurofxref XML document (daily, or the 90-day/historical files) into one entry per day.

    Elements are matched by local name so a namespace change does not silently yield nothing.
    """
    if not content or not content.strip():
        raise SchemaScrapeError(f"{source_url}: empty response")
    if b"<!doctype" in content[:4096].lower():
        # The ECB never sends a DTD; refusing one keeps entity-expansion tricks away from the parser.
        raise SchemaScrapeError(f"{source_url}: unexpected DOCTYPE in the reference-rate XML")
    try:
        root = ElementTree.fromstring(content)
    except ElementTree.ParseError as exc:
        raise SchemaScrapeError(f"{source_url}: not well-formed XML ({exc})") from exc

    days: list[DailyRates] = []
    for cube in root.iter():
        if _local(cube.tag) != "Cube" or "time" not in cube.attrib:
            continue
        days.append(_parse_day(cube, source_url))
    if not days:
        raise SchemaScrapeError(f"{source_url}: no <Cube time='...'> element; the format may have changed")
    return days


def _parse_day(cube: ElementTree.Element, source_url: str) -> DailyRates:
    raw_day = cube.attrib["time"]
    try:
        day = date.fromisoformat(raw_day)
    except ValueError as exc:
        raise SchemaScrapeError(f"{source_url}: Cube time {raw_day!r} is not an ISO date") from exc
    rates: dict[str, Decimal] = {}
    for child in cube:
        if _local(child.tag) != "Cube":
            continue
        currency = (child.attrib.get("currency") or "").strip()
        raw_rate = child.attrib.get("rate")
        if len(currency) != 3 or not currency.isalpha() or not currency.isupper():
            raise SchemaScrapeError(f"{source_url} {day}: currency code {currency!r} is not ISO 4217")
        try:
            rate = to_decimal(raw_rate)
        except ValueError as exc:
            raise SchemaScrapeError(f"{source_url} {day}: {currency} rate {raw_rate!r} is not a number") from exc
        if rate is None or rate <= 0:
            raise SchemaScrapeError(f"{source_url} {day}: {currency} rate {raw_rate!r} is not a positive number")
        rates[currency] = rate
    missing = [currency for currency in REQUIRED_CURRENCIES if currency not in rates]
    if missing:
        raise SchemaScrapeError(f"{source_url} {day}: no rate for {', '.join(missing)} among {len(rates)} currencies")
    for currency in EXPECTED_CURRENCIES:
        if currency not in rates:
            logger.warning("ECB rates of %s have no %s; %s prices stay unconverted", day, currency, currency)
    return DailyRates(day=day, per_eur=rates, source_url=source_url)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class EcbClient:
    """Fetches the daily reference rates through an injected httpx client (tests inject a MockTransport)."""

    url = DAILY_URL

    def __init__(self, http: httpx.Client):
        self.http = http

    @classmethod
    def recorded(cls) -> dict[str, Path]:
        """URL -> the bundled real copy (see scrapers/recorded/ecb/README.md) that offline runs replay."""
        return {cls.url: RECORDED}

    def fetch(self) -> list[DailyRates]:
        response = get(self.http, self.url)
        return parse_reference_rates(response.content, source_url=self.url)


def make_client(*, offline: bool = False, transport: httpx.BaseTransport | None = None) -> EcbClient:
    if offline and transport is None:
        transport = RecordedTransport(EcbClient.recorded())
    return EcbClient(build_client(transport=transport))
