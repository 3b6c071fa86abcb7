"""Datasette as an ASGI application for uvicorn, so bench/api.py can serve it with several worker processes
(`datasette serve` runs one): `uvicorn --factory bench.datasette_app:app --workers 2`, the SQLite file in
BENCH_SQLITE, opened immutable (how `datasette publish` serves a published database).

TCP_NODELAY on every connection, as gunicorn serves the other two sides: asyncio sets it only on sockets whose
`proto` is IPPROTO_TCP, and uvicorn's listening socket (created by uvicorn, shared with its workers) has proto 0, so
its connections kept Nagle's algorithm. On a kept-alive connection the response's last small write (the closing
chunk) then waited for the client's delayed ACK: 56 ms per request instead of 13 ms (a new connection each time),
which made Datasette look four times slower at one client than it is."""

import asyncio.base_events
import os
import socket

from datasette.app import Datasette


def _set_nodelay(sock: socket.socket) -> None:
    if sock.family in {socket.AF_INET, socket.AF_INET6} and sock.type == socket.SOCK_STREAM:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


asyncio.base_events._set_nodelay = _set_nodelay


def app():
    return Datasette(immutables=[os.environ["BENCH_SQLITE"]],
                     settings={"suggest_facets": False, "sql_time_limit_ms": 10000}).app()
