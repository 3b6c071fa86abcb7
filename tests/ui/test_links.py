"""Every internal link on the site's main pages answers 2xx, in both languages.

The crawl starts from the pages in the navigation, reads every `href` (and htmx `hx-get`) that stays on the site,
and follows them two levels deep, so a link written by hand that no URL pattern serves (the footer's "API" link
once pointed at /api/v1/, a 404 on every page) fails here rather than for a user.
"""

import re
from html import unescape
from urllib.parse import urldefrag, urlsplit

import pytest
from django.urls import reverse
from django.utils import translation

from tests.ui import builders

pytestmark = pytest.mark.django_db

LINK = re.compile(r'\b(?:href|hx-get)="([^"]+)"')
# Not pages: the admin asks for a login (302), the language switcher is a POST target, static files are whitenoise's.
SKIPPED_PREFIXES = ("/admin/", "/i18n/", "/static/")


def internal_links(html: str) -> set[str]:
    links = set()
    for raw in LINK.findall(html):
        url, _fragment = urldefrag(unescape(raw))
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not url.startswith("/") or url.startswith(SKIPPED_PREFIXES):
            continue
        links.add(url)
    return links


def crawl(client, starts: list[str], depth: int) -> dict[str, int]:
    """URL -> status code of every internal link reachable from `starts` within `depth` hops."""
    seen: dict[str, int] = {}
    frontier = list(starts)
    for _level in range(depth + 1):
        following = []
        for url in frontier:
            if url in seen:
                continue
            response = client.get(url)
            seen[url] = response.status_code
            if response.status_code == 200 and "text/html" in response.get("Content-Type", ""):
                following.extend(internal_links(response.content.decode()) - set(seen))
        frontier = following
    return seen


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_internal_link_from_the_main_pages_answers_2xx(client, language):
    data = builders.catalog()
    builders.rates()
    client.cookies["django_language"] = language
    with translation.override(language):  # the pages' addresses in that language: /zh-hans/... for Chinese
        starts = [reverse(name) for name in (
            "home", "charts", "gpu-index", "provider-index", "compare", "source-status", "guide-index", "advisor",
            "digest:subscribe")]
        starts.append(reverse("offer-detail", args=[data["acme_h100"].pk]))
    statuses = crawl(client, starts, depth=2)
    broken = {url: status for url, status in statuses.items() if not 200 <= status < 300}
    assert broken == {}  # a Chinese page never links to an address that only redirects
    # The crawl did reach the pages behind the navigation, not only the start pages, in the page's language.
    prefix = "/zh-hans" if language == "zh-hans" else ""
    assert any(url.startswith(f"{prefix}/providers/") and url != f"{prefix}/providers/" for url in statuses)
    assert any(url.startswith(f"{prefix}/guides/") and url != f"{prefix}/guides/" for url in statuses)
    assert reverse("api:docs") in statuses
