"""The open dataset: a dated dump of every active offer with its per-offer Kubernetes answers and their sources, as
JSON and CSV (schema: exports/schemas/dataset-offers.schema.json), written once a day (exports.tasks.dataset_write,
the beat table) under settings.DATASET_DIR as offers-<date>.json / .csv and served at /api/v1/dataset/.

Licences and terms, per source (stated in every dump): a source published under an open licence (Apache-2.0, MIT,
MPL-2.0, CC-BY, CC0) is redistributed in full, with attribution. A source without one (a provider's API or price
page, a third-party scrape that states none) is only linked: its offers are in the dump with what they are and our
Kubernetes answers (our own work), but their prices are left empty (`price_withheld: true`) and the source URL is
given instead. The Kubernetes answers cite the pages they rest on; they are our wording and are redistributed.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from providers.kubernetes import QUESTIONS
from providers.models import DataSource, Offer
from providers.renderers import FORMULA_PREFIXES
from providers.selectors import kubernetes_answers_of

from .machines import product_version

OPEN_LICENCES = re.compile(r"\b(Apache-2\.0|MIT|MPL-2\.0|CC-BY[-0-9.A-Z]*|CC0[-0-9.]*)\b")
SCHEMA_FILE = Path(__file__).parent / "schemas" / "dataset-offers.schema.json"
FILE_NAME = re.compile(r"^offers-(\d{4}-\d{2}-\d{2})\.(json|csv)$")
OFFER_FIELDS = ("id", "provider", "source", "instance_type", "region", "country", "gpu", "gpu_name", "gpu_count",
                "gpu_memory_gb", "vcpus", "ram_gb", "price_hour_usd", "spot_price_hour_usd", "price_as_of",
                "last_seen", "price_withheld")
CSV_COLUMNS = (*OFFER_FIELDS, *(f"k8s_{q}" for q in QUESTIONS), *(f"k8s_{q}_sources" for q in QUESTIONS))
CHUNK = 2000
LICENCE_NOTE = (
    "A source published under an open licence (Apache-2.0, MIT, MPL-2.0, CC-BY, CC0) is redistributed in full, with "
    "attribution (see sources[].licence). A source without one is only linked: its offers are listed with our "
    "Kubernetes answers (our own work, each citing its sources) but their prices are withheld (price_withheld: true);"
    " read them at the source's URL.")


def redistributable(licence: str) -> bool:
    return bool(OPEN_LICENCES.search(licence or ""))


def dataset_dir() -> Path:
    return Path(getattr(settings, "DATASET_DIR", settings.BASE_DIR / "var" / "dataset"))


def source_terms() -> list[dict]:
    """Every source with offers: its licence as recorded and whether its prices are redistributed or only linked."""
    terms = []
    for source in DataSource.objects.filter(offers__is_active=True).distinct().order_by("slug"):
        shared = redistributable(source.license)
        terms.append({"slug": source.slug, "name": source.name, "url": source.url,
                      "licence": source.license or "none stated", "redistributed": shared,
                      "terms": "redistributed with attribution" if shared else
                      "linked only: prices withheld, see the source"})
    return terms


def _number(value: Decimal | None):
    return None if value is None else float(value)


def _when(value) -> str | None:
    return None if value is None else value.isoformat()


def offer_records() -> Iterator[dict]:
    """Every active offer as a dataset record, read in chunks (constant memory at any size)."""
    shared = {slug: redistributable(licence)
              for slug, licence in DataSource.objects.values_list("slug", "license")}
    rows = (Offer.objects.filter(is_active=True).order_by("id")
            .values("id", "provider__slug", "source__slug", "instance_type", "region", "country", "gpu__slug",
                    "gpu_name", "gpu_count", "gpu_memory_gb", "vcpus", "ram_gb", "price_hour_usd",
                    "spot_price_hour_usd", "price_as_of", "last_seen", "kubernetes_profile__answers"))
    for row in rows.iterator(chunk_size=CHUNK):
        withheld = not shared.get(row["source__slug"], False)
        answers = kubernetes_answers_of(row["kubernetes_profile__answers"])
        yield {
            "id": row["id"], "provider": row["provider__slug"], "source": row["source__slug"],
            "instance_type": row["instance_type"], "region": row["region"], "country": row["country"],
            "gpu": row["gpu__slug"], "gpu_name": row["gpu_name"], "gpu_count": _number(row["gpu_count"]),
            "gpu_memory_gb": _number(row["gpu_memory_gb"]), "vcpus": _number(row["vcpus"]),
            "ram_gb": _number(row["ram_gb"]),
            "price_hour_usd": None if withheld else _number(row["price_hour_usd"]),
            "spot_price_hour_usd": None if withheld else _number(row["spot_price_hour_usd"]),
            "price_as_of": _when(row["price_as_of"]), "last_seen": _when(row["last_seen"]),
            "price_withheld": withheld,
            "kubernetes": {question: {"answer": answers[question].state, "sources": answers[question].sources,
                                      "inferred": answers[question].inferred,
                                      "confidence": answers[question].confidence} for question in QUESTIONS},
        }


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    # Text a spreadsheet would run as a formula gets a leading quote, as the API's CSV does (providers.renderers).
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) else value


def _csv_row(record: dict) -> list:
    row = [_cell(record[name]) for name in OFFER_FIELDS]
    row += [record["kubernetes"][q]["answer"] for q in QUESTIONS]
    row += [";".join(record["kubernetes"][q]["sources"]) for q in QUESTIONS]
    return row


def dataset_write(*, day: date | None = None, directory: Path | None = None) -> tuple[Path, Path, int]:
    """Write offers-<day>.json and .csv (to a temporary name first, then renamed: a reader never sees half a
    file, and a failed run leaves the previous dump in place). Returns both paths and the number of offers."""
    now = timezone.now()
    day = day or now.date()
    directory = directory or dataset_dir()
    directory.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = directory / f"offers-{day}.json", directory / f"offers-{day}.csv"
    head = {"dataset": "gpu-k8s-comparator active GPU offers with Kubernetes answers", "date": str(day),
            "generated_at": now.isoformat(), "product_version": product_version(),
            "schema": "/api/v1/dataset/schema.json",
            "licence_note": LICENCE_NOTE,
            "sources": source_terms()}
    count = 0
    temporary = [Path(f"{json_path}.tmp"), Path(f"{csv_path}.tmp")]
    try:
        with temporary[0].open("w", encoding="utf-8") as js, temporary[1].open("w", newline="", encoding="utf-8") as cs:
            js.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "offers": [')
            writer = csv.writer(cs)
            writer.writerow(CSV_COLUMNS)
            for record in offer_records():
                js.write(("," if count else "") + "\n" + json.dumps(record, ensure_ascii=False))
                writer.writerow(_csv_row(record))
                count += 1
            js.write("\n]}\n")
    except BaseException:
        for path in temporary:
            path.unlink(missing_ok=True)
        raise
    os.replace(f"{json_path}.tmp", json_path)
    os.replace(f"{csv_path}.tmp", csv_path)
    return json_path, csv_path, count


def dataset_files() -> list[dict]:
    """The dumps on disk, newest first: [{date, json, csv}] (a day with both files only)."""
    directory = dataset_dir()
    found: dict[str, set[str]] = {}
    if directory.is_dir():
        for path in directory.iterdir():
            match = FILE_NAME.match(path.name)
            if match:
                found.setdefault(match.group(1), set()).add(match.group(2))
    return [{"date": day, "json": f"offers-{day}.json", "csv": f"offers-{day}.csv"}
            for day in sorted(found, reverse=True) if found[day] == {"json", "csv"}]
