"""Site-wide protections (plumbing): the response headers that confine what a page may load, request body and JSON
depth limits, the admin login throttle, and ASCII numbers in parameters.

- `SecurityHeadersMiddleware`: Content-Security-Policy (the site serves all its own scripts, styles, fonts and
  images, and has no inline script or style) and Permissions-Policy (no camera, microphone, geolocation, ...).
- `DepthLimitedJSONParser`: JSON nested past MAX_JSON_DEPTH is a 400, never a RecursionError.
- `admin_login_limited`: the admin login's attempts per client and per username.
- `AsciiNumbersMiddleware`: numbers in parameters written with ASCII digits only.

Who the client is, the counting in fixed windows and the export slots are in providers.limits, where the apps that
answer requests reach them without importing this plumbing.
"""

from __future__ import annotations

import re
import unicodedata

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from providers.limits import client_ip, window_hit

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


# A page that shows an email's HTML (the digest's staff preview, in a sandboxed srcdoc iframe, which inherits the
# page's policy): email clients need inline styles, so such a page allows them; scripts stay 'self' only.
INLINE_STYLES_POLICY = CONTENT_SECURITY_POLICY.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")


class SecurityHeadersMiddleware:
    """Adds Content-Security-Policy and Permissions-Policy to every response (settings.SECURITY_HEADERS: on in
    production). A response marked `shows_email_html` gets INLINE_STYLES_POLICY."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if getattr(settings, "SECURITY_HEADERS", False):
            inline = getattr(response, "shows_email_html", False)
            response.headers["Content-Security-Policy"] = INLINE_STYLES_POLICY if inline else CONTENT_SECURITY_POLICY
            response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response


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
