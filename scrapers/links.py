"""The weekly source-link check's HTTP side: ask each URL whether it still answers. Plain Python like every client
under scrapers/ (no ORM); providers.link_check.source_links_check records the outcomes in LinkCheck.

HEAD first (cheap); a HEAD answered with an error is asked again with GET, because many sites refuse HEAD but serve
the page. 2xx/3xx (after redirects) is ok; 4xx/5xx, a timeout or a connection error is broken, with the code or the
error kept.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx

from .http import build_client


@dataclass(frozen=True)
class LinkOutcome:
    ok: bool
    status_code: int | None = None
    error: str = ""


def links_probe(urls: list[str], *, concurrency: int = 8, timeout: float = 15.0,
                transport: httpx.BaseTransport | None = None) -> dict[str, LinkOutcome]:
    """URL -> outcome for every URL; at most `concurrency` requests at once, each with `timeout` seconds."""
    with build_client(transport=transport, timeout=httpx.Timeout(timeout)) as http:
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            return dict(zip(urls, pool.map(lambda url: _probe(http, url), urls), strict=True))


def _probe(http: httpx.Client, url: str) -> LinkOutcome:
    try:
        response = http.head(url)
        if response.status_code >= 400:
            with http.stream("GET", url) as streamed:
                response = streamed
    except httpx.TimeoutException:
        return LinkOutcome(ok=False, error="timed out")
    except httpx.HTTPError as exc:
        return LinkOutcome(ok=False, error=f"could not connect: {exc}")
    ok = response.status_code < 400
    return LinkOutcome(ok=ok, status_code=response.status_code, error="" if ok else f"HTTP {response.status_code}")
