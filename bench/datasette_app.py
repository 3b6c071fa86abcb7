"""Datasette as an ASGI application for uvicorn, so bench/api.py can serve it with several worker processes
(`datasette serve` runs one): `uvicorn --factory bench.datasette_app:app --workers 2`, the SQLite file in
BENCH_SQLITE, opened immutable (how `datasette publish` serves a published database)."""

import os

from datasette.app import Datasette


def app():
    return Datasette(immutables=[os.environ["BENCH_SQLITE"]],
                     settings={"suggest_facets": False, "sql_time_limit_ms": 10000}).app()
