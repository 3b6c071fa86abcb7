"""Normalisation in one place: GPU names onto the curated catalog, numbers to Decimal, regions onto countries and
continents, prices to USD per GPU-hour.

The GPU table is scrapers/data/gpus.toml and the region table scrapers/data/regions.toml: both curated, both with
sources. A name or region that the tables do not know stays unknown (and is counted by the caller), never guessed.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import cache
from pathlib import Path

GPU_CATALOG_PATH = Path(__file__).resolve().parent / "data" / "gpus.toml"
REGIONS_PATH = Path(__file__).resolve().parent / "data" / "regions.toml"

CENT = Decimal("0.00001")


# --- numbers -------------------------------------------------------------------------------------------------


def to_decimal(value: object) -> Decimal | None:
    """A price or size as Decimal; None for blanks. Floats go through str() so 0.1 stays 0.1."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        return value
    text = str(value).strip()
    if not text or text.lower() in {"nan", "none", "null"}:
        return None
    try:
        result = Decimal(text)
    except InvalidOperation as exc:
        raise ValueError(f"not a number: {value!r}") from exc
    if not result.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return result


def positive(value: object, what: str) -> Decimal:
    """A number that must be there and above zero (a price, a GPU count); a ValueError naming `what` otherwise."""
    number = to_decimal(value)
    if number is None or number <= 0:
        raise ValueError(f"{what} {value!r} is not a positive number")
    return number


def mib_to_gb(mib: object) -> Decimal | None:
    """MiB -> GB as marketed (81920 MiB -> 80, 143771 MiB -> 140.4): GPU memory is sold in GiB-ish units."""
    value = to_decimal(mib)
    if value is None:
        return None
    return (value / Decimal(1024)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def quantize_money(value: Decimal | None) -> Decimal | None:
    return None if value is None else value.quantize(CENT, rounding=ROUND_HALF_UP)


# --- GPU names -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GpuSpec:
    slug: str
    name: str
    vendor: str
    family: str
    architecture: str
    memory_gb: Decimal
    memory_type: str
    form_factor: str
    aliases: tuple[str, ...]
    mig_profiles: tuple[str, ...]
    mig_source_url: str
    source_url: str
    verified_on: date


GPU_REQUIRED = ("slug", "name", "vendor", "family", "architecture", "memory_gb", "form_factor", "source_url",
                "verified_on")
GPU_VENDORS = {"nvidia", "amd", "intel", "other"}


def name_key(name: str) -> str:
    """Spellings differ only by case, spaces, '-', '_' and '.': 'H100_SXM5' == 'h100 sxm5' == 'H100-SXM5'."""
    return re.sub(r"[\s\-_.]+", "", name).lower()


def parse_gpu_catalog(data: dict, origin: str = "gpus.toml") -> list[GpuSpec]:
    """Validate the catalog; raise ValueError naming the entry and the problem."""
    specs: list[GpuSpec] = []
    seen_slugs: set[str] = set()
    seen_aliases: dict[str, str] = {}
    for index, entry in enumerate(data.get("gpu", [])):
        where = f"{origin}: gpu #{index + 1} ({entry.get('slug', '?')})"
        missing = [key for key in GPU_REQUIRED if entry.get(key) in (None, "")]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        if entry["vendor"] not in GPU_VENDORS:
            raise ValueError(f"{where}: vendor must be one of {sorted(GPU_VENDORS)}")
        if not isinstance(entry["verified_on"], date):
            raise ValueError(f"{where}: verified_on must be a TOML date")
        if entry["slug"] in seen_slugs:
            raise ValueError(f"{where}: duplicate slug")
        seen_slugs.add(entry["slug"])
        mig = tuple(entry.get("mig_profiles", []))
        if mig and not entry.get("mig_source_url"):
            raise ValueError(f"{where}: mig_profiles need mig_source_url")
        aliases = tuple(entry.get("aliases", []))
        for alias in (entry["slug"], entry["name"], *aliases):
            key = name_key(alias)
            owner = seen_aliases.get(key)
            if owner is not None and owner != entry["slug"]:
                raise ValueError(f"{where}: alias {alias!r} already belongs to {owner}")
            seen_aliases[key] = entry["slug"]
        specs.append(
            GpuSpec(
                slug=entry["slug"],
                name=entry["name"],
                vendor=entry["vendor"],
                family=entry["family"],
                architecture=entry["architecture"],
                memory_gb=Decimal(str(entry["memory_gb"])),
                memory_type=entry.get("memory_type", ""),
                form_factor=entry["form_factor"],
                aliases=aliases,
                mig_profiles=mig,
                mig_source_url=entry.get("mig_source_url", ""),
                source_url=entry["source_url"],
                verified_on=entry["verified_on"],
            )
        )
    return specs


@cache
def gpu_catalog(path: Path = GPU_CATALOG_PATH) -> tuple[GpuSpec, ...]:
    with path.open("rb") as handle:
        return tuple(parse_gpu_catalog(tomllib.load(handle), origin=path.name))


class GpuResolver:
    """Maps a provider's GPU spelling (plus, when known, its memory) onto one catalog slug, or None."""

    def __init__(self, specs: tuple[GpuSpec, ...] | list[GpuSpec]):
        self.specs = {spec.slug: spec for spec in specs}
        self.by_name: dict[str, GpuSpec] = {}
        for spec in specs:
            for alias in (spec.slug, spec.name, *spec.aliases):
                self.by_name[name_key(alias)] = spec

    def resolve(self, name: str, memory_gb: Decimal | None = None, form_factor: str = "") -> str | None:
        """The catalog slug for a spelling; `form_factor` (sxm, pcie, nvl, from the instance name or the source)
        picks the family member of that form factor when the spelling left it unspecified ("H100" on an HGX
        board is the H100 SXM), so a filter on the variant finds the offer."""
        slug = self._resolve(name, memory_gb)
        if slug is None or not form_factor:
            return slug
        spec = self.specs[slug]
        if spec.form_factor != "unspecified":
            return slug
        wanted = memory_gb if memory_gb is not None else spec.memory_gb
        for other in self.specs.values():
            if other.family == spec.family and other.form_factor.lower() == form_factor \
                    and _close(other.memory_gb, wanted):
                return other.slug
        return slug

    def _resolve(self, name: str, memory_gb: Decimal | None = None) -> str | None:
        spec = self.by_name.get(name_key(name)) if name else None
        if spec is None:
            return None
        if memory_gb is not None and spec.memory_gb and not _close(spec.memory_gb, memory_gb):
            # The spelling named a sibling with other memory ("A100" reported with 80 GB): pick the family member
            # the memory says, preferring the one whose form factor is as unspecified as the spelling was.
            siblings = [
                other for other in self.specs.values()
                if other.family == spec.family and _close(other.memory_gb, memory_gb)
            ]
            siblings.sort(key=lambda other: other.form_factor != spec.form_factor)
            if siblings:
                return siblings[0].slug
            # No catalog entry has that memory: a variant the catalog does not know (an RTX 4090 with 48 GB is
            # not an RTX 4090), so it stays unknown rather than posing as the base model.
            return None
        return spec.slug


FORM_FACTOR_RE = re.compile(r"(?<![a-z])(sxm|pcie|nvl)(?!ink)", re.IGNORECASE)


def form_factor_in(*names: str) -> str:
    """sxm, pcie or nvl when an instance or GPU name spells it ("gpu_8x_h100_sxm5", "H100-PCIe", "H100 NVL";
    "NVLink" is a bridge, not the NVL form factor); "" when none does or they disagree."""
    found = {match.lower() for name in names for match in FORM_FACTOR_RE.findall(name or "")}
    return found.pop() if len(found) == 1 else ""


def _close(expected: Decimal, reported: Decimal) -> bool:
    return abs(expected - reported) <= expected * Decimal("0.10")


@dataclass(frozen=True, slots=True)
class SkuFacts:
    """What a provider's own size documentation says one instance type carries."""

    gpu_count: Decimal
    gpu_fraction: Decimal | None
    source_url: str


@cache
def sku_facts(provider: str) -> dict[str, SkuFacts]:
    """Instance type -> GPU facts from the provider's own size pages, for providers we keep such a table of (Azure:
    scrapers/azure.SIZES). The ingestion service corrects any source's row that contradicts them, with the reason."""
    if provider == "azure":
        from .azure import SIZES  # azure imports this module

        return {sku: SkuFacts(Decimal(size.gpu_count), size.gpu_fraction, size.source_url)
                for sku, size in SIZES.items()}
    return {}


@cache
def default_gpu_resolver() -> GpuResolver:
    return GpuResolver(gpu_catalog())


# --- geography -----------------------------------------------------------------------------------------------

# ISO 3166-1 alpha-2 -> continent code (AF AN AS EU NA OC SA), for the countries that GPU regions are in.
CONTINENT_OF_COUNTRY = {
    **dict.fromkeys("US CA MX".split(), "NA"),
    **dict.fromkeys("BR CL CO AR PE".split(), "SA"),
    **dict.fromkeys(
        "GB IE FR DE NL BE LU CH AT IT ES PT SE NO FI DK IS PL CZ SK HU RO BG HR SI RS GR EE LV LT UA".split(), "EU"
    ),
    **dict.fromkeys("CN HK TW JP KR SG IN ID MY TH VN PH IL AE SA QA TR KZ".split(), "AS"),
    **dict.fromkeys("AU NZ".split(), "OC"),
    **dict.fromkeys("ZA MA EG NG KE".split(), "AF"),
}
CONTINENTS = frozenset(CONTINENT_OF_COUNTRY.values())


# The continent code of a price its source ties to no region (RunPod's and Crusoe's price pages, Linode's type list,
# Oracle's price list): "global", shown and filtered as such, so no offer is without a location.
GLOBAL = "WW"


def names_no_region(region: str) -> bool:
    """Whether a source's region says nowhere in particular: blank, or "global" (a price tied to no region)."""
    return region.strip().lower() in ("", "global")


@dataclass(frozen=True, slots=True)
class Geography:
    country: str = ""
    continent: str = ""


@cache
def region_table(path: Path = REGIONS_PATH) -> dict[str, dict[str, str]]:
    with path.open("rb") as handle:
        return tomllib.load(handle)["regions"]


def region_geography(provider: str, region: str) -> Geography:
    """Country and continent of a provider's region from the curated table; blank when not known; the continent
    GLOBAL for a price the source ties to no region (a blank region, or "global").

    A table value is "US" (a country) or "continent:EU" (the region name states only the continent).
    Vast.ai-style regions ("Texas, US, NA", or "US, NA" for a host in no named state) carry their own country and
    continent.
    """
    value = region_table().get(provider, {}).get(region)
    if value is None:
        if names_no_region(region):
            return Geography("", GLOBAL)
        parts = [part.strip() for part in region.split(",")]
        country, continent = parts[-2:] if len(parts) in (2, 3) else ("", "")
        if len(country) == 2 and country.isupper() and continent in CONTINENTS:
            return Geography(country, continent)
        return Geography()
    if value.startswith("continent:"):
        return Geography("", value.split(":", 1)[1])
    return Geography(value, CONTINENT_OF_COUNTRY.get(value, ""))


# --- money ---------------------------------------------------------------------------------------------------


def to_usd(amount: Decimal | None, currency: str, per_eur: dict[str, Decimal]) -> Decimal | None:
    """Convert via the ECB's EUR reference rates (`per_eur[c]` = units of c per 1 EUR). None if no rate."""
    if amount is None:
        return None
    if currency == "USD":
        return quantize_money(amount)
    if currency == "EUR":
        eur = amount
    elif currency in per_eur:
        eur = amount / per_eur[currency]
    else:
        return None
    if "USD" not in per_eur:
        return None
    return quantize_money(eur * per_eur["USD"])


def per_gpu(amount: Decimal | None, gpu_count: Decimal) -> Decimal | None:
    if amount is None or not gpu_count:
        return None
    return quantize_money(amount / gpu_count)
