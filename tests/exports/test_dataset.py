"""The open dataset: the dump validates against its JSON Schema, states every source's licence and terms, withholds
prices from sources without an open licence, keeps the last good dump when a run fails, and is served read-only."""

from __future__ import annotations

import csv
import json
from datetime import date

import jsonschema
import pytest
from rest_framework.test import APIClient

from exports import dataset, tasks
from providers.models import DataSource

SCHEMA = json.loads(dataset.SCHEMA_FILE.read_text())


@pytest.fixture
def dump_dir(tmp_path, settings):
    settings.DATASET_DIR = tmp_path
    return tmp_path


def licence(slug: str, text: str) -> None:
    DataSource.objects.filter(slug=slug).update(license=text)


def test_the_dump_validates_and_withholds_prices_without_an_open_licence(machines, dump_dir):
    licence("gcp-src", "Apache-2.0 (karpenter-provider-gcp); MPL-2.0 (gpuhunt)")
    licence("azure-src", "")
    json_path, csv_path, count = dataset.dataset_write(day=date(2026, 12, 4))
    dump = json.loads(json_path.read_text())
    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(dump)
    assert count == len(dump["offers"]) == 15
    terms = {source["slug"]: source for source in dump["sources"]}
    assert terms["gcp-src"]["redistributed"] and not terms["azure-src"]["redistributed"]
    assert terms["azure-src"]["licence"] == "none stated"
    gcp = next(o for o in dump["offers"] if o["source"] == "gcp-src" and o["instance_type"] == "g2-standard-4")
    azure = next(o for o in dump["offers"] if o["source"] == "azure-src")
    assert gcp["price_hour_usd"] == 0.70683 and gcp["price_withheld"] is False
    assert azure["price_hour_usd"] is None and azure["spot_price_hour_usd"] is None and azure["price_withheld"]
    with csv_path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(dataset.CSV_COLUMNS) and len(rows) == count
    assert {row["id"] for row in rows} == {str(o["id"]) for o in dump["offers"]}


def test_a_broken_record_fails_the_schema(machines, dump_dir):
    json_path, _, _ = dataset.dataset_write(day=date(2026, 12, 4))
    dump = json.loads(json_path.read_text())
    dump["offers"][0]["kubernetes"]["mig"]["answer"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(dump)


def test_a_failed_run_keeps_the_last_good_dump(machines, dump_dir, monkeypatch):
    json_path, _, _ = dataset.dataset_write(day=date(2026, 12, 4))
    good = json_path.read_text()

    def broken():
        raise RuntimeError("database went away")
        yield

    monkeypatch.setattr(dataset, "offer_records", broken)
    with pytest.raises(RuntimeError):
        dataset.dataset_write(day=date(2026, 12, 4))
    assert json_path.read_text() == good
    assert sorted(path.name for path in dump_dir.iterdir()) == ["offers-2026-12-04.csv", "offers-2026-12-04.json"]


def test_the_daily_task_writes_and_the_api_serves_the_dumps(machines, dump_dir):
    written = tasks.dataset_write()
    assert written["offers"] == 15
    api = APIClient()
    index = api.get("/api/v1/dataset/").json()
    assert len(index["dumps"]) == 1 and index["schema"].endswith("/api/v1/dataset/schema.json")
    name = index["dumps"][0]["csv"].rsplit("/", 1)[1]
    response = api.get(f"/api/v1/dataset/{name}")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert api.get("/api/v1/dataset/schema.json").status_code == 200
    assert api.get("/api/v1/dataset/offers-1999-01-01.json").status_code == 404
    assert api.get("/api/v1/dataset/..%2F..%2Fsettings.py").status_code == 404
    assert "unexpected" in api.get("/api/v1/dataset/?unexpected=1").json()


def test_the_sources_page_links_the_dataset(machines):
    page = APIClient().get("/sources/").content.decode()
    assert 'href="/api/v1/dataset/"' in page and 'href="/api/v1/dataset/schema.json"' in page
