"""The one place that builds httpx clients for scrapers: timeouts, a user agent, and HTTP errors translated into
the scraper error classes, so every client fails the same way.

Retries are not done here: Celery retries a whole run with backoff (providers.tasks), which keeps one
transaction per run and never mixes pages from two attempts.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from .base import AuthScrapeError, SchemaScrapeError, ScrapeError, TransientScrapeError

USER_AGENT = "gpu-k8s-comparator/1.0 (+https://github.com/; price comparison; contact via repository)"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


def build_client(transport: httpx.BaseTransport | None = None, **kwargs) -> httpx.Client:
    return httpx.Client(
        transport=transport,
        timeout=kwargs.pop("timeout", DEFAULT_TIMEOUT),
        headers={"User-Agent": USER_AGENT, **kwargs.pop("headers", {})},
        follow_redirects=True,
        **kwargs,
    )


def _retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date, RFC 9110 10.2.3); None when it is neither,
    so the caller falls back to its default backoff instead of failing on the provider's typo."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None
    return max(0.0, seconds) if math.isfinite(seconds) else None


def get(http: httpx.Client, url: str, **kwargs) -> httpx.Response:
    """GET `url`, raising the matching ScrapeError for anything but a 2xx answer."""
    return _send(http, "GET", url, **kwargs)


def post(http: httpx.Client, url: str, **kwargs) -> httpx.Response:
    """POST to `url` (GraphQL queries, OAuth token exchanges) with the same error translation as `get`."""
    return _send(http, "POST", url, **kwargs)


def _send(http: httpx.Client, method: str, url: str, **kwargs) -> httpx.Response:
    try:
        response = http.request(method, url, **kwargs)
    except httpx.TimeoutException as exc:
        raise TransientScrapeError(f"timed out fetching {url}") from exc
    except httpx.TransportError as exc:
        raise TransientScrapeError(f"could not connect to {url}: {exc}") from exc
    raise_for_status(response, url)
    return response


def raise_for_status(response: httpx.Response, url: str) -> None:
    """The ScrapeError for a response that is not a 2xx answer: refused credentials fail fast, rate limits (with
    their Retry-After) and server errors are transient. Reads only the status and headers, so a streamed response
    can be checked before its body is read."""
    status = response.status_code
    if status in (401, 403):
        raise AuthScrapeError(f"{url} refused our credentials (HTTP {status})")
    if status == 429:
        retry_after = _retry_after_seconds(response.headers.get("Retry-After"))
        raise TransientScrapeError(f"{url} is rate limiting us (HTTP 429)", retry_after=retry_after)
    if status >= 500:
        raise TransientScrapeError(f"{url} answered HTTP {status}")
    if status >= 400:
        raise ScrapeError(f"{url} answered HTTP {status}")


@contextmanager
def stream_text(http: httpx.Client, url: str) -> Iterator[Iterator[str]]:
    """The body of `url` as text chunks as they arrive, never the whole body at once; a non-2xx answer, a timeout or
    a dropped connection mid-body fails the read with the matching ScrapeError."""
    try:
        with http.stream("GET", url) as response:
            raise_for_status(response, url)
            yield response.iter_text()
    except httpx.TimeoutException as exc:
        raise TransientScrapeError(f"timed out reading {url}") from exc
    except httpx.TransportError as exc:
        raise TransientScrapeError(f"connection to {url} failed: {exc}") from exc


def lines_whole(chunks: Iterator[str], what: str) -> Iterator[str]:
    """The lines of a body that arrives in `chunks`, each with its newline; when the body ends mid-line, that last
    part is passed on (so a reader can say what it is: an HTML page is not a CSV header) and then SchemaScrapeError
    is raised: a file cut short (a dropped connection, a truncated copy) must not pass for the whole."""
    tail, size = "", 0
    for chunk in chunks:
        size += len(chunk)
        tail += chunk
        if "\n" not in chunk:
            continue
        *complete, tail = tail.split("\n")
        for line in complete:
            yield line + "\n"
    if tail:
        yield tail
        raise SchemaScrapeError(f"{what}: the file ends mid-line ({size} characters): truncated")


def get_json(http: httpx.Client, url: str, **kwargs):
    return _decode_json(get(http, url, **kwargs), url)


def get_records(http: httpx.Client, url: str, fields=(), *, named_by: str = "id", non_empty: bool = True,
                **kwargs) -> list[dict]:
    """A JSON list of objects, each with every one of `fields` (a missing one named, with the object's `named_by`);
    a SchemaScrapeError otherwise, or for an empty list when `non_empty`."""
    records = get_json(http, url, **kwargs)
    if not isinstance(records, list) or (non_empty and not records):
        raise SchemaScrapeError(f"{url}: not a list{', or empty' if non_empty else ''}")
    for record in records:
        if not isinstance(record, dict):
            raise SchemaScrapeError(f"{url}: an entry is not an object")
        missing = [name for name in fields if name not in record]
        if missing:
            raise SchemaScrapeError(f"{url}: entry {record.get(named_by)!r} lacks {', '.join(missing)}")
    return records


def post_json(http: httpx.Client, url: str, **kwargs):
    return _decode_json(post(http, url, **kwargs), url)


def _decode_json(response: httpx.Response, url: str):
    try:
        return response.json()
    except ValueError as exc:
        raise SchemaScrapeError(f"{url} did not return JSON ({len(response.content)} bytes)") from exc


# The stand-in key registry.make_client hands a keyed client for an offline replay: the recorded transport checks no
# credentials, and a client that must exchange its key first (Verda's OAuth token) skips the exchange for it.
OFFLINE_API_KEY = "offline-replay"


class RecordedTransport(httpx.BaseTransport):
    """Replays recorded payloads from files, by exact URL; any other request is an error (never the network).

    Used by `manage.py scrape --offline` (the embedded default) and by tests.
    """

    def __init__(self, routes: dict[str, Path]):
        self.routes = routes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        path = self.routes.get(url)
        if path is None:
            raise httpx.ConnectError(f"no recorded payload for {url}", request=request)
        content_type = "application/json" if path.suffix == ".json" else "text/csv"
        return httpx.Response(200, content=path.read_bytes(), headers={"Content-Type": content_type})
