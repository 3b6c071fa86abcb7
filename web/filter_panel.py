"""The offers page's filter panel: the shared OfferFilterSet's fields grouped and dressed for a page (checkboxes,
translated labels, "any" on yes/no selects). Only presentation: names, values and validation stay the FilterSet's."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django import forms
from django.template.loader import get_template
from django.utils.choices import BaseChoiceIterator, CallableChoiceIterator
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _
from django_filters import BooleanFilter, MultipleChoiceFilter

from providers import versions
from providers.filters import OfferFilterSet
from providers.presentation import gpu_name

from .guides import FILTER_GUIDES, guide_url

logger = logging.getLogger(__name__)


# --- the filter panel ---------------------------------------------------------------------------------------------

# (legend, filters, open by default): the groups that answer "which GPU, what price, which Kubernetes" start open.
FILTER_GROUPS = (
    (_("GPU"), ("gpu_family", "gpu", "vendor", "gpu_count_min", "gpu_count_max", "gpu_memory_min"), True),
    (_("Price"), ("price_per_gpu_hour_max", "price_hour_max", "spot", "commitment", "one_per_machine"), True),
    (_("Kubernetes"), ("offering", "control_plane_fee_max", "gpu_operator", "rdma", "mig", "mps", "time_slicing",
                       "vendor_sharing", "node_autoscaling", "scale_to_zero", "spot_nodes", "rwx_storage",
                       "gang_scheduling", "documented_only"), True),
    (_("Provider and location"), ("provider", "provider_kind", "country", "continent", "region"), False),
    (_("Availability and freshness"), ("available", "in_stock_7d_min", "seen_within_hours", "include_inactive"), False),
)
# Multiple-choice filters with few choices are shown as a row of checkboxes instead of a list box.
INLINE_CHOICES = 6
BOOLEAN_FILTERS = {name for name, f in OfferFilterSet.base_filters.items() if isinstance(f, BooleanFilter)}
# Filters of several values, shown as checkboxes: the panel sends one key per ticked box (`?gpu=a&gpu=b`).
CHECKBOX_FILTERS = {name for name, f in OfferFilterSet.base_filters.items() if isinstance(f, MultipleChoiceFilter)}


@dataclass
class FilterField:
    field: forms.BoundField
    errors: forms.utils.ErrorList | None = None
    guide: str = ""
    explain: str = ""  # the guide link's accessible name
    inline: bool = False
    scroll: bool = False
    html: str = ""  # the field drawn already (an unset field, kept under the data version), or "" to draw it here


def filter_groups(form: forms.Form) -> list[tuple[str, list[FilterField], bool]]:
    """The FilterSet's fields grouped for the panel; a filter the API developer adds later lands in "More filters"
    so the page always offers every filter of the shared FilterSet."""
    listed = {name for _label, names, _open in FILTER_GROUPS for name in names} | {"ordering"}
    groups = [(label, [n for n in names if n in form.fields], default) for label, names, default in FILTER_GROUPS]
    extra = [name for name in form.fields if name not in listed]
    if extra:
        groups.append((_("More filters"), extra, True))
    result = []
    for label, names, default in groups:
        items = []
        for name in names:
            field = form.fields[name]
            item = FilterField(form[name], errors=form.errors.get(name))
            if name in FILTER_GUIDES:
                item.guide = guide_url(*FILTER_GUIDES[name])
                item.explain = gettext("Explain: %(name)s") % {"name": field.label}
            if name in CHECKBOX_FILTERS:
                item.inline = len(field.choices) <= INLINE_CHOICES
                item.scroll = not item.inline
            if name not in form.data and not item.errors:
                item.html = unset_field_html(item)
            items.append(item)
        # A group opens when one of its filters is set or wrong, so a shared link shows what it filters by.
        opened = default or any(item.field.value() not in (None, "", [], "unknown") or item.errors for item in items)
        result.append((label, items, opened))
    return result


def unset_field_html(item: FilterField) -> str:
    """A field the query does not set, drawn as every request that leaves it unset draws it: the same for a language
    and the data (its choices are read from the database), so it is drawn once per language and change of the data
    (versions.remembered, inside the page's data_version_scope; drawn every time outside one). Most of the panel's
    45 fields, the GPU models' and providers' checkbox lists among them, are unset on any one request."""
    return versions.remembered(f"panel-field:{get_language()}:{item.field.name}",
                               lambda: get_template("offers/_filter_field.html").render({"item": item}))


ORDER_LABELS = {
    "price_per_gpu_hour": _("GPU-hour price, low to high"),
    "-price_per_gpu_hour": _("GPU-hour price, high to low"),
    "price_hour": _("Instance price, low to high"),
    "-price_hour": _("Instance price, high to low"),
    "spot_price_per_gpu_hour": _("Spot price, low to high"),
    "-spot_price_per_gpu_hour": _("Spot price, high to low"),
    "commit_1y_price_per_gpu_hour": _("1-yr commitment, low to high"),
    "-commit_1y_price_per_gpu_hour": _("1-yr commitment, high to low"),
    "commit_3y_price_per_gpu_hour": _("3-yr commitment, low to high"),
    "-commit_3y_price_per_gpu_hour": _("3-yr commitment, high to low"),
    "gpu_memory": _("GPU memory, smallest first"),
    "-gpu_memory": _("GPU memory, largest first"),
    "gpu_count": _("GPU count, fewest first"),
    "-gpu_count": _("GPU count, most first"),
    "provider": _("Provider, A to Z"),
    "-provider": _("Provider, Z to A"),
    "last_seen": _("Last seen, oldest first"),
    "-last_seen": _("Last seen, newest first"),
}


class OfferPanelFilterSet(OfferFilterSet):
    """The shared FilterSet with its form dressed for a page: checkboxes instead of multi-select boxes (usable by
    keyboard and on phones without Ctrl-click), translated labels for raw choice values, "any" instead of "unknown"
    on yes/no selects, and numeric keyboards on phones. Only presentation changes: names, accepted values and
    validation stay the FilterSet's (the fields are its own, dressed once per process; labels stay lazy, so each
    request shows its own language, and choices read from the database stay callables read per request)."""

    @classmethod
    def present_fields(cls, fields: dict[str, forms.Field]) -> dict[str, forms.Field]:
        for name, field in fields.items():
            if isinstance(field, forms.MultipleChoiceField):
                field.widget = forms.CheckboxSelectMultiple()
                field.choices = field.choices  # hands the choices to the new widget (callable ones read per request)
            elif name in BOOLEAN_FILTERS:
                field.widget.choices = [("unknown", _("any")), ("true", _("yes")), ("false", _("no"))]
            elif name == "ordering":
                # django-filter's choice fields prepend `empty_label` themselves.
                field.empty_label = _("Cheapest GPU-hour (default)")
                field.choices = [(value, ORDER_LABELS.get(value, label)) for value, label in field.choices if value]
                field.widget.choices = field.choices  # the CSV field does not pass choices on to its widget
            if isinstance(field.widget, forms.NumberInput):
                field.widget.attrs.setdefault("step", "any")
                field.widget.attrs.setdefault("inputmode", "decimal")
        return fields

    @property
    def form(self):
        """The bound form, with choices read from the database (GPU models, providers) read once for this request
        rather than once by validation, once by the panel's layout and once by the widget."""
        if not hasattr(self, "_form"):
            for name, field in super().form.fields.items():
                if isinstance(getattr(field, "choices", None), CallableChoiceIterator):
                    choices = list(field.choices)
                    if name == "gpu":  # catalog names carry our qualifiers, "(form factor not stated)": translated
                        choices = [(value, gpu_name(label)) for value, label in choices]
                    field.choices = ChoicesRead(choices)
        return self._form


class ChoicesRead(BaseChoiceIterator):
    """Choices already read and in normal form: Django passes a choice iterator through as it is, where it would
    check every pair of a list again (161 GPU models, families and providers on every page view)."""

    def __init__(self, choices: list[tuple[str, str]]):
        self.choices = choices

    def __iter__(self):
        return iter(self.choices)

    def __len__(self):
        return len(self.choices)


