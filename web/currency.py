"""Display currencies for the pages: prices are stored in USD (converted at ingestion with a dated ECB rate) and
shown in USD, EUR or CNY by multiplying with a factor derived from the latest ECB reference rates we hold.

The ECB publishes units of each currency per 1 EUR, so USD -> EUR is 1 / rate(USD) and USD -> CNY is
rate(CNY) / rate(USD). When a rate is missing the factor is None and the pages say "no rate loaded" instead of
showing a made-up number. Pure functions: no database access.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

DISPLAY_CURRENCIES = ("USD", "EUR", "CNY")
SYMBOLS = {"USD": "$", "EUR": "€", "CNY": "¥"}


@dataclass(frozen=True)
class Conversion:
    currency: str
    factor: Decimal | None  # multiply a USD amount by this; None when no rate is loaded
    rate_date: date | None  # the ECB day the factor comes from (None for USD, which needs no rate)

    @property
    def available(self) -> bool:
        return self.factor is not None

    @property
    def symbol(self) -> str:
        return SYMBOLS.get(self.currency, self.currency)

    def convert(self, amount_usd: Decimal | None) -> Decimal | None:
        if amount_usd is None or self.factor is None:
            return None
        return amount_usd * self.factor


def conversions(per_eur: dict[str, Decimal], rate_date: date | None) -> dict[str, Conversion]:
    """One Conversion per display currency from the ECB rates of one day (`per_eur[c]` = units of c per 1 EUR)."""
    usd = per_eur.get("USD")
    factors: dict[str, Decimal | None] = {
        "USD": Decimal(1),
        "EUR": (Decimal(1) / usd) if usd else None,
        "CNY": (per_eur["CNY"] / usd) if usd and per_eur.get("CNY") else None,
    }
    return {
        code: Conversion(code, factors[code], None if code == "USD" else (rate_date if factors[code] else None))
        for code in DISPLAY_CURRENCIES
    }
