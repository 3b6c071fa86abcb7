"""The page's language is in its URL (plumbing): English unprefixed, Chinese under `/zh-hans/` (the pages of web,
advisor and digest are `i18n_patterns` in comparator.urls), so a shared link opens in the language it was shared
in. Replaces Django's LocaleMiddleware:

- a prefixed path is in its prefix's language;
- an unprefixed page is English, except that a GET or HEAD from a client whose language cookie (set by the
  switcher) or, without one, Accept-Language asks for another language we have is redirected (302, varying on
  both) to the same page and query under that language's prefix: links from before the prefix keep working;
- what is not a page (the API, exports, `/healthz`, `/metrics`, the switcher's endpoint, the admin, static files)
  is never prefixed and negotiates as before, by cookie or Accept-Language."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpResponseRedirect
from django.urls import translate_url
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.functional import SimpleLazyObject

NOT_PAGES = ("/api/", "/i18n/", "/admin/", "/healthz", "/metrics", "/static/", "/favicon")


def is_page(path: str) -> bool:
    return not path.startswith(NOT_PAGES)


class LanguageInUrlMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path_info
        from_path = translation.get_language_from_path(path)
        preferred = translation.get_language_from_request(request, check_path=False)
        page = is_page(path)
        if path.startswith("/i18n/"):
            # The switcher (Django's set_language) turns `next` into the chosen language's URL by resolving it in
            # the active language: that is the language of the page it came from, as its path says.
            next_url = request.POST.get("next") or request.GET.get("next") or ""
            language = translation.get_language_from_path(urlsplit(next_url).path) or settings.LANGUAGE_CODE
        elif from_path:
            language = from_path
        elif page:
            language = settings.LANGUAGE_CODE
            if preferred != language and request.method in ("GET", "HEAD"):
                response = HttpResponseRedirect(f"/{preferred}{request.get_full_path()}")
                patch_vary_headers(response, ("Accept-Language", "Cookie"))
                return response
        else:
            language = preferred
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        if page and not from_path:
            patch_vary_headers(response, ("Accept-Language", "Cookie"))
        elif not page:
            patch_vary_headers(response, ("Accept-Language",))
        response.headers.setdefault("Content-Language", language)
        return response


def language_links(request) -> dict:
    """Context processor: this page's URL in every language we have (`<link rel="alternate" hreflang>` in
    base.html; x-default is English), absolute; worked out only when a template shows them, and nothing for what is
    not a page."""
    if not is_page(request.path_info) or getattr(request, "resolver_match", None) is None:
        return {}  # not a page, or no page at this address (a 404): nothing to name in another language

    def links() -> list[dict]:
        here = request.get_full_path()
        return [{"hreflang": "zh-Hans" if code == "zh-hans" else code, "code": code,
                 "url": request.build_absolute_uri(translate_url(here, code))} for code, _name in settings.LANGUAGES]

    return {"language_links": SimpleLazyObject(links)}
