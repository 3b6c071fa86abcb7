"""What every export starts from: the offers one validated OfferFilterSet selects (providers.selectors, the same
rows as the offers page and the API), read once as plain rows, with what the exports must say about them: the
data's as-of dates, the filter and the product version. No export runs a query of its own.
from providers import offer_reads

An offer that an export cannot represent is left out and counted with the reason (`Skipped`), never exported with
a guessed label, name or price.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cache
from pathlib import Path
from urllib.parse import urlencode

from providers import offer_reads

FIELDS = ("id", "provider__slug", "instance_type", "region", "gpu__slug", "gpu__vendor", "gpu_count", "gpu_fraction",
          "price_hour_usd", "spot_price_hour_usd", "price_per_gpu_hour_usd", "price_as_of", "in_stock_share_7d")


@cache
def product_version() -> str:
    with (Path(__file__).resolve().parent.parent / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["project"]["version"]


@dataclass
class Skipped:
    """Offers left out of one export, counted per reason."""

    reasons: Counter = field(default_factory=Counter)

    def add(self, reason: str) -> None:
        self.reasons[reason] += 1

    @property
    def total(self) -> int:
        return sum(self.reasons.values())

    def lines(self) -> list[str]:
        return [f"left out: {count} offer(s): {reason}" for reason, count in sorted(self.reasons.items())]


@dataclass(frozen=True)
class Selection:
    """The rows of one export with its provenance."""

    rows: list[dict]
    filter_query: str
    undated_left_out: int = 0  # offers whose price states no date, left out unless unknown=include

    @property
    def as_of(self) -> tuple[datetime | None, datetime | None, int]:
        """(oldest, newest) price date among the rows, and how many rows state no date."""
        dates = [row["price_as_of"] for row in self.rows if row["price_as_of"] is not None]
        return (min(dates) if dates else None, max(dates) if dates else None, len(self.rows) - len(dates))

    def header_lines(self, tool: str) -> list[str]:
        oldest, newest, undated = self.as_of
        dated = (f"prices as of {oldest:%Y-%m-%d} to {newest:%Y-%m-%d}" if oldest else "no price states its date")
        return [
            f"{tool} export from gpu-k8s-comparator {product_version()}",
            f"filter: {self.filter_query or '(none: every active offer)'}",
            f"{len(self.rows)} offer(s) selected; {dated}; {undated} offer(s) state no price date",
            "prices in USD per hour; every row names the offer id it comes from (/api/v1/offers/<id>/)",
        ] + ([f"left out: {self.undated_left_out} offer(s) whose price states no date (add unknown=include to "
              f"export them too, marked undated)"] if self.undated_left_out else [])


def selection(*, filters, params) -> Selection:
    """The offers a bound, valid OfferFilterSet selects, in its order, as plain rows (one query).

    Only dated prices are exported unless the filter says `unknown=include` (the one parameter for what is unknown):
    a cost tool would otherwise carry a price nobody can date. The undated ones are counted in the header."""
    rows = list(offer_reads.offers_filtered(filters=filters).values(*FIELDS))
    undated = 0
    if not filters.include_unknown:
        dated = [row for row in rows if row["price_as_of"] is not None]
        undated, rows = len(rows) - len(dated), dated
    names = [name for name in sorted(params) if name in filters.base_filters]
    query = urlencode([(name, value) for name in names for value in params.getlist(name)])
    return Selection(rows=rows, filter_query=query, undated_left_out=undated)


def whole_gpus(row: dict, skipped: Skipped) -> int | None:
    """The machine's GPU count when it is a whole number of GPUs with an on-demand price, else None (counted)."""
    count = row["gpu_count"]
    if row["price_hour_usd"] is None:
        skipped.add("no on-demand price")
        return None
    if row["gpu_fraction"] is not None or count is None or count < 1 or count != count.to_integral_value():
        skipped.add("a share of a GPU (fractional or vGPU machine)")
        return None
    return int(count)


def money(value: Decimal) -> str:
    return format(value.quantize(Decimal("0.00001")).normalize(), "f")
