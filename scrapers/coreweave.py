"""CoreWeave GPU prices from the daily scrapes of https://coreweave.com/pricing kept by
PrashantSedhain/coreweave-pricing-tracker (data/YYYY-MM-DD.json; no licence file: facts from CoreWeave's page,
attributed). CoreWeave offers no price API, and its page is rendered by JavaScript.

Each file: `{"scrapeDate", "scrapedAt", "source", "regions": [{"name": "North America" | "Europe", "gpu": [{"model",
"gpuCount", "vramGB", "vcpus", "systemRAMGB", "onDemandPrice", "spotPrice", ...}]}]}`, numbers as strings or
numbers, prices per instance-hour in USD, null where the page lists none. One file is one edition
(base.EditionedClient): the bundled snapshot replays the 34 recorded days in date order, each day's offers dated by
its `scrapeDate`, so the price history is CoreWeave's own; a live run reads the newest recorded day's path again.

The page prints the GB200/GB300 NVL72 GPU count as "4" with footnote mark 1, which the scraper wrote as "4^1" in
early files and "41" later: the count is 4 (a 4-GPU node of the NVL72 rack), corrected with the reason recorded.
"HGX" boards are NVIDIA's SXM baseboards, so those models are SXM parts; NVL72 models are NVL.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import httpx

from .base import EditionedClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get_json
from .normalize import to_decimal
from .upstream import UpstreamFile

RECORDED = "coreweave"
REPO = "PrashantSedhain/coreweave-pricing-tracker"
COMMIT = "9b48aedcb25b7981a0b91f1fc1881eb1014397c7"  # 2026-08-22
EDITIONS = sorted(path.stem for path in (Path(__file__).resolve().parent / "recorded" / RECORDED).glob("*.json"))
FOOTNOTE_COUNT = re.compile(r"^(\d+)\^\d+$")
REQUIRED = ("model", "gpuCount", "onDemandPrice", "spotPrice")


def edition_file(edition: str) -> UpstreamFile:
    return UpstreamFile(REPO, COMMIT, f"data/{edition}.json", f"{edition}.json")


class CoreWeaveClient(EditionedClient):
    info = SourceInfo(slug="coreweave-tracker", provider="coreweave",
                      name="CoreWeave pricing page, daily scrapes (coreweave-pricing-tracker)", kind="catalog",
                      url=f"https://github.com/{REPO}/tree/{COMMIT}/data",
                      license="none stated: facts from https://coreweave.com/pricing, attributed", revision=COMMIT)

    def __init__(self, http: httpx.Client, api_key: str | None = None, edition: str | None = None):
        super().__init__(http, api_key)
        if edition is not None and edition not in EDITIONS:
            raise ValueError(f"no recorded CoreWeave edition {edition!r}")
        self.edition = edition or EDITIONS[-1]

    @classmethod
    def editions(cls) -> list[str]:
        return list(EDITIONS)

    recordings = {edition_file(day).raw_url: edition_file(day).recorded(RECORDED) for day in EDITIONS}

    def fetch(self) -> ScrapeResult:
        file = edition_file(self.edition)
        return parse_day(get_json(self.http, file.raw_url), file.blob_url)


def parse_day(data: object, url: str) -> ScrapeResult:
    if not isinstance(data, dict) or not isinstance(data.get("regions"), list):
        raise SchemaScrapeError("CoreWeave scrape: no 'regions' list (renamed or truncated?)")
    try:
        day = date.fromisoformat(str(data.get("scrapeDate")))
    except ValueError as exc:
        raise SchemaScrapeError(f"CoreWeave scrape: no readable 'scrapeDate' ({data.get('scrapeDate')!r})") from exc
    as_of = datetime(day.year, day.month, day.day, tzinfo=UTC)
    result = ScrapeResult(offers=[])
    for region in data["regions"]:
        if not isinstance(region, dict) or not isinstance(region.get("gpu"), list) or not region.get("name"):
            raise SchemaScrapeError("CoreWeave scrape: a region without 'name' and a 'gpu' list")
        for row in region["gpu"]:
            if not isinstance(row, dict) or any(key not in row for key in REQUIRED):
                raise SchemaScrapeError(f"CoreWeave scrape: a GPU row lacks one of {REQUIRED} (renamed fields?)")
            where = f"{row['model']} in {region['name']}"
            try:
                # A configuration the page lists without any price ("contact us": the GB300 NVL72 on every recorded
                # day) is kept: a machine CoreWeave sells, whose price is unknown (a price ceiling counts it as left
                # out).
                price, spot = _price(row["onDemandPrice"]), _price(row["spotPrice"])
                count = gpu_count(row, result)
                memory, vcpus, ram = (_number(row.get(key)) for key in ("vramGB", "vcpus", "systemRAMGB"))
            except ValueError as exc:
                result.rejected.append(f"{where}: {exc}")
                continue
            model = str(row["model"])
            result.offers.append(ScrapedOffer(
                instance_type=f"{model} x{count}", region=region["name"], gpu_name=gpu_name(model),
                gpu_count=Decimal(count), gpu_memory_gb=memory, vcpus=vcpus, ram_gb=ram, currency="USD",
                price_hour=price, spot_price_hour=spot, price_as_of=as_of, price_source_url=url,
                form_factor=form_factor(model),
            ))
    if not result.offers:
        raise SchemaScrapeError("CoreWeave scrape: no GPU row")
    return result


def gpu_count(row: dict, result: ScrapeResult) -> int:
    text = str(row["gpuCount"]).strip()
    footnoted = FOOTNOTE_COUNT.match(text)
    if footnoted:
        return int(footnoted.group(1))
    if "NVL72" in str(row["model"]) and text == "41":
        result.corrections.append(f"{row['model']}: gpuCount '41' is '4' with the page's footnote mark 1; stored 4")
        return 4
    if not text.isdigit() or int(text) <= 0:
        raise ValueError(f"GPU count {text!r}")
    return int(text)


def gpu_name(model: str) -> str:
    """'NVIDIA HGX H100' -> 'H100', 'NVIDIA GB200 NVL72' -> 'GB200': the catalog's spellings."""
    name = model.removeprefix("NVIDIA ").replace("HGX ", "").replace(" NVL72", "").strip()
    return name


def form_factor(model: str) -> str:
    if "NVL72" in model:
        return "nvl"
    if "HGX" in model:
        return "sxm"
    return ""


def _number(value: object) -> Decimal | None:
    if isinstance(value, str):
        value = value.replace(",", "")
    number = to_decimal(value)
    if number is not None and number <= 0:
        raise ValueError(f"{value!r} is not a positive number")
    return number


def _price(value: object) -> Decimal | None:
    return _number(value)


CLIENTS = {CoreWeaveClient.info.slug: CoreWeaveClient}
