"""Query strings of the site's pages: the short canonical query a user can share, the filters alone (for the API,
charts and digest links), and links that change one parameter."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django import forms
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from providers.filters import OfferFilterSet
from providers.filters.fields import CatalogChoiceField, accepted_values, catalog_spelling

from .filter_panel import BOOLEAN_FILTERS, CHECKBOX_FILTERS

logger = logging.getLogger(__name__)


# --- query strings ---------------------------------------------------------------------------------------------------


# Query parameters that change how offers are shown, not which: kept out of API, chart and digest links.
DISPLAY_PARAMS = ("currency", "unit", "period", "page")
DISPLAY_DEFAULTS = {"currency": "USD", "unit": "gpu", "period": "hour"}
YES_NO = {"true": _("yes"), "1": _("yes"), "yes": _("yes"), "on": _("yes"),
          "false": _("no"), "0": _("no"), "no": _("no"), "off": _("no")}


# Per filter (all of them checkbox filters), the values read as another (`rdma=yes` is `rdma=any`; an earlier
# release's choices): the page's URL and its checkboxes show the choice it is read as.
RENAMED = {name: filter_.field_class.renamed for name, filter_ in OfferFilterSet.base_filters.items()
           if getattr(filter_.field_class, "renamed", None)}


# Per filter, the catalog choices whose values are read in any case (CatalogChoiceField): the URL and the panel's
# boxes show the catalog's spelling (`?provider=AWS` -> `?provider=aws`).
CATALOG_CHOICES = {name: filter_.extra["choices"] for name, filter_ in OfferFilterSet.base_filters.items()
                   if issubclass(filter_.field_class, CatalogChoiceField)}


def canonical_query(params: QueryDict) -> QueryDict:
    """The request's parameters without empty values (what a GET form sends for untouched fields), without the
    "unknown" a yes/no select sends for "any" and without display defaults, with a choice named as the filter reads
    it (RENAMED, and a catalog value in the catalog's spelling), and a checkbox filter's comma list (`?gpu=a,b`, the
    API's form) as one key per value, as the panel sends it, so its boxes show ticked: the short URL a user can
    share."""
    clean = QueryDict(mutable=True)
    for key, values in params.lists():
        if key in CHECKBOX_FILTERS:
            renamed = RENAMED.get(key, {})
            parts = [part.strip() for value in values for part in value.split(",")]
            values = [renamed.get(part, part) for part in parts]
            if key in CATALOG_CHOICES:
                values = catalog_spelling(values, accepted_values(CATALOG_CHOICES[key]))
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




# --- active filters as removable chips ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Chip:
    """One active filter value: what it says ("GPU family: H100") and the link that drops it (one-click relax)."""

    label: str
    value: str
    remove_url: str


def active_filters(params: QueryDict, form) -> list[Chip]:
    """Every filter value of a canonical query as a chip, in the query's order; a multi-valued filter gives one chip
    per value (`gpu=a,b` too), each link keeping the others. Values are shown in words from the form's own choices
    (translated: "managed control plane", not `managed`); the ordering and display options are not filters."""
    chips = []
    for key in params:
        if key in DISPLAY_PARAMS or key == "ordering" or key not in form.fields:
            continue
        field = form.fields[key]
        choices = {str(value): str(label) for value, label in getattr(field, "choices", ())}
        raw = [part.strip() for value in params.getlist(key) for part in value.split(",") if part.strip()]
        values = raw if isinstance(field, forms.MultipleChoiceField) else [", ".join(params.getlist(key))]
        for value in values:
            if key in BOOLEAN_FILTERS:
                shown = str(YES_NO.get(value.strip().lower(), value))
            else:
                shown = choices.get(value, value)
            rest = params.copy()
            rest.pop("page", None)
            if isinstance(field, forms.MultipleChoiceField):
                kept = [v for v in raw if v != value]
                if kept:
                    rest.setlist(key, kept)
                else:
                    rest.pop(key, None)
            else:
                rest.pop(key, None)
            encoded = rest.urlencode()
            chips.append(Chip(label=str(field.label), value=shown, remove_url=f"?{encoded}" if encoded else ""))
    return chips
