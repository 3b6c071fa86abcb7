"""Saved filters: a subscriber's filter is the canonical query string of OfferFilterSet parameters.

Canonical means validated by OfferFilterSet and written from its cleaned values, keys sorted, multi-valued parameters
as one sorted, de-duplicated comma list (`gpu=a100,h100`), numbers without trailing zeros. Two spellings of the same
filter (`gpu=h100&gpu=a100`, `gpu=a100,h100`, `gpu=a100,h100,h100`) become one string, so subscribers sharing a
filter share one change computation. Nothing here filters offers itself: applying a saved filter means handing its
query string to providers.filters.offer_filterset, the one filter definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from urllib.parse import urlencode

from django import forms
from django.db.models import QuerySet
from django.http import QueryDict
from django.utils.translation import gettext as _

from providers import offer_reads
from providers.filters import OfferFilterSet, offer_filterset
from providers.models import Offer
from providers.presentation import gpu_name

# Presentation parameters of the offers page: how a list is shown, not which offers are in it. Dropped silently.
PRESENTATION_PARAMS = frozenset({"ordering", "page"})
# Boolean filters whose `false` means the same as leaving them out (they switch an inclusion on, never off).
NOOP_WHEN_FALSE = frozenset({"documented_only", "include_inactive"})


def filter_names() -> list[str]:
    return sorted(name for name in OfferFilterSet.base_filters if name not in PRESENTATION_PARAMS)


@dataclass(frozen=True)
class SavedFilter:
    query: str
    errors: dict[str, list[str]] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()

    @property
    def is_valid(self) -> bool:
        return not self.errors


def _as_querydict(data: QueryDict | str | None) -> QueryDict:
    if data is None:
        return QueryDict("")
    if isinstance(data, str):
        return QueryDict(data.lstrip("?"))
    return data


def _canonical_value(name: str, value) -> str | None:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        if not value and name in NOOP_WHEN_FALSE:
            return None
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        items = sorted({str(item).strip() for item in value if str(item).strip()})
        return ",".join(items) or None
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, (int, float)):
        return format(Decimal(str(value)).normalize(), "f")
    return str(value).strip() or None


def saved_filter_parse(data: QueryDict | str | None, *, other_params: frozenset[str] = frozenset()) -> SavedFilter:
    """Validate filter parameters with OfferFilterSet and return their canonical query string.

    `other_params` are keys the caller's own form uses (email, language, ...), neither filters nor ignored. Keys that
    are none of these are reported in `ignored` so the page can say so instead of silently widening the filter.
    Invalid values come back in `errors`, keyed by parameter, with OfferFilterSet's own messages.
    """
    data = _as_querydict(data)
    names = filter_names()
    known = set(names) | PRESENTATION_PARAMS | other_params | {"csrfmiddlewaretoken"}
    ignored = tuple(sorted(key for key in data if key not in known))
    filter_data = QueryDict(mutable=True)
    for name in names:
        values = [value for value in data.getlist(name) if value.strip()]
        if values:
            filter_data.setlist(name, values)
    form = OfferFilterSet(filter_data, queryset=Offer.objects.none()).form
    if not form.is_valid():
        errors = {name: [str(message) for message in messages] for name, messages in form.errors.items()}
        return SavedFilter(query="", errors=errors, ignored=ignored)
    pairs = []
    for name in names:
        value = _canonical_value(name, form.cleaned_data.get(name))
        if value is not None:
            pairs.append((name, value))
    return SavedFilter(query=urlencode(pairs, safe=","), ignored=ignored)


def saved_filter_offers(query: str, *, include_inactive: bool = False) -> QuerySet[Offer]:
    """The offers a saved filter selects, through OfferFilterSet. Raises ValueError if the filter no longer validates
    (a GPU or provider slug that has since left the catalog)."""
    data = QueryDict(query, mutable=True)
    if include_inactive:
        data["include_inactive"] = "true"
    filterset = offer_filterset(data)
    if not filterset.is_valid():
        raise ValueError("; ".join(f"{name}: {' '.join(map(str, errs))}" for name, errs in filterset.errors.items()))
    return offer_reads.offers_filtered(filters=filterset)


def saved_filter_summary(query: str) -> list[tuple[str, str]]:
    """(label, readable value) pairs of a saved filter, for pages and emails: choice slugs shown by their names."""
    data = QueryDict(query)
    form = OfferFilterSet(data, queryset=Offer.objects.none()).form
    rows = []
    for name in data:
        field_ = form.fields.get(name)
        if field_ is None:
            continue
        values = [part for value in data.getlist(name) for part in value.split(",")]
        if isinstance(field_, forms.NullBooleanField):
            shown = _("yes") if values and values[0] == "true" else _("no")
        else:
            choices = dict(getattr(field_, "choices", ()) or ())
            shown = ", ".join(gpu_name(str(choices.get(value, value))) for value in values)
        rows.append((str(field_.label or name), shown))
    return rows
