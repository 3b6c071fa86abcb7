"""How a buyer gets a provider's GPU machines beyond on-demand rental: the quota to raise first, capacity
reservations, GPU blocks booked for a date, and queued capacity, each a sourced entry of providers/data/capacity.toml.
Read once per process; the provider page and the API's provider detail show them, and a provider without entries is
"not researched yet", never "none"."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path

from django.utils.translation import gettext_lazy as _

CAPACITY_FILE = Path(__file__).resolve().parent / "data" / "capacity.toml"

KINDS = {
    "quota": _("Quota to raise before launching"),
    "reservation": _("Capacity reservation"),
    "capacity_block": _("GPU block booked for a date"),
    "queued": _("Queued until all the capacity is free"),
}


class CapacityFileError(ValueError):
    """providers/data/capacity.toml breaks its format (the message names the entry and the problem)."""


@dataclass(frozen=True, slots=True)
class Way:
    provider: str
    kind: str
    name: str
    name_zh: str
    detail: str
    detail_zh: str
    source_url: str
    verified_on: date

    def as_dict(self) -> dict:
        return {"kind": self.kind, "kind_label": str(KINDS[self.kind]), "name": self.name, "name_zh": self.name_zh,
                "detail": self.detail, "detail_zh": self.detail_zh, "source_url": self.source_url,
                "verified_on": self.verified_on.isoformat()}


def load(path: Path = CAPACITY_FILE) -> dict[str, list[Way]]:
    """Every provider's ways, in the file's order. Raises CapacityFileError for an entry that is not sourced."""
    with path.open("rb") as handle:
        entries = tomllib.load(handle).get("ways", [])
    ways: dict[str, list[Way]] = {}
    for index, entry in enumerate(entries, start=1):
        where = f"{path.name} entry {index} ({entry.get('provider', '?')} {entry.get('name', '?')})"
        try:
            way = Way(**entry)
        except TypeError as exc:
            raise CapacityFileError(f"{where}: {exc}") from exc
        if way.kind not in KINDS:
            raise CapacityFileError(f"{where}: kind {way.kind!r} is not one of {sorted(KINDS)}")
        if not way.source_url.startswith("https://") or not isinstance(way.verified_on, date):
            raise CapacityFileError(f"{where}: needs an https source_url and a verified_on date")
        if not all((way.name, way.name_zh, way.detail, way.detail_zh)):
            raise CapacityFileError(f"{where}: name and detail are needed in English and Chinese")
        ways.setdefault(way.provider, []).append(way)
    return ways


@cache
def ways_by_provider() -> dict[str, list[Way]]:
    return load()


def provider_ways(slug: str) -> list[Way]:
    """A provider's ways in the order a buyer meets them: the quota first, then reservations, blocks, queues."""
    order = list(KINDS)
    return sorted(ways_by_provider().get(slug, []), key=lambda way: order.index(way.kind))
