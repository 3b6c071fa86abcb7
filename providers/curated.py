"""Reads and validates the curated provider files (providers/data/providers/*.toml, format in providers/data/README.md).

Validation is strict because these cells are the product: a cell without a source, a date or an allowed value is
refused with an error naming the file, the key and the problem, before anything is written.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from .capabilities import QUESTIONS, UNKNOWN, allowed_values
from .kubernetes import Fact

DATA_DIR = Path(__file__).resolve().parent / "data"
PROVIDERS_DIR = DATA_DIR / "providers"

KINDS = {"hyperscaler", "gpu_cloud", "marketplace", "regional_cloud"}
CONFIDENCES = {"documented", "third_party", "inferred"}
SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CELL_FIELDS = {"value", "label", "detail", "label_zh", "detail_zh", "source_url", "verified_on", "confidence", "amount",
               "currency"}


class CuratedDataError(ValueError):
    """A curated file breaks the rules; the message names the file, the key and the problem."""


@dataclass(frozen=True)
class CapabilityRecord:
    key: str
    value: str
    label: str = ""
    detail: str = ""
    label_zh: str = ""
    detail_zh: str = ""
    source_url: str = ""
    verified_on: date | None = None
    confidence: str = ""
    amount: Decimal | None = None
    currency: str = ""


@dataclass(frozen=True)
class ProviderRecord:
    slug: str
    name: str
    name_zh: str
    website: str
    kind: str
    headquarters: str
    capabilities: dict[str, CapabilityRecord] = field(default_factory=dict)


def parse_provider(data: dict, origin: str, today: date | None = None) -> ProviderRecord:
    today = today or date.today()

    def fail(message: str) -> CuratedDataError:
        return CuratedDataError(f"{origin}: {message}")

    for required in ("slug", "name", "website", "kind", "headquarters"):
        if not isinstance(data.get(required), str) or not data[required].strip():
            raise fail(f"'{required}' is required")
    if not SLUG_RE.match(data["slug"]):
        raise fail(f"slug {data['slug']!r} must be lowercase letters, digits and dashes")
    if data["kind"] not in KINDS:
        raise fail(f"kind {data['kind']!r} must be one of {sorted(KINDS)}")
    if not re.fullmatch(r"[A-Z]{2}", data["headquarters"]):
        raise fail("headquarters must be an ISO 3166-1 alpha-2 code such as 'US'")
    if not data["website"].startswith(("https://", "http://")):
        raise fail("website must be an http(s) URL")
    return ProviderRecord(
        slug=data["slug"],
        name=data["name"],
        name_zh=data.get("name_zh", "") or "",
        website=data["website"],
        kind=data["kind"],
        headquarters=data["headquarters"],
        capabilities={key: _capability(key, cell, fail, today)
                      for key, cell in (data.get("capabilities") or {}).items()},
    )


def _capability(key: str, cell, fail, today: date) -> CapabilityRecord:
    """One capability cell of a provider file, validated: a known question, known fields, a translation only beside
    its text, an allowed value with its provenance, and an amount where the control-plane fee needs one."""
    where = f"capability '{key}'"
    if key not in QUESTIONS:
        raise fail(f"{where} is not a known question (known: {', '.join(QUESTIONS)})")
    if not isinstance(cell, dict):
        raise fail(f"{where} must be a table")
    extra = set(cell) - CELL_FIELDS
    if extra:
        raise fail(f"{where} has unknown fields {sorted(extra)}")
    for name in ("label", "detail"):
        translation = cell.get(f"{name}_zh", "")
        if not isinstance(translation, str):
            raise fail(f"{where} {name}_zh must be text")
        if translation and not cell.get(name):
            raise fail(f"{where} has {name}_zh but no {name}: a translation needs the text it translates")
    value = cell.get("value")
    if value not in allowed_values(key):
        raise fail(f"{where} value {value!r} must be one of {list(allowed_values(key))}")
    source_url = cell.get("source_url", "")
    verified_on = cell.get("verified_on")
    confidence = cell.get("confidence", "")
    provenance_check(fail, where, value, source_url, verified_on, confidence, today=today)
    amount = _amount(cell, fail, where)
    if key == "control_plane_fee" and value == "paid" and amount is None:
        raise fail(f"{where} = 'paid' needs the amount per cluster-hour (or 'paid_unstated' when the source "
                   "says it is paid without an amount)")
    if key == "control_plane_fee" and value == "paid_unstated" and amount is not None:
        raise fail(f"{where} = 'paid_unstated' must not carry an amount: use 'paid' with the amount")
    return CapabilityRecord(
        key=key,
        value=value,
        label=cell.get("label", ""),
        detail=cell.get("detail", ""),
        label_zh=cell.get("label_zh", ""),
        detail_zh=cell.get("detail_zh", ""),
        source_url=source_url or "",
        verified_on=verified_on if isinstance(verified_on, date) else None,
        confidence=confidence or "",
        amount=amount,
        currency=cell.get("currency", "") if amount is not None else "",
    )


def _amount(cell: dict, fail, where: str) -> Decimal | None:
    """A cell's amount (not negative, with an ISO 4217 currency), or None when it states none."""
    if cell.get("amount") in (None, ""):
        return None
    try:
        amount = Decimal(str(cell["amount"]))
    except InvalidOperation as exc:
        raise fail(f"{where} amount {cell['amount']!r} is not a number") from exc
    if amount < 0:
        raise fail(f"{where} amount must not be negative")
    if not re.fullmatch(r"[A-Z]{3}", cell.get("currency", "")):
        raise fail(f"{where} amount needs an ISO 4217 currency")
    return amount


def toml_files(directory: Path):
    """(path, data) of each TOML file of a curated directory, in name order; a file that is not TOML is an error."""
    for path in sorted(directory.glob("*.toml")):
        try:
            with path.open("rb") as handle:
                yield path, tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise CuratedDataError(f"{path.name}: not valid TOML: {exc}") from exc


def load_providers(directory: Path = PROVIDERS_DIR) -> list[ProviderRecord]:
    records = []
    for path, data in toml_files(directory):
        record = parse_provider(data, origin=path.name)
        if record.slug != path.stem:
            raise CuratedDataError(f"{path.name}: slug {record.slug!r} must match the file name")
        records.append(record)
    return records


# --- instance types: providers/data/instance_types/<provider>.toml ----------------------------------------------

INSTANCE_TYPES_DIR = DATA_DIR / "instance_types"
FACT_FIELDS = {"value", "number", "interfaces", "bandwidth_gbps", "gpudirect_rdma", "detail", "detail_zh",
               "source_url", "verified_on", "confidence"}
FABRIC_FIELDS = ("interfaces", "bandwidth_gbps", "gpudirect_rdma")
TYPE_FIELDS = {"match", "note"}
FILE_ORIGINS = {"curated", "catalog"}


@dataclass(frozen=True)
class InstanceTypeFile:
    provider: str
    origin: str
    facts: list[Fact]


def parse_instance_types(data: dict, origin: str, today: date | None = None) -> InstanceTypeFile:
    """Validate one instance-type file with the same rules as a capability cell: every fact other than `unknown`
    needs its source URL, a verified date (not in the future) and a confidence; values come from
    providers.kubernetes.FACT_VALUES; `gpu_count`, `gpu_share` and `gpu_memory_gb` are numbers; a fabric fact may
    state `interfaces` and `bandwidth_gbps`, and EFA states `gpudirect_rdma` (see _fabric_fields)."""
    from .kubernetes import FACT_VALUES, NUMERIC_FACTS

    today = today or date.today()

    def fail(message: str) -> CuratedDataError:
        return CuratedDataError(f"{origin}: {message}")

    provider = data.get("provider")
    if not isinstance(provider, str) or not SLUG_RE.match(provider):
        raise fail("'provider' is required: the provider's slug")
    file_origin = data.get("origin", "curated")
    if file_origin not in FILE_ORIGINS:
        raise fail(f"origin {file_origin!r} must be one of {sorted(FILE_ORIGINS)}")
    extra = set(data) - {"provider", "origin", "types", "source"}
    if extra:
        raise fail(f"unknown top-level fields {sorted(extra)}")
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    for index, entry in enumerate(data.get("types") or []):
        where = f"types[{index}]"
        if not isinstance(entry, dict):
            raise fail(f"{where} must be a table")
        patterns = entry.get("match")
        if (not isinstance(patterns, list) or not patterns
                or not all(isinstance(p, str) and p.strip() and len(p) <= 120 for p in patterns)):
            raise fail(f"{where} needs 'match': a list of instance types or patterns")
        keys = set(entry) - TYPE_FIELDS
        unknown_keys = keys - set(FACT_VALUES)
        if unknown_keys:
            raise fail(f"{where} has unknown facts {sorted(unknown_keys)} (known: {', '.join(FACT_VALUES)})")
        for key in sorted(keys):
            cell = entry[key]
            at = f"{where} {key}"
            if not isinstance(cell, dict):
                raise fail(f"{at} must be a table")
            if set(cell) - FACT_FIELDS:
                raise fail(f"{at} has unknown fields {sorted(set(cell) - FACT_FIELDS)}")
            value, number = cell.get("value"), None
            if key in NUMERIC_FACTS:
                value, number = _numeric_fact(fail, at, key, cell)
            elif value not in FACT_VALUES[key]:
                raise fail(f"{at} value {value!r} must be one of {list(FACT_VALUES[key])}")
            elif "number" in cell:
                raise fail(f"{at}: only a numeric fact ({', '.join(NUMERIC_FACTS)}) takes a number")
            fabric = _fabric_fields(fail, at, key, value, cell, catalog=file_origin == "catalog")
            source_url, verified_on = cell.get("source_url", ""), cell.get("verified_on")
            confidence = cell.get("confidence", "")
            provenance_check(fail, at, value, source_url, verified_on, confidence, today=today)
            for pattern in patterns:
                if (pattern, key) in seen:
                    raise fail(f"{where}: {pattern!r} states {key} twice in this file")
                seen.add((pattern, key))
                facts.append(Fact(
                    pattern=pattern, key=key, value=value, number=number, detail=cell.get("detail", ""),
                    detail_zh=cell.get("detail_zh", ""),
                    source_url=source_url or "", verified_on=verified_on if isinstance(verified_on, date) else None,
                    confidence=confidence or "", **fabric,
                ))
    return InstanceTypeFile(provider=provider, origin=file_origin, facts=facts)


def _numeric_fact(fail, at: str, key: str, cell: dict) -> tuple[str, Decimal]:
    """A numeric fact's number, written `number = 80` or `value = 80` (not both, unless equal)."""
    given = [cell[name] for name in ("number", "value") if name in cell]
    if not given or any(isinstance(item, bool) or not isinstance(item, int | float) for item in given):
        raise fail(f"{at} needs a number (`number = ...`)")
    if len(given) == 2 and given[0] != given[1]:
        raise fail(f"{at} states two different numbers ({given[0]} and {given[1]})")
    number = Decimal(str(given[0]))
    if number <= 0 or (key == "gpu_share" and number > 1):
        raise fail(f"{at} value {given[0]} is out of range")
    return str(number.normalize()), number


def _fabric_fields(fail, at: str, key: str, value, cell: dict, *, catalog: bool) -> dict:
    """A fabric fact's interface count (a positive whole number), total bandwidth in Gbit/s (a positive number) and,
    for EFA only, `gpudirect_rdma` (true/false: whether AWS's EFA page lists the type as supporting GPUDirect RDMA).
    `gpudirect_rdma` is required on EFA, except in a catalog file (Karpenter's table states the EFA count but not
    GPUDirect RDMA): there it may be left out, and the fabric's class stays unknown."""
    stated = [name for name in FABRIC_FIELDS if name in cell]
    if key != "fabric":
        if stated:
            raise fail(f"{at}: only a fabric fact takes {', '.join(stated)}")
        return {}
    fields: dict = {}
    if "interfaces" in cell:
        count = cell["interfaces"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise fail(f"{at} interfaces must be a positive whole number")
        fields["interfaces"] = count
    if "bandwidth_gbps" in cell:
        speed = cell["bandwidth_gbps"]
        if isinstance(speed, bool) or not isinstance(speed, int | float) or speed <= 0:
            raise fail(f"{at} bandwidth_gbps must be a positive number (Gbit/s for the whole node)")
        fields["bandwidth_gbps"] = Decimal(str(speed))
    if "gpudirect_rdma" in cell:
        if value != "efa":
            raise fail(f"{at}: only fabric = 'efa' takes gpudirect_rdma (the other kinds' class follows from the "
                       "kind)")
        if not isinstance(cell["gpudirect_rdma"], bool):
            raise fail(f"{at} gpudirect_rdma must be true or false")
        fields["gpudirect_rdma"] = cell["gpudirect_rdma"]
    elif value == "efa" and not catalog:
        raise fail(f"{at} = 'efa' needs gpudirect_rdma = true|false: whether AWS's EFA page lists the type as "
                   "supporting GPUDirect RDMA (cite that page)")
    return fields


def load_instance_types(directory: Path = INSTANCE_TYPES_DIR) -> list[InstanceTypeFile]:
    files = []
    for path, data in toml_files(directory):
        parsed = parse_instance_types(data, origin=path.name)
        if not path.stem.startswith(parsed.provider):
            raise CuratedDataError(f"{path.name}: provider {parsed.provider!r} must start the file name")
        files.append(parsed)
    return files


def provenance_check(fail, where: str, value, source_url, verified_on, confidence, *, today: date) -> None:
    """The rule every published fact follows, a provider cell or an instance-type fact: a known value needs its
    source URL, the date it was verified (never in the future) and a confidence."""
    if value != UNKNOWN:
        if not isinstance(source_url, str) or not source_url.startswith(("https://", "http://")):
            raise fail(f"{where} = {value!r} has no source_url: every published fact needs its source")
        if not isinstance(verified_on, date):
            raise fail(f"{where} = {value!r} has no verified_on date (a TOML date such as 2026-12-01)")
        if confidence not in CONFIDENCES:
            raise fail(f"{where} confidence {confidence!r} must be one of {sorted(CONFIDENCES)}")
    if isinstance(verified_on, date) and verified_on > today:
        raise fail(f"{where} verified_on {verified_on} is in the future")
