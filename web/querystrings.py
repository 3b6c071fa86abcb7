"""Query strings of the site's pages: the short canonical query a user can share, the filters alone (for the API,
charts and digest links), and links that change one parameter."""

from __future__ import annotations

import logging

from django.http import QueryDict

from .filter_panel import BOOLEAN_FILTERS

logger = logging.getLogger(__name__)


# --- query strings ---------------------------------------------------------------------------------------------------


# Query parameters that change how offers are shown, not which: kept out of API, chart and digest links.
DISPLAY_PARAMS = ("currency", "unit", "page")
DISPLAY_DEFAULTS = {"currency": "USD", "unit": "gpu"}


def canonical_query(params: QueryDict) -> QueryDict:
    """The request's parameters without empty values (what a GET form sends for untouched fields), without the
    "unknown" a yes/no select sends for "any" and without display defaults: the short URL a user can share."""
    clean = QueryDict(mutable=True)
    for key, values in params.lists():
        kept = [v for v in values if v.strip() and not (key in BOOLEAN_FILTERS and v == "unknown")
                and DISPLAY_DEFAULTS.get(key) != v]
        if kept:
            clean.setlist(key, kept)
    return clean


def filter_query(params: QueryDict) -> str:
    """The filters (and ordering) alone, for the API, the charts page and the digest's subscribe link."""
    clean = params.copy()
    for key in DISPLAY_PARAMS:
        clean.pop(key, None)
    return clean.urlencode()


def with_params(params: QueryDict, **changes) -> str:
    query = params.copy()
    for key, value in changes.items():
        query.pop(key, None)
        if value is not None:
            query[key] = value
    encoded = query.urlencode()
    return f"?{encoded}" if encoded else "?"


