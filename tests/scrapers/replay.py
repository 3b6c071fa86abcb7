"""Answers for the provider clients' tests: a test's override for a URL, else the client's recorded payload."""

from __future__ import annotations

from pathlib import Path

import httpx


def overridden(overrides: dict, url: str) -> httpx.Response | None:
    """The test's replacement answer for `url`, if it has one: a payload (sent as JSON), an httpx.Response, or an
    exception, which is raised as the transport would raise it."""
    if url not in overrides:
        return None
    value = overrides[url]
    if isinstance(value, Exception):
        raise value
    return value if isinstance(value, httpx.Response) else httpx.Response(200, json=value)


def replayed(routes: dict[str, Path], url: str) -> httpx.Response:
    """The recorded payload for `url`; a URL the client should not ask for fails the test."""
    assert url in routes, f"unexpected request {url}"
    return httpx.Response(200, content=routes[url].read_bytes())


def answer(routes: dict[str, Path], overrides: dict, url: str) -> httpx.Response:
    answer = overridden(overrides, url)
    return replayed(routes, url) if answer is None else answer
