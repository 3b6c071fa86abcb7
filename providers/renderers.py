"""CSV for the REST API: the same rows as the JSON, flattened to one column per leaf field (`provider.slug`,
`gpu.name`, `capabilities.mig`), asked for with `?format=csv` or `Accept: text/csv`.

The columns come from the output serializer, not from the first row, so every row has the same columns even when a
nested object is null (an offer whose GPU is not in the catalog) and an empty result still has its header line.
A list is joined with ";" and a mapping written as JSON. Text that a spreadsheet would run as a formula (starting
with = + - @ or a tab) is prefixed with a quote, as OWASP advises for CSV exported to spreadsheets; numbers are left
alone.

`csv_stream` writes rows as they come from the database (`QuerySet.iterator`), so a CSV of every offer streams in
constant memory instead of being built in one string.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from decimal import Decimal

from rest_framework import serializers
from rest_framework.renderers import BaseRenderer

Column = tuple[str, tuple[str, ...]]

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_columns(serializer: serializers.BaseSerializer, prefix: tuple[str, ...] = ()) -> list[Column]:
    """(header, path) for every leaf field of `serializer`; nested single objects are walked, lists are leaves."""
    if isinstance(serializer, serializers.ListSerializer):
        serializer = serializer.child
    columns: list[Column] = []
    for name, field in serializer.fields.items():
        path = (*prefix, name)
        if isinstance(field, serializers.Serializer):
            columns.extend(csv_columns(field, path))
        elif isinstance(field, serializers.SerializerMethodField) and _method_serializer(serializer, name):
            columns.extend(csv_columns(_method_serializer(serializer, name), path))
        else:
            columns.append((".".join(path), path))
    return columns


def _method_serializer(serializer, name: str) -> serializers.Serializer | None:
    """The serializer a SerializerMethodField declares through @extend_schema_field, when it is an object (or, when
    the schema declares one of several, the one its method names as `csv_columns_from`)."""
    method = getattr(serializer, f"get_{name}", None)
    declared = getattr(method, "csv_columns_from", None) or getattr(method, "_spectacular_annotation", {}).get("field")
    if isinstance(declared, type) and issubclass(declared, serializers.Serializer):
        return declared()
    if isinstance(declared, serializers.Serializer) and not isinstance(declared, serializers.ListSerializer):
        return declared
    return None


def _cell(value) -> str | int | float:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(str(_cell(item)) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")  # 3.73, as in the JSON, not the column's 3.73000
    if isinstance(value, str):
        return f"'{value}" if value.startswith(FORMULA_PREFIXES) else value
    return value


def csv_row(data: dict, columns: list[Column]) -> list:
    row = []
    for _, path in columns:
        value = data
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        row.append(_cell(value))
    return row


class _Echo:
    """A file-like object whose write returns the text, so csv.writer can feed a generator."""

    def write(self, value: str) -> str:
        return value


def csv_stream(columns: list[Column], rows: Iterable[dict]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow([header for header, _ in columns])
    for data in rows:
        yield writer.writerow(csv_row(data, columns))


class CSVRenderer(BaseRenderer):
    """Renders a page (`results`), a list or one object as CSV with the view's `csv_serializer()` columns."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        view = (renderer_context or {}).get("view")
        if isinstance(data, dict) and "results" in data:
            data = data["results"]
        rows = data if isinstance(data, list) else [data]
        columns = csv_columns(view.csv_serializer()) if view is not None and hasattr(view, "csv_serializer") else [
            (key, (key,)) for key in (rows[0].keys() if rows else [])]
        buffer = io.StringIO()
        for line in csv_stream(columns, rows):
            buffer.write(line)
        return buffer.getvalue().encode(self.charset)
