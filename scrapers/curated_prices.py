"""Curated price tables: GPU prices that providers publish only on their websites, transcribed by hand.

Some providers (the Chinese clouds, CoreWeave) expose no price API we can use and render their price pages with
JavaScript, so a parser of their HTML would break silently. Instead a reviewer reads the page and writes what it
says into `scrapers/data/prices/<provider>.toml` with the page URL and the date it was read (format in
scrapers/data/prices/README.md). Each file is one source of kind "curated" (`curated-<provider>`), fed
through the same ingestion path as an API (`providers.runs.source_scrape`), so CNY prices are converted with
the latest ECB rate like any other.

`fetch()` never makes a request: the TOML *is* the recorded payload of the page, which is why `recorded()` maps
the page URL to the file (the registry's replay test then covers these sources too). A file that breaks a rule
raises `CuratedPriceError` naming the file, the row and the problem; the run fails and the stored offers stay.
"""

from __future__ import annotations

import logging
import re
import tomllib
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import ClassVar

from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .normalize import to_decimal

logger = logging.getLogger(__name__)

PRICES_DIR = Path(__file__).resolve().parent / "data" / "prices"

# Currencies a curated price may be written in: the ones the product shows and the ECB file converts.
CURRENCIES = {"USD", "EUR", "CNY"}
FILE_FIELDS = {"provider", "source_url", "verified_on", "as_of", "currency", "offer"}
ROW_FIELDS = {
    "instance_type", "region", "gpu_name", "gpu_count", "gpu_memory_gb", "vcpus", "ram_gb", "price_hour",
    "spot_price_hour", "currency", "source_url", "verified_on", "as_of", "note", "gpu_fraction",
}
NOT_STATED = "not stated"
SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class CuratedPriceError(SchemaScrapeError):
    """A curated price file breaks a rule; the message names the file, the row and the problem."""


def parse_price_file(data: dict, origin: str, today: date | None = None) -> list[ScrapedOffer]:
    """Validate one provider's price table and return its offers (prices per instance-hour, source currency).

    Every row needs a source URL and a read date (its own or the file's), a positive on-demand price, a known
    currency and a positive GPU count; a spot price is optional. Rows are refused, never guessed at.
    """
    today = today or date.today()

    def fail(message: str) -> CuratedPriceError:
        return CuratedPriceError(f"{origin}: {message}")

    extra = set(data) - FILE_FIELDS
    if extra:
        raise fail(f"unknown top-level fields {sorted(extra)}")
    provider = data.get("provider")
    if not isinstance(provider, str) or not SLUG_RE.match(provider):
        raise fail("'provider' must be the provider's slug (lowercase letters, digits and dashes)")
    rows = data.get("offer")
    if not isinstance(rows, list) or not rows:
        raise fail("no [[offer]] rows")

    offers: list[ScrapedOffer] = []
    seen: set[tuple[str, str]] = set()
    for number, row in enumerate(rows, start=1):
        where = f"row {number} ({row.get('instance_type', '?')})" if isinstance(row, dict) else f"row {number}"
        if not isinstance(row, dict):
            raise fail(f"{where} must be a table")
        unknown = set(row) - ROW_FIELDS
        if unknown:
            raise fail(f"{where} has unknown fields {sorted(unknown)}")
        _check_provenance(row, data, where, today, fail)
        for key in ("instance_type", "gpu_name"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise fail(f"{where}: '{key}' is required")
        if not isinstance(row.get("region"), str):
            raise fail(f"{where}: 'region' is required (\"\" when the page ties the price to no region)")
        as_of = _as_of(row.get("as_of", data.get("as_of")), row.get("verified_on", data.get("verified_on")),
                       where, today, fail)
        currency = row.get("currency", data.get("currency"))
        if currency not in CURRENCIES:
            raise fail(f"{where}: currency {currency!r} is not one of {sorted(CURRENCIES)}")
        gpu_count = _number(row, "gpu_count", where, fail)
        if gpu_count is None or gpu_count <= 0:
            raise fail(f"{where}: gpu_count must be a number > 0")
        fraction = _number(row, "gpu_fraction", where, fail)
        if fraction is not None and not (0 < fraction < 1 and gpu_count == fraction):
            raise fail(f"{where}: gpu_fraction must be a share of one GPU (between 0 and 1) and equal gpu_count")
        price = _number(row, "price_hour", where, fail)
        if price is None or price <= 0:
            raise fail(f"{where}: price_hour must be a price > 0 (per instance-hour)")
        spot = _number(row, "spot_price_hour", where, fail)
        if spot is not None and spot <= 0:
            raise fail(f"{where}: spot_price_hour must be > 0 when given (leave it out when the page states none)")
        sizes = {key: _number(row, key, where, fail) for key in ("gpu_memory_gb", "vcpus", "ram_gb")}
        for key, value in sizes.items():
            if value is not None and value <= 0:
                raise fail(f"{where}: {key} must be > 0 when given")
        key = (row["instance_type"].strip(), row["region"].strip())
        if key in seen:
            raise fail(f"{where}: duplicate instance_type and region {key}")
        seen.add(key)
        offers.append(
            ScrapedOffer(
                instance_type=key[0],
                region=key[1],
                gpu_name=row["gpu_name"].strip(),
                gpu_count=gpu_count,
                currency=currency,
                price_hour=price,
                spot_price_hour=spot,
                gpu_memory_gb=sizes["gpu_memory_gb"],
                gpu_fraction=fraction,
                vcpus=sizes["vcpus"],
                ram_gb=sizes["ram_gb"],
                price_as_of=as_of,
            )
        )
    return offers


def _as_of(value, verified_on: date, where: str, today: date, fail) -> datetime | None:
    """The date the prices held: `as_of` when the table states one (a transcription of a dated file), None when
    it is "not stated" (an undated catalog), else the day the page was read (`verified_on`)."""
    if value == NOT_STATED:
        return None
    if value is None:
        value = verified_on
    if not isinstance(value, date) or isinstance(value, datetime):
        raise fail(f"{where}: as_of must be a TOML date or {NOT_STATED!r}")
    if value > today:
        raise fail(f"{where}: as_of {value} is in the future")
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def _check_provenance(row: dict, data: dict, where: str, today: date, fail) -> None:
    source_url = row.get("source_url", data.get("source_url"))
    verified_on = row.get("verified_on", data.get("verified_on"))
    if not isinstance(source_url, str) or not source_url.startswith(("https://", "http://")):
        raise fail(f"{where}: no source_url (the page the price was read on), neither on the row nor the file")
    if not isinstance(verified_on, date) or isinstance(verified_on, bool):
        raise fail(f"{where}: no verified_on date (a TOML date such as 2026-11-29), neither on the row nor the file")
    if verified_on > today:
        raise fail(f"{where}: verified_on {verified_on} is in the future")


def _number(row: dict, key: str, where: str, fail) -> Decimal | None:
    value = row.get(key)
    if isinstance(value, bool):
        raise fail(f"{where}: {key} {value!r} is not a number")
    try:
        return to_decimal(value)
    except ValueError as exc:
        raise fail(f"{where}: {key} {value!r} is not a number") from exc


def load_price_file(path: Path, today: date | None = None) -> list[ScrapedOffer]:
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise CuratedPriceError(f"{path.name}: file missing") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CuratedPriceError(f"{path.name}: not valid TOML: {exc}") from exc
    offers = parse_price_file(data, origin=path.name, today=today)
    if data["provider"] != path.stem:
        raise CuratedPriceError(f"{path.name}: provider {data['provider']!r} must match the file name")
    return offers


class CuratedPriceClient(ProviderClient):
    """Base for one provider's curated table; subclasses set `info` (url = the page the prices were read on). It is
    handed an httpx client like every source, and never uses it."""

    info: ClassVar[SourceInfo]

    @classmethod
    def path(cls) -> Path:
        return PRICES_DIR / f"{cls.info.provider}.toml"

    @classmethod
    def recorded(cls) -> dict[str, Path]:
        return {cls.info.url: cls.path()}

    def fetch(self) -> ScrapeResult:
        offers = load_price_file(self.path())
        logger.info("curated prices %s: %s rows from %s", self.info.slug, len(offers), self.path().name)
        return ScrapeResult(offers=offers)


def _client(provider: str, name: str, url: str) -> type[CuratedPriceClient]:
    info = SourceInfo(slug=f"curated-{provider}", provider=provider, name=name, kind="curated", url=url)
    class_name = f"Curated{provider.title().replace('-', '')}Prices"
    return type(class_name, (CuratedPriceClient,), {"info": info, "__module__": __name__})


# One entry per file in scrapers/data/prices/ (a test checks both lists agree and that each URL is the file's).
# Providers whose prices no stored page states are absent on purpose: CoreWeave, Huawei Cloud, Volcano Engine and
# others (see scrapers/data/prices/README.md).
CLIENTS: dict[str, type[CuratedPriceClient]] = {
    client.info.slug: client
    for client in (
        _client(
            "alibaba",
            "Alibaba Cloud PAI published GPU prices (curated)",
            "https://help.aliyun.com/zh/pai/product-overview/billing-of-machine-learning-designer-2",
        ),
        _client(
            "baidu",
            "Baidu AI Cloud BML published GPU prices (curated)",
            "https://cloud.baidu.com/doc/BML/s/0khemrtv0",
        ),
        _client(
            "tencent",
            "Tencent Cloud GPU instance prices from Tencent's documentation repository (curated, 2023)",
            "https://github.com/tencentyun/intlcloud-documents/blob/b7e17ea691c4ad7ae878e00e9d6dc37ff7ae1f1c/yehe_doc/%E8%AE%A1%E7%AE%97/GPU%20%E4%BA%91%E6%9C%8D%E5%8A%A1%E5%99%A8/%E8%B4%AD%E4%B9%B0%E6%8C%87%E5%8D%97/%E4%BB%B7%E6%A0%BC%E6%80%BB%E8%A7%88_intl_en.md",
        ),
        # Transcriptions of other projects' tables (issue 13), each with the date its table states.
        _client(
            "crusoe",
            "Crusoe per-GPU prices as gpuhunt hardcodes them (transcribed)",
            "https://github.com/dstackai/gpuhunt/blob/35841515de3792fe6be73b0422ac8901b6b929c8/src/gpuhunt/providers/crusoe.py",
        ),
        _client(
            "scaleway",
            "Scaleway GPU instances from SkyPilot's v6 catalog (transcribed, EUR)",
            "https://github.com/skypilot-org/skypilot-catalog/blob/1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a/catalogs/v6/scaleway/vms.csv",
        ),
        _client(
            "ovhcloud",
            "OVHcloud GPU instances from SkyPilot's v6 catalog (transcribed, USD)",
            "https://github.com/skypilot-org/skypilot-catalog/blob/8a258f54/catalogs/v6/ovhcloud/vms.csv",
        ),
        _client(
            "genesis-cloud",
            "Genesis Cloud per-GPU prices from cloud-gpus.com's data file (transcribed)",
            "https://github.com/cloud-gpus/cloud-gpus.github.io/blob/61a3021dc038656be36727fa0d2f019db2c18346/cloud_gpu.json",
        ),
        _client(
            "ibm",
            "IBM Cloud gx2 V100 servers from SkyPilot's v5 catalog (transcribed)",
            "https://github.com/skypilot-org/skypilot-catalog/blob/6cd128a5/catalogs/v5/ibm/vms.csv",
        ),
    )
}
