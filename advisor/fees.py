"""Control-plane fees per managed Kubernetes service and tier, as each provider states them
(advisor/data/control_plane_fees.toml), and the monthly fee of one cluster on a tier: pure functions.

The advisor charges the cheapest tier whose amount is known and names it, so "USD 0" on GKE is the free-tier credit
of one zonal cluster, said as such, not a missing fee. A bad row stops the load with the row that is wrong.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

FEES_PATH = Path(__file__).parent / "data" / "control_plane_fees.toml"
AMOUNTS = ("usd_per_hour", "usd_per_month", "monthly_credit_usd", "monthly_cap_usd")
KEYS = {"name", "name_zh", "note", "note_zh", "source_url", *AMOUNTS}


class FeeDataError(ValueError):
    pass


@dataclass(frozen=True)
class Tier:
    service: str
    name: str
    note: str
    source_url: str
    name_zh: str = ""
    note_zh: str = ""
    usd_per_hour: Decimal | None = None
    usd_per_month: Decimal | None = None
    monthly_credit_usd: Decimal = Decimal(0)
    monthly_cap_usd: Decimal | None = None

    def shown(self, language: str) -> tuple[str, str]:
        """(name, note) in the reader's language: the Chinese ones where the row has them."""
        if language.startswith("zh"):
            return self.name_zh or self.name, self.note_zh or self.note
        return self.name, self.note

    @property
    def priced(self) -> bool:
        return self.usd_per_hour is not None or self.usd_per_month is not None

    def monthly_usd(self, cluster_hours: Decimal) -> Decimal | None:
        """One cluster running `cluster_hours` a month: the hourly or monthly amount, capped, less the credit."""
        if not self.priced:
            return None
        fee = self.usd_per_month if self.usd_per_month is not None else self.usd_per_hour * cluster_hours
        if self.monthly_cap_usd is not None:
            fee = min(fee, self.monthly_cap_usd)
        return max(fee - self.monthly_credit_usd, Decimal(0))


def parse(data: dict, origin: str = "control_plane_fees.toml") -> dict[str, tuple[Tier, ...]]:
    out: dict[str, tuple[Tier, ...]] = {}
    for number, service in enumerate(data.get("service", []), start=1):
        where = f"{origin} service {number}"
        provider, name = service.get("provider"), service.get("name")
        if not provider or not name or provider in out:
            raise FeeDataError(f"{where}: needs a provider (once) and a name")
        tiers = []
        for tier_number, row in enumerate(service.get("tier", []), start=1):
            here = f"{where} tier {tier_number}"
            if set(row) - KEYS:
                raise FeeDataError(f"{here}: unknown keys {sorted(set(row) - KEYS)}")
            if not row.get("name") or not str(row.get("source_url", "")).startswith("https://"):
                raise FeeDataError(f"{here}: needs a name and an https source_url")
            try:
                amounts = {key: Decimal(row[key]) for key in AMOUNTS if key in row}
            except InvalidOperation as error:
                raise FeeDataError(f"{here}: an amount is not a number") from error
            if "usd_per_hour" in amounts and "usd_per_month" in amounts:
                raise FeeDataError(f"{here}: an amount per hour or per month, not both")
            if any(value < 0 for value in amounts.values()):
                raise FeeDataError(f"{here}: amounts cannot be negative")
            tiers.append(Tier(service=name, name=row["name"], note=row.get("note", ""), source_url=row["source_url"],
                              name_zh=row.get("name_zh", ""), note_zh=row.get("note_zh", ""), **amounts))
        if not any(tier.priced for tier in tiers):
            raise FeeDataError(f"{where}: no tier with an amount")
        out[provider] = tuple(tiers)
    return out


@functools.cache
def table() -> dict[str, tuple[Tier, ...]]:
    with FEES_PATH.open("rb") as handle:
        return parse(tomllib.load(handle))


def cheapest(provider_slug: str, cluster_hours: Decimal) -> tuple[Tier, Decimal, tuple[Tier, ...]] | None:
    """(the cheapest priced tier, its monthly fee, the provider's other tiers), or None when the table has no row
    for the provider."""
    tiers = table().get(provider_slug)
    if not tiers:
        return None
    best = min((tier for tier in tiers if tier.priced), key=lambda tier: tier.monthly_usd(cluster_hours))
    return best, best.monthly_usd(cluster_hours), tuple(tier for tier in tiers if tier is not best)
