"""Site-wide protections (plumbing): who the client is, atomic per-client counting, the response headers that
confine what a page may load, and the bound on concurrent whole-table CSV exports.

- `client_ip`: the address the server saw (REMOTE_ADDR) unless settings.NUM_PROXIES says how many reverse proxies
  sit in front, in which case the address the outermost of them saw, read from the right of X-Forwarded-For. A
  client-sent X-Forwarded-For is never trusted on its own: with it, anyone could be anyone to a rate limit. The API
  throttle and the digest's per-IP limit both use it.
- `window_hit`: one more hit in a fixed window, counted with the cache's atomic add and incr (Redis INCR in
  production), so concurrent requests cannot both read the same count.
- `SecurityHeadersMiddleware`: Content-Security-Policy (the site serves all its own scripts, styles, fonts and
  images, and has no inline script or style) and Permissions-Policy (no camera, microphone, geolocation, ...).
- `DepthLimitedJSONParser`: JSON nested past MAX_JSON_DEPTH is a 400, never a RecursionError.
- `export_slot`: at most settings.API_CSV_EXPORTS_MAX unpaged CSV exports stream at once across the site, so a few
  clients downloading whole tables cannot hold every web thread.
"""

from __future__ import annotations

import re
import time
import unicodedata
import uuid

from django.conf import settings
from django.core.cache import cache
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# 'self' only. `frame-ancestors 'none'` matches X-Frame-Options DENY; `form-action 'self'` keeps forms on the site;
# `object-src 'none'` and `base-uri 'none'` close the old plugin and <base> holes. Plotly renders charts into SVG
# with styles set from JavaScript (CSSOM, which CSP does not govern) and its own stylesheet is served as a file
# (static/charts.css, see templates/base.html); htmx's indicator <style> is switched off by its meta config.
CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))
PERMISSIONS_POLICY = ", ".join(f"{feature}=()" for feature in (
    "accelerometer", "camera", "geolocation", "gyroscope", "magnetometer", "microphone", "payment", "usb",
    "interest-cohort",
))


def client_ip(request) -> str:
    """The client's address for rate limits: REMOTE_ADDR, or with settings.NUM_PROXIES = n > 0 reverse proxies in
    front, the n-th address from the right of X-Forwarded-For (what the outermost proxy saw; anything left of it is
    whatever the client chose to send). The same rule as Django REST framework's NUM_PROXIES."""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = int(getattr(settings, "NUM_PROXIES", 0) or 0)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return remote
    addresses = [address.strip() for address in forwarded.split(",") if address.strip()]
    if not addresses:
        return remote
    return addresses[-min(proxies, len(addresses))]


def _now() -> float:
    """The clock of the rate windows (tests hold it still, so a run never straddles a window's end)."""
    return time.time()


def window_hit(key: str, window: int, now: float | None = None) -> tuple[int, float]:
    """Count one hit for `key` in the current fixed window of `window` seconds; returns (hits so far in the window,
    seconds until it ends). add() creates the counter only if absent and incr() is atomic in the cache (Redis INCR),
    so N concurrent hits count N."""
    now = _now() if now is None else now
    index = int(now // window)
    bucket = f"{key}:{index}"
    remaining = (index + 1) * window - now
    if cache.add(bucket, 1, timeout=window + 1):
        return 1, remaining
    try:
        return cache.incr(bucket), remaining
    except ValueError:  # expired between add and incr: this hit opens the window again
        cache.add(bucket, 1, timeout=window + 1)
        return 1, remaining


class SecurityHeadersMiddleware:
    """Adds Content-Security-Policy and Permissions-Policy to every response (settings.SECURITY_HEADERS: on in
    production; a response that set its own policy keeps it)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if getattr(settings, "SECURITY_HEADERS", False):
            response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
            response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response


class ExportSlot:
    """One of the site's API_CSV_EXPORTS_MAX export slots, held until release() (idempotent)."""

    def __init__(self, key: str, token: str):
        self.key, self.token, self.released = key, token, False

    def release(self) -> None:
        if not self.released:
            self.released = True
            if cache.get(self.key) == self.token:
                cache.delete(self.key)


def export_slot() -> ExportSlot | None:
    """Take a free export slot, or None when all are in use. A slot expires after API_CSV_EXPORT_SECONDS even if
    its process died without releasing it."""
    token = uuid.uuid4().hex
    timeout = int(getattr(settings, "API_CSV_EXPORT_SECONDS", 600))
    for number in range(int(getattr(settings, "API_CSV_EXPORTS_MAX", 2))):
        key = f"csv-export-slot:{number}"
        if cache.add(key, token, timeout=timeout):
            return ExportSlot(key, token)
    return None


class ReleasingStream:
    """An iterable of chunks that releases its export slot when exhausted or closed (Django closes a streaming
    response's content when the response ends, even if the client went away before the last chunk)."""

    def __init__(self, chunks, slot: ExportSlot):
        self.chunks, self.slot = chunks, slot

    def __iter__(self):
        try:
            yield from self.chunks
        finally:
            self.slot.release()

    def close(self) -> None:
        close = getattr(self.chunks, "close", None)
        if close:
            close()
        self.slot.release()


# Deeper than any document the API reads (advise's input is three levels deep).
MAX_JSON_DEPTH = 32


class DepthLimitedJSONParser(JSONParser):
    """DRF's JSON parser, with a document nested past MAX_JSON_DEPTH (or past Python's recursion limit, which the
    decoder hits at about a thousand levels) answered as 400 instead of a RecursionError."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels") from None
        if _depth_exceeds(data, MAX_JSON_DEPTH):
            raise ParseError(f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels")
        return data


def _depth_exceeds(data, limit: int) -> bool:
    level = [data]
    for _ in range(limit + 1):
        level = [child for item in level if isinstance(item, dict | list)
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return True


class RequestBodyLimitMiddleware:
    """A request whose declared body is over settings.DATA_UPLOAD_MAX_MEMORY_SIZE is answered 413 before anything
    reads it. Django applies that limit only where it reads `request.body` or a form itself; the REST framework's
    JSON parser reads the stream, so without this a 200 MB advice body was parsed. gunicorn caps the request line
    and headers (Dockerfile, deploy/kubernetes) but has no body limit; a body without Content-Length is never read
    (Django reads at most the declared length)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and length > limit:
            from django.http import JsonResponse

            return JsonResponse({"detail": f"Request body too large: {length} bytes, at most {limit}."}, status=413)
        return self.get_response(request)


def admin_login_limited(request) -> float | None:
    """Count one admin login attempt (a POST) for this client; the seconds until it may try again when it is over
    settings.ADMIN_LOGIN_ATTEMPTS per ADMIN_LOGIN_WINDOW seconds, else None. Counted per client address and per
    username, so neither many addresses against one account nor one address against many accounts gets far."""
    window = settings.ADMIN_LOGIN_WINDOW
    limit = settings.ADMIN_LOGIN_ATTEMPTS
    username = request.POST.get("username", "").strip().lower()
    worst = None
    for key in (f"admin-login:ip:{client_ip(request)}", f"admin-login:user:{username}"):
        hits, remaining = window_hit(key, window)
        if hits > limit:
            worst = max(worst or 0, remaining)
    return worst


_NUMBER_LIKE = re.compile(r"[\s+\-−]*[\d.,]+(?:[eE][+\-]?\d+)?\s*")


def non_ascii_number(params) -> str | None:
    """The first parameter whose value reads as a number written with digits other than ASCII 0-9 (fullwidth
    '１２', Arabic-Indic, ...), or None. Python's int() and Decimal() accept those digits, so without this check
    '?price_max=３' filtered as 3 in some places and failed in others; numbers in parameters are ASCII only."""
    for name, values in params.lists():
        for value in values:
            if _is_non_ascii_number(value):
                return name
    return None


def _is_non_ascii_number(value: str) -> bool:
    """A number in other digits, with fullwidth signs and points ('－１．５') as an input method writes them."""
    return not value.isascii() and bool(_NUMBER_LIKE.fullmatch(unicodedata.normalize("NFKC", value)))


def ascii_number(value: str) -> str:
    """A number written with other digits ('１２．５' typed with a Chinese input method, '٣') in ASCII digits."""
    return "".join(str(unicodedata.decimal(char)) if char.isdecimal() and not char.isascii()
                   else "-" if char == "−" else char for char in unicodedata.normalize("NFKC", value))


class AsciiNumbersMiddleware:
    """A query or form parameter that is a number in non-ASCII digits: the API answers 400 naming the parameter; a
    page asked for one (a number typed with a Chinese input method is fullwidth: '８') redirects to the same query
    with ASCII digits, so the form shows what it filters by and nothing typed is lost."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        name = non_ascii_number(request.GET)
        if name is None and request.method == "POST" and request.content_type in (
                "application/x-www-form-urlencoded", "multipart/form-data"):
            name = non_ascii_number(request.POST)
        if name is not None:
            from django.http import HttpResponse, HttpResponseRedirect, JsonResponse
            from django.utils.translation import gettext

            message = gettext("%(name)s: write numbers with the digits 0-9.") % {"name": name}
            if request.path.startswith("/api/"):
                return JsonResponse({name: [message]}, status=400)
            if request.method in ("GET", "HEAD"):  # then `name` came from the query
                query = request.GET.copy()
                for key, values in request.GET.lists():
                    query.setlist(key, [ascii_number(v) if _is_non_ascii_number(v) else v for v in values])
                return HttpResponseRedirect(f"{request.path}?{query.urlencode()}")
            return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
