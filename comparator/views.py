"""Site pages: offers (the home page), charts, offer, GPU, provider and compare pages, and our guides.

Each view parses the request, asks selectors (the offers always through the one OfferFilterSet shared with the
API and the digest) and renders; display-only work (currency conversion, capability badges, freshness) happens
here on the one page of rows being shown, after the rows are fetched, so no page runs a query per row.

The offers page works without JavaScript (a plain GET form, plain links); with htmx the same form and links swap
only the results and push the canonical URL, so the address bar always holds a shareable, back-button-safe query.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from html import escape
from typing import NamedTuple
from urllib.parse import urlencode, urlsplit

from django import forms
from django.conf import settings
from django.contrib.humanize.templatetags.humanize import intcomma, naturaltime
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, render
from django.template.defaultfilters import floatformat
from django.template.loader import TemplateDoesNotExist, render_to_string, select_template
from django.urls import reverse
from django.utils import timezone
from django.utils.choices import BaseChoiceIterator, CallableChoiceIterator
from django.utils.formats import date_format
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _
from django_filters import BooleanFilter, MultipleChoiceFilter

from providers import selectors
from providers.capabilities import CAPABILITIES, GROUPS, QUESTIONS, RDMA_FABRICS, UNKNOWN
from providers.filters import OfferFilterSet, offer_filterset
from providers.models import Capability, Offer, Provider, in_language

from .currency import DISPLAY_CURRENCIES, Conversion, conversions
from .form_renderer import RememberedCheckboxes

logger = logging.getLogger(__name__)

PER_PAGE = 50
# Paths other developers own; linked, not reversed, so this page does not break while they are being built.
API_OFFERS_PATH = "/api/v1/offers/"
DIGEST_SUBSCRIBE_PATH = "/digest/subscribe/"
# Query parameters that change how offers are shown, not which: kept out of API, chart and digest links.
DISPLAY_PARAMS = ("currency", "unit", "page")
DISPLAY_DEFAULTS = {"currency": "USD", "unit": "gpu"}

# --- the guides ------------------------------------------------------------------------------------------------------

GUIDES = {
    "kubernetes-support": _("What “Kubernetes support” means when you rent GPUs"),
    "gpu-sharing": _("Sharing a GPU: MIG, MPS and time-slicing"),
    "before-you-commit": _("What to check before you commit"),
    "when-not-kubernetes": _("When Kubernetes is not worth it"),
}
# Every capability question and capability filter links to the guide section that explains it.
CAPABILITY_GUIDES = {
    "offering": ("kubernetes-support", "managed-vs-byo"),
    "control_plane_fee": ("kubernetes-support", "control-plane-fee"),
    "gpu_operator": ("before-you-commit", "drivers"),
    "mig": ("gpu-sharing", "mig"),
    "mps": ("gpu-sharing", "mps"),
    "time_slicing": ("gpu-sharing", "time-slicing"),
    "vendor_sharing": ("gpu-sharing", "vendor-sharing"),
    "infiniband": ("before-you-commit", "interconnect"),
    "roce": ("before-you-commit", "interconnect"),
    "efa": ("before-you-commit", "interconnect"),
    "gpudirect_tcpx": ("before-you-commit", "interconnect"),
    "node_autoscaling": ("before-you-commit", "idle-nodes"),
    "scale_to_zero": ("before-you-commit", "idle-nodes"),
    "spot_nodes": ("before-you-commit", "spot"),
    "rwx_storage": ("before-you-commit", "storage"),
    "gang_scheduling": ("before-you-commit", "gang-scheduling"),
    "nvidia": ("before-you-commit", "drivers"),
    "amd": ("before-you-commit", "drivers"),
    "intel": ("before-you-commit", "drivers"),
    "other_accelerators": ("before-you-commit", "drivers"),
}
FILTER_GUIDES = {
    **{key: CAPABILITY_GUIDES[key] for key in CAPABILITY_GUIDES if key in OfferFilterSet.base_filters},
    "control_plane_fee_max": CAPABILITY_GUIDES["control_plane_fee"],
    "rdma": ("before-you-commit", "interconnect"),
    "documented_only": ("kubernetes-support", "how-we-source"),
}


def guide_url(slug: str, anchor: str) -> str:
    return f"/guides/{slug}/#{anchor}"


# --- the filter panel ---------------------------------------------------------------------------------------------

# (legend, filters, open by default): the groups that answer "which GPU, what price, which Kubernetes" start open.
FILTER_GROUPS = (
    (_("GPU"), ("gpu_family", "gpu", "vendor", "gpu_count_min", "gpu_count_max", "gpu_memory_min"), True),
    (_("Price"), ("price_per_gpu_hour_max", "price_hour_max", "spot"), True),
    (_("Kubernetes"), ("offering", "control_plane_fee_max", "gpu_operator", "rdma", "mig", "mps", "time_slicing",
                       "vendor_sharing", "node_autoscaling", "scale_to_zero", "spot_nodes", "rwx_storage",
                       "gang_scheduling", "documented_only"), True),
    (_("Provider and location"), ("provider", "provider_kind", "country", "continent", "region"), False),
    (_("Availability and freshness"), ("available", "seen_within_hours", "include_inactive"), False),
)
# Multiple-choice filters with few choices are shown as a row of checkboxes instead of a list box.
INLINE_CHOICES = 6
BOOLEAN_FILTERS = {name for name, f in OfferFilterSet.base_filters.items() if isinstance(f, BooleanFilter)}


@dataclass
class FilterField:
    field: forms.BoundField
    errors: forms.utils.ErrorList | None = None
    guide: str = ""
    explain: str = ""  # the guide link's accessible name
    inline: bool = False
    scroll: bool = False


def _filter_groups(form: forms.Form) -> list[tuple[str, list[FilterField], bool]]:
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
            if isinstance(OfferFilterSet.base_filters.get(name), MultipleChoiceFilter):
                item.inline = len(field.choices) <= INLINE_CHOICES
                item.scroll = not item.inline
            items.append(item)
        # A group opens when one of its filters is set or wrong, so a shared link shows what it filters by.
        opened = default or any(item.field.value() not in (None, "", [], "unknown") or item.errors for item in items)
        result.append((label, items, opened))
    return result


ORDER_LABELS = {
    "price_per_gpu_hour": _("Price per GPU-hour, lowest first"),
    "-price_per_gpu_hour": _("Price per GPU-hour, highest first"),
    "price_hour": _("Price per instance-hour, lowest first"),
    "-price_hour": _("Price per instance-hour, highest first"),
    "spot_price_per_gpu_hour": _("Spot price per GPU-hour, lowest first"),
    "-spot_price_per_gpu_hour": _("Spot price per GPU-hour, highest first"),
    "gpu_memory": _("Memory per GPU, smallest first"),
    "-gpu_memory": _("Memory per GPU, largest first"),
    "gpu_count": _("GPUs per instance, fewest first"),
    "-gpu_count": _("GPUs per instance, most first"),
    "provider": _("Provider, A to Z"),
    "-provider": _("Provider, Z to A"),
    "last_seen": _("Last seen, oldest first"),
    "-last_seen": _("Last seen, newest first"),
}


def _choice_label(name: str, value: str, label):
    """Translated labels for choices the FilterSet lists as raw values (`managed`, `infiniband`, ...)."""
    if str(label) != str(value):
        return label
    if name == "rdma":
        return QUESTIONS[value].label if value in QUESTIONS else _("any RDMA fabric")
    return VALUE_LABELS.get(value, label)


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
                field.widget = RememberedCheckboxes()
                if isinstance(field.choices, CallableChoiceIterator):
                    field.choices = field.choices  # read per request; their labels are names already
                else:
                    field.choices = [(value, _choice_label(name, value, label)) for value, label in field.choices]
            elif name in BOOLEAN_FILTERS:
                field.widget.choices = [("unknown", _("any")), ("true", _("yes")), ("false", _("no"))]
            elif name == "ordering":
                # django-filter's choice fields prepend `empty_label` themselves.
                field.empty_label = _("Cheapest per GPU-hour first (default)")
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
            for field in super().form.fields.values():
                if isinstance(getattr(field, "choices", None), CallableChoiceIterator):
                    field.choices = ChoicesRead(list(field.choices))
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



# --- display options (not filters) ------------------------------------------------------------------------------


class OptionSelect(forms.Select):
    """A select whose options listed in `disabled_values` cannot be chosen (a currency with no rate loaded)."""

    disabled_values: frozenset[str] = frozenset()

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        if str(value) in self.disabled_values:
            option["attrs"]["disabled"] = True
        return option


UNITS = (("gpu", _("per GPU-hour")), ("instance", _("per instance-hour")))


class DisplayForm(forms.Form):
    currency = forms.ChoiceField(label=_("Currency"), required=False, widget=OptionSelect)
    unit = forms.ChoiceField(label=_("Price"), required=False, choices=UNITS, widget=forms.RadioSelect)

    def __init__(self, data, *, rates: dict[str, Conversion]):
        # Absent options mean the defaults, so the radio buttons and the select always show what is displayed.
        chosen = {key: data.get(key) for key in ("currency", "unit") if data.get(key)}
        data = {"currency": "USD", "unit": "gpu", **chosen}
        super().__init__(data)
        self.rates = rates
        choices = []
        for code in DISPLAY_CURRENCIES:
            conversion = rates[code]
            if code == "USD":
                label = "USD"
            elif conversion.available:
                label = gettext("%(code)s (ECB rate of %(date)s)") % {
                    "code": code, "date": date_format(conversion.rate_date, "SHORT_DATE_FORMAT")}
            else:
                label = gettext("%(code)s: no exchange rate loaded") % {"code": code}
            choices.append((code, label))
        self.fields["currency"].choices = choices
        self.fields["currency"].widget.disabled_values = frozenset(
            code for code in DISPLAY_CURRENCIES if not rates[code].available)

    def clean_currency(self):
        code = self.cleaned_data.get("currency") or "USD"
        if not self.rates[code].available:
            raise forms.ValidationError(
                _("No %(code)s exchange rate is loaded yet, so prices are shown in USD."), params={"code": code})
        return code

    def conversion(self) -> Conversion:
        code = self.cleaned_data.get("currency") if self.is_valid() else None
        return self.rates[code or "USD"]

    def unit_value(self) -> str:
        unit = self.data.get("unit")
        return unit if unit in dict(UNITS) else "gpu"


def _conversions() -> dict[str, Conversion]:
    rate_date, per_eur = selectors.exchange_rates_day()
    return conversions(per_eur, rate_date)


# --- query strings ---------------------------------------------------------------------------------------------------


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


def _with(params: QueryDict, **changes) -> str:
    query = params.copy()
    for key, value in changes.items():
        query.pop(key, None)
        if value is not None:
            query[key] = value
    encoded = query.urlencode()
    return f"?{encoded}" if encoded else "?"


# --- rows: prices, freshness, capability badges ----------------------------------------------------------------------

VALUE_LABELS = {
    "yes": _("yes"), "no": _("no"), "n/a": _("not applicable"), UNKNOWN: _("unknown"),
    "managed": _("managed control plane"), "byo": _("bring your own cluster"), "none": _("no Kubernetes"),
    "free": _("free"), "paid": _("paid"), "preinstalled": _("preinstalled"), "add_on": _("add-on"),
    "user_installs": _("you install it"), "partial": _("partially"), "paid_unstated": _("paid, amount not stated"),
}
# Short answers for capability cells in tables (the long VALUE_LABELS go into sentences and tooltips).
SHORT_VALUES = {
    "yes": _("yes"), "no": _("no"), "n/a": _("n/a"), "managed": _("managed"), "byo": _("BYO"),
    "none": _("none"), "free": _("free"), "paid": _("paid"), "preinstalled": _("preinstalled"),
    "add_on": _("add-on"), "user_installs": _("you install"), "partial": _("partial"),
    "paid_unstated": _("paid (amount?)"),
}


def label_cells(cells) -> None:
    """Give capability cells their translated short answer (`value_text`) for the templates."""
    for cell in cells:
        if cell is not None:
            cell.value_text = SHORT_VALUES.get(cell.value, cell.value)


GLYPHS = {"yes": "✓", "managed": "✓", "free": "✓", "preinstalled": "✓", "no": "✗", "none": "✗", "n/a": "–",
          UNKNOWN: "?", "byo": "◐", "add_on": "◐", "paid": "◐", "user_installs": "◐"}
TONES = {"yes": "y", "managed": "y", "free": "y", "preinstalled": "y", "no": "n", "none": "n", "n/a": "na",
         UNKNOWN: "u", "byo": "p", "add_on": "p", "paid": "p", "user_installs": "p"}
# The capability badges on every offer row, in this order (rdma folds the four fabrics into one badge).
ROW_BADGES = (
    ("offering", pgettext_lazy("badge", "K8s")), ("mig", pgettext_lazy("badge", "MIG")),
    ("rdma", pgettext_lazy("badge", "RDMA")), ("scale_to_zero", pgettext_lazy("badge", "Scale to 0")),
    ("spot_nodes", pgettext_lazy("badge", "Spot")), ("rwx_storage", pgettext_lazy("badge", "RWX")),
)
FABRIC_SHORT = {"infiniband": "IB", "roce": "RoCE", "efa": "EFA", "gpudirect_tcpx": "TCPX"}


@dataclass
class Badge:
    text: str
    tone: str
    tip: str
    url: str = ""


def _cell_sentence(cell: BadgeCell | None, question_label) -> str:
    if cell is None or cell.value == UNKNOWN:
        return gettext("%(question)s: unknown, we found no source yet") % {"question": question_label}
    host = urlsplit(cell.source_url).hostname or cell.source_url
    answer = str(VALUE_LABELS.get(cell.value, cell.value))
    label = in_language(cell.label, cell.label_zh)
    if label:
        answer = f"{answer} ({label})"
    return gettext("%(question)s: %(answer)s. Source: %(source)s, verified %(date)s") % {
        "question": question_label, "answer": answer, "source": host,
        "date": date_format(cell.verified_on, "DATE_FORMAT") if cell.verified_on else gettext("unknown"),
    }


def capability_badge(key: str, short, cells: dict[str, Capability]) -> Badge:
    """The badge of one capability (or of the RDMA fabrics together) for one provider's cells."""
    if key != "rdma":
        cell = cells.get(key)
        value = cell.value if cell else UNKNOWN
        return Badge(f"{short}{GLYPHS.get(value, '?')}", TONES.get(value, "u"),
                     _cell_sentence(cell, QUESTIONS[key].label), cell.source_url if cell else "")
    fabric_cells = {fabric: cells.get(fabric) for fabric in RDMA_FABRICS}
    yes = [fabric for fabric, cell in fabric_cells.items() if cell and cell.value == "yes"]
    known = all(cell and cell.value != UNKNOWN for cell in fabric_cells.values())
    tip = " · ".join(_cell_sentence(cell, QUESTIONS[fabric].label) for fabric, cell in fabric_cells.items()
                     if cell and cell.value != UNKNOWN) or gettext("RDMA fabric: unknown, we found no source yet")
    if yes:
        text = "+".join(FABRIC_SHORT[fabric] for fabric in yes) + "✓"
        return Badge(text, "y", tip, fabric_cells[yes[0]].source_url)
    if known:
        return Badge(f"{short}✗", "n", tip)
    return Badge(f"{short}?", "u", tip)


class BadgeCell(NamedTuple):
    """What a badge shows of a capability cell: its value, label, source and verified date."""

    key: str
    value: str
    label: str
    label_zh: str
    source_url: str
    verified_on: date | None


BADGE_KEYS = frozenset(key for key, _short in ROW_BADGES if key != "rdma") | set(RDMA_FABRICS)


def badge_answers(*, provider_ids) -> dict[int, tuple[BadgeCell, ...]]:
    """What the badges of these providers show, per provider (providers without any answer are absent)."""
    answers = selectors.capability_answers(provider_ids=provider_ids, keys=sorted(BADGE_KEYS))
    return {provider_id: tuple(BadgeCell(*answer) for answer in rows) for provider_id, rows in answers.items()}


@lru_cache(maxsize=2048)
def row_badges_html(language: str, cells: tuple[BadgeCell, ...]) -> str:
    """A provider's capability badges as HTML, in the active language. Kept per language and per content of the
    cells (not per provider), so an edited cell is a new entry, never a stale one."""
    by_key = {cell.key: cell for cell in cells}
    badges = [capability_badge(key, short, by_key) for key, short in ROW_BADGES]
    return render_to_string("offers/_badges.html", {"badges": badges})


def _stale_cutoff(now: datetime) -> datetime:
    return now - timedelta(hours=settings.STALE_AFTER_HOURS)


def is_stale(offer: Offer, cutoff: datetime) -> bool:
    """Stale when the offer's source has not succeeded since the cutoff (or, for a source that never recorded a
    success, when the offer itself was last seen before it). An `is_stale` annotation, when a selector adds one,
    wins."""
    annotated = getattr(offer, "is_stale", None)
    if annotated is not None:
        return bool(annotated)
    confirmed = offer.source.last_success_at or offer.last_seen
    return confirmed < cutoff


def decorate_offers(rows: list[dict], *, conversion: Conversion, unit: str) -> list[dict]:
    """Give each row of selectors.offer_rows (the API's rows) its `html`: the offers table's row, with the price in
    the display currency and unit, capability badges, freshness and links, in the active language.

    One query (the capability answers of the providers on the page) whatever the number of rows."""
    page = RowFormat(rows, conversion=conversion, unit=unit)
    for row in rows:
        row["html"] = page.row_html(row)
    return rows


class RowFormat:
    """What the rows of one page share, made once: the language, currency and unit, the translated words, and what
    is the same for every row of a provider, a GPU model or a value (badges, links, dates: the offers of one scrape
    run share their last_seen). The offers page must stay within twice the API's time for the same query
    (bench/pages.py), and rendering a template per row took longer than the API's whole request."""

    def __init__(self, rows: list[dict], *, conversion: Conversion, unit: str):
        self.answers = badge_answers(provider_ids={row["provider_id"] for row in rows})
        self.language = get_language()
        self.zone = timezone.get_current_timezone_name()
        self.conversion = conversion
        self.per_gpu = unit == "gpu"
        self.words = {word: escape(gettext(word)) for word in (
            "unknown", "not stated", "stale", "GPU name not in our catalog")}
        self.availability = {value: str(label) for value, label in Offer._meta.get_field("availability").choices}
        self.offer_url_head, self.offer_url_tail = reverse("offer-detail", args=[0]).rsplit("0", 1)
        self.badges_html = lru_cache(maxsize=None)(
            lambda provider_id: row_badges_html(self.language, self.answers.get(provider_id, ())))
        self.url = lru_cache(maxsize=None)(lambda name, slug: escape(reverse(name, args=[slug])))
        self.number = lru_cache(maxsize=None)(lambda value, arg: floatformat(value, arg))
        self.seen = lru_cache(maxsize=None)(lambda moment: (
            escape(datetime_text(self.language, self.zone, moment)), escape(naturaltime(timezone.localtime(moment)))))

    def price(self, usd: Decimal | None) -> str:
        amount = self.conversion.convert(usd)
        if amount is None:
            return ""
        return escape(f"{self.conversion.symbol}{price_number(self.language, amount)}")

    def row_html(self, row: dict) -> SafeString:
        """One row of the offers table (templates/offers/_table.html), written here like the rows of Django admin's
        change lists. Every value from the data is escaped."""
        words = self.words
        unknown = f'<span class="u">{words["unknown"]}</span>'
        provider = escape(in_language(row["provider__name"], row["provider__name_zh"]))
        if row["gpu_id"] is not None:
            gpu = f'<a href="{self.url("gpu-detail", row["gpu__slug"])}">{escape(row["gpu__name"])}</a>'
        else:
            gpu = f'<span class="u" title="{words["GPU name not in our catalog"]}">{escape(row["gpu_name"])} ?</span>'
        price = self.price(row["price_per_gpu_hour_usd"] if self.per_gpu else row["price_hour_usd"]) or unknown
        spot = self.price(row["spot_price_per_gpu_hour_usd"] if self.per_gpu else row["spot_price_hour_usd"])
        memory = f"{self.number(row['gpu_memory_gb'], '-1')} GB" if row["gpu_memory_gb"] else ""
        if row["availability"] == "unknown":
            availability = unknown
        else:
            text = self.availability.get(row["availability"], row["availability"])
            if row["available_count"] is not None:
                text = f"{text} ({intcomma(row['available_count'])})"
            availability = f'<span class="av av-{escape(row["availability"])}">{escape(text)}</span>'
        seen_at, seen = self.seen(row["last_seen"])
        stale = f' · <strong>{words["stale"]}</strong>' if row["is_stale"] else ""
        region = escape(row["region"]) if row["region"] else words["not stated"]
        if row["country"]:
            region = f"{region} <small>{escape(row['country'])}</small>"
        offer_url = f"{self.offer_url_head}{row['id']}{self.offer_url_tail}"
        return SafeString(
            "<tr>\n"
            f'<td><a href="{self.url("provider-detail", row["provider__slug"])}">{provider}</a></td>\n'
            f"<td>{gpu}</td>\n"
            f'<td class="num price">{price}</td>\n'
            f'<td class="num">{spot or NO_SPOT}</td>\n'
            f'<td class="badges">{self.badges_html(row["provider_id"])}</td>\n'
            f'<td class="num">{escape(self.number(row["gpu_count"], "-3"))}</td>\n'
            f'<td class="num">{escape(memory) if memory else unknown}</td>\n'
            f"<td>{availability}</td>\n"
            f'<td><span class="fresh{" stale" if stale else ""}" title="{seen_at}">{seen}{stale}</span></td>\n'
            f'<td><a href="{escape(offer_url)}"><code>{escape(row["instance_type"])}</code></a></td>\n'
            f"<td>{region}</td>\n"
            "</tr>\n"
        )


@lru_cache(maxsize=4096)
def datetime_text(language: str, zone: str, moment: datetime) -> str:
    """`moment` in DATETIME_FORMAT for the language and time zone given, which must be the active ones. Kept because
    it is a pure function of its arguments and the offers of one scrape run share one last_seen on every page."""
    return date_format(timezone.localtime(moment), "DATETIME_FORMAT")


@lru_cache(maxsize=8192)
def price_number(language: str, amount: Decimal) -> str:
    """A price with three decimals and grouping for the language given, which must be the active one (kept like
    datetime_text: the same offers are listed on many pages)."""
    return floatformat(amount, "3g")


NO_SPOT = '<span class="u">—</span>'


def provider_badges_html(provider_id: int) -> str:
    """One provider's row badges (the offer page shows them beside its facts)."""
    return row_badges_html(get_language(), badge_answers(provider_ids=[provider_id]).get(provider_id, ()))


# --- sorting -------------------------------------------------------------------------------------------------------

SORTABLE = {
    # column -> ordering name in the FilterSet, per price unit where it differs
    "price": {"gpu": "price_per_gpu_hour", "instance": "price_hour"},
    "spot": {"gpu": "spot_price_per_gpu_hour"},
    "gpu_memory": {"gpu": "gpu_memory", "instance": "gpu_memory"},
    "gpu_count": {"gpu": "gpu_count", "instance": "gpu_count"},
    "provider": {"gpu": "provider", "instance": "provider"},
    "last_seen": {"gpu": "last_seen", "instance": "last_seen"},
}


@dataclass
class SortLink:
    url: str = ""
    aria: str = "none"
    arrow: str = ""


@dataclass
class Column:
    label: str
    sort: SortLink | None = None
    num: bool = False


def offer_columns(params: QueryDict, unit: str, ordering: list[str]) -> list[Column]:
    """The offers table's header: labels, and for sortable columns the link that sorts by them (or reverses)."""
    links = _sort_links(params, unit, ordering)
    price = _("Price / GPU-hour") if unit == "gpu" else _("Price / hour")
    # What decides a choice comes first (price, Kubernetes), so it stays in view on narrow screens.
    return [
        Column(_("Provider"), links["provider"]), Column(_("GPU")), Column(price, links["price"], num=True),
        Column(_("Spot"), links["spot"] if links["spot"].url else None, num=True), Column(_("Kubernetes")),
        Column(_("GPUs"), links["gpu_count"], num=True), Column(_("Memory / GPU"), links["gpu_memory"], num=True),
        Column(_("Availability")), Column(_("Last seen"), links["last_seen"]), Column(_("Instance")),
        Column(_("Region")),
    ]


def plain_columns() -> list[Column]:
    """The offers table's header without sort links (provider and GPU pages list offers cheapest first)."""
    return [Column(column.label, None, column.num) for column in offer_columns(QueryDict(), "gpu", [])]


def _sort_links(params: QueryDict, unit: str, ordering: list[str]) -> dict[str, SortLink]:
    current = ordering[0] if ordering else "price_per_gpu_hour"
    links = {}
    for column, names in SORTABLE.items():
        name = names.get(unit)
        if not name:
            links[column] = SortLink()
            continue
        if current == name:
            links[column] = SortLink(_with(params, ordering=f"-{name}", page=None), "ascending", "▲")
        elif current == f"-{name}":
            links[column] = SortLink(_with(params, ordering=name, page=None), "descending", "▼")
        else:
            links[column] = SortLink(_with(params, ordering=name, page=None))
    return links


# --- pages ---------------------------------------------------------------------------------------------------------


def offer_page(filterset: OfferFilterSet, number) -> Page:
    """A page of a valid filterset's offers, read as the API reads them: the page's ids from the bare offer table in
    index order and the (briefly cached) count, then the API's rows for those ids only (selectors.offer_rows: plain
    dicts, no model instances). Page numbers behave as Paginator.get_page's (past the end: the last page; not a
    number: the first)."""
    ids = selectors.offer_ids(filterset=filterset)
    paginator = Paginator(ids, PER_PAGE)
    paginator.count = selectors.offer_count(filterset=filterset)  # a cached_property: setting it skips Django's own
    page = paginator.get_page(number)
    # Sliced by the page size rather than up to the count, which may be a cached one: rows are always read live.
    start = (page.number - 1) * PER_PAGE
    page.object_list = selectors.offer_rows(ids=list(ids[start:start + PER_PAGE]))
    return page


def _is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False)) and not request.htmx.history_restore_request


def offers(request: HttpRequest) -> HttpResponse:
    """The home page: the filter panel, the results, and (for htmx requests) the results alone."""
    params = canonical_query(request.GET)
    if not _is_htmx(request) and len(params.urlencode()) < len(request.GET.urlencode()):
        # A plain form submission sends every empty field; answer with the short, shareable URL.
        return HttpResponseRedirect(f"{request.path}{_with(params)}" if params else request.path)

    filterset = OfferPanelFilterSet(params, request=request)
    display = DisplayForm(params, rates=_conversions())
    conversion, unit = display.conversion(), display.unit_value()
    valid = filterset.is_valid()
    page = None
    if valid:
        page = offer_page(filterset, params.get("page"))
        page.object_list = decorate_offers(page.object_list, conversion=conversion, unit=unit)

    ordering = filterset.form.cleaned_data.get("ordering") if valid else None
    filters_only = filter_query(params)
    context = {
        "filterset": filterset,
        "valid": valid,
        "form": filterset.form,
        "groups": _filter_groups(filterset.form),
        "display": display,
        "conversion": conversion,
        "unit": unit,
        "page": page,
        "columns": offer_columns(params, unit, list(ordering or [])),
        "params": params,
        "query": params.urlencode(),
        "filter_query": filters_only,
        "csv_url": f"{API_OFFERS_PATH}?{urlencode({'format': 'csv'})}{'&' + filters_only if filters_only else ''}",
        "api_url": f"{API_OFFERS_PATH}{'?' + filters_only if filters_only else ''}",
        "subscribe_url": f"{DIGEST_SUBSCRIBE_PATH}{'?' + filters_only if filters_only else ''}",
        "chart_link": f"/charts/{'?' + filters_only if filters_only else ''}",
        "guides": GUIDES,
    }
    status = 200 if valid and display.is_valid() else 400
    if _is_htmx(request):
        # The form itself is re-sent out of band only when a link (sort, page) changed the query, so typing in the
        # panel never loses focus while the panel still shows the ordering a header click chose.
        context["oob_form"] = request.htmx.trigger != "filters"
        context["partial"] = True
        response = render(request, "offers/_results.html", context, status=status)
        response["HX-Push-Url"] = f"{request.path}{_with(params)}" if params else request.path
        return response
    return render(request, "offers/index.html", context, status=status)


def charts(request: HttpRequest) -> HttpResponse:
    """Price per GPU-hour by GPU model across providers for the offers the same filters select."""
    from . import charts as figures

    params = canonical_query(request.GET)
    filterset = offer_filterset(params, request=request)
    display = DisplayForm(params, rates=_conversions())
    conversion = display.conversion()
    context = {"filterset": filterset, "display": display, "conversion": conversion,
               "filter_query": filter_query(params), "query": params.urlencode()}
    if not filterset.is_valid():
        return render(request, "charts.html", context, status=400)
    points = selectors.offer_price_points(offers=filterset.qs)
    axis = gettext("%(currency)s per GPU-hour") % {"currency": conversion.currency}
    figure = figures.price_distribution(points, conversion, title="", axis_title=axis)
    context.update({
        "figure": figures.figure_json(figure),
        "spread": figures.price_spread(points, conversion),
        "point_count": len(points),
        "axis_title": axis,
    })
    return render(request, "charts.html", context)


def offer_detail(request: HttpRequest, pk: int) -> HttpResponse:
    from . import charts as figures

    offer = get_object_or_404(selectors.offer_list(include_inactive=True), pk=pk)
    display = DisplayForm(canonical_query(request.GET), rates=_conversions())
    conversion = display.conversion()
    offer.display_price = conversion.convert(offer.price_per_gpu_hour_usd)
    offer.display_spot = conversion.convert(offer.spot_price_per_gpu_hour_usd)
    offer.stale = is_stale(offer, _stale_cutoff(timezone.now()))
    offer.badges_html = provider_badges_html(offer.provider_id)
    history = list(selectors.offer_price_history(offer=offer))
    axis = gettext("%(currency)s per GPU-hour") % {"currency": conversion.currency}
    rows = [{"observed_at": obs.observed_at, "price_hour_usd": obs.price_hour_usd,
             "spot_price_hour_usd": obs.spot_price_hour_usd} for obs in history]
    figure = figures.offer_history(
        rows, gpu_count=offer.gpu_count, until=offer.last_seen, conversion=conversion,
        names={"on_demand": gettext("On-demand"), "spot": gettext("Spot")}, axis_title=axis)
    for obs in history:
        count = offer.gpu_count or 1
        obs.display_price = conversion.convert(obs.price_hour_usd / count if obs.price_hour_usd is not None else None)
        obs.display_spot = conversion.convert(
            obs.spot_price_hour_usd / count if obs.spot_price_hour_usd is not None else None)
    return render(request, "offers/detail.html", {
        "offer": offer, "history": history, "figure": figures.figure_json(figure) if history else "",
        "conversion": conversion, "display": display,
    })


def gpu_index(request: HttpRequest) -> HttpResponse:
    display = DisplayForm(canonical_query(request.GET), rates=_conversions())
    conversion = display.conversion()
    gpus = list(selectors.gpu_model_list())
    for gpu in gpus:
        gpu.display_cheapest = conversion.convert(gpu.cheapest_usd)
    return render(request, "gpus/index.html", {"gpus": gpus, "conversion": conversion, "display": display})


def gpu_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Every offer of one accelerator (through the shared FilterSet), its price spread, memory and MIG profiles."""
    from . import charts as figures

    gpu = get_object_or_404(selectors.gpu_model_list(), slug=slug)
    params = canonical_query(request.GET)
    display = DisplayForm(params, rates=_conversions())
    conversion = display.conversion()
    query = params.copy()
    query.setlist("gpu", [gpu.slug])
    filterset = offer_filterset(query, request=request)
    if not filterset.is_valid():
        raise Http404("invalid parameters")  # only `ordering`/`page` come from the user here
    page = offer_page(filterset, params.get("page"))
    page.object_list = decorate_offers(page.object_list, conversion=conversion, unit="gpu")
    points = selectors.offer_price_points(offers=filterset.qs)
    axis = gettext("%(currency)s per GPU-hour") % {"currency": conversion.currency}
    spread_figure = figures.price_distribution(points, conversion, by="provider", axis_title=axis)
    daily = figures.daily_series(selectors.gpu_price_history(gpu=gpu), today=timezone.now(), conversion=conversion)
    history_figure = figures.gpu_history(
        daily, conversion=conversion, axis_title=axis,
        names={"min": gettext("Cheapest on-demand"), "median": gettext("Median on-demand"),
               "spot": gettext("Cheapest spot")})
    return render(request, "gpus/detail.html", {
        "gpu": gpu, "page": page, "conversion": conversion, "display": display,
        "spread": figures.price_spread_by_provider(points, conversion),
        "spread_figure": figures.figure_json(spread_figure) if points else "",
        "history_figure": figures.figure_json(history_figure) if not daily.empty else "",
        "params": params, "offers_url": f"/?gpu={gpu.slug}", "columns": plain_columns(),
    })


def provider_index(request: HttpRequest) -> HttpResponse:
    providers = list(selectors.provider_list())
    rows = []
    for provider in providers:
        cells = {cap.key: cap for cap in provider.capabilities.all()}
        rows.append((provider, [cells.get(question.key) for question in CAPABILITIES]))
        label_cells(cells.values())
    questions = [(q, guide_url(*CAPABILITY_GUIDES[q.key]) if q.key in CAPABILITY_GUIDES else "") for q in CAPABILITIES]
    return render(request, "providers/index.html", {"rows": rows, "questions": questions})


def _capability_groups(cells: dict[str, Capability]):
    groups = []
    for group_key, group_label in GROUPS.items():
        items = [(q, cells.get(q.key), guide_url(*CAPABILITY_GUIDES[q.key]) if q.key in CAPABILITY_GUIDES else "")
                 for q in CAPABILITIES if q.group == group_key]
        groups.append((group_label, items))
    return groups


def provider_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Capability matrix with sources, managed versus bring-your-own for this provider, facts from its API, its
    offers (through the shared FilterSet) and the health of its data sources and of our source links."""
    provider = get_object_or_404(selectors.provider_list(), slug=slug)
    cells = {cap.key: cap for cap in provider.capabilities.all()}
    label_cells(cells.values())
    display = DisplayForm(canonical_query(request.GET), rates=_conversions())
    conversion = display.conversion()
    filterset = offer_filterset(QueryDict(urlencode({"provider": provider.slug})), request=request)
    filterset.is_valid()
    page = offer_page(filterset, request.GET.get("page"))
    page.object_list = decorate_offers(page.object_list, conversion=conversion, unit="gpu")
    sources = [(source, run) for source, run in selectors.source_status_list() if source.provider_id == provider.id]
    links = selectors.link_check_map(urls=[cap.source_url for cap in cells.values() if cap.source_url])
    offering = cells.get("offering")
    return render(request, "providers/detail.html", {
        "provider": provider, "groups": _capability_groups(cells), "page": page, "conversion": conversion,
        "display": display, "offering": offering.value if offering else UNKNOWN, "offering_cell": offering,
        "facts": list(selectors.kubernetes_fact_list(provider=provider)), "sources": sources,
        "broken_links": [check for check in links.values() if not check.ok],
        "checked_links": len(links), "stale_cutoff": _stale_cutoff(timezone.now()),
        "guide_managed": guide_url("kubernetes-support", "managed-vs-byo"),
        "columns": plain_columns(), "params": canonical_query(request.GET),
    })


class CompareForm(forms.Form):
    provider = forms.MultipleChoiceField(label=_("Providers to compare (two to four)"),
                                         widget=forms.CheckboxSelectMultiple)

    def __init__(self, data, *, providers: list[Provider]):
        super().__init__(data)
        self.fields["provider"].choices = [(p.slug, p.name) for p in providers]

    def clean_provider(self):
        chosen = self.cleaned_data["provider"]
        if not 2 <= len(chosen) <= 4:
            raise forms.ValidationError(_("Choose between two and four providers."))
        return chosen


def compare(request: HttpRequest) -> HttpResponse:
    """Two to four providers side by side: every capability (rows that differ highlighted) and the cheapest offer
    of each GPU model per provider (the cheapest of a row highlighted)."""
    providers = list(selectors.provider_list())
    params = canonical_query(request.GET)
    # Accept `provider=a,b` as the FilterSet does, so a link from the offers page's query works here too.
    data = QueryDict(mutable=True)
    data.setlist("provider", [s for v in params.getlist("provider") for s in v.split(",") if s])
    form = CompareForm(data if "provider" in params else None, providers=providers)
    display = DisplayForm(params, rates=_conversions())
    conversion = display.conversion()
    context = {"form": form, "display": display, "conversion": conversion}
    if not form.is_bound or not form.is_valid():
        return render(request, "compare.html", context, status=400 if form.is_bound else 200)
    by_slug = {p.slug: p for p in providers}
    chosen = [by_slug[slug] for slug in dict.fromkeys(form.cleaned_data["provider"])]
    cells = {p.id: {cap.key: cap for cap in p.capabilities.all()} for p in chosen}
    for provider_cells in cells.values():
        label_cells(provider_cells.values())
    rows = []
    for group_key, group_label in GROUPS.items():
        for q in (q for q in CAPABILITIES if q.group == group_key):
            row_cells = [cells[p.id].get(q.key) for p in chosen]
            values = {cell.value if cell else UNKNOWN for cell in row_cells}
            rows.append({"group": group_label, "question": q, "cells": row_cells, "differs": len(values) > 1,
                         "guide": guide_url(*CAPABILITY_GUIDES[q.key]) if q.key in CAPABILITY_GUIDES else ""})
    cheapest = selectors.cheapest_offers_by_gpu(provider_ids=[p.id for p in chosen])
    gpus = sorted({offer.gpu for offer in cheapest.values()}, key=lambda g: (g.vendor, g.family, g.name))
    price_rows = []
    for gpu in gpus:
        offers_row = [cheapest.get((p.id, gpu.id)) for p in chosen]
        for offer in offers_row:
            if offer is not None:
                offer.display_price = conversion.convert(offer.price_per_gpu_hour_usd)
        prices = [o.price_per_gpu_hour_usd for o in offers_row if o is not None]
        price_rows.append({"gpu": gpu, "offers": offers_row, "best": min(prices) if len(prices) > 1 else None})
    context.update({"providers": chosen, "rows": rows, "price_rows": price_rows})
    return render(request, "compare.html", context)


def source_status(request: HttpRequest) -> HttpResponse:
    return render(request, "sources.html", {"sources": selectors.source_status_list()})


def guide_index(request: HttpRequest) -> HttpResponse:
    return render(request, "guides/index.html", {"guides": GUIDES})


def guide_template(slug: str, language: str | None) -> str:
    """Our guides are written per language (prose, not UI strings); English is the fallback."""
    candidates = [f"guides/{(language or 'en').lower()}/{slug}.html", f"guides/en/{slug}.html"]
    return select_template(candidates).template.name


def guide_detail(request: HttpRequest, slug: str) -> HttpResponse:
    if slug not in GUIDES:
        raise Http404("no such guide")
    try:
        template = guide_template(slug, get_language())
    except TemplateDoesNotExist as error:
        logger.error("guide %s has no template: %s", slug, error)
        raise Http404("no such guide") from error
    return render(request, template, {"guides": GUIDES, "slug": slug, "title": GUIDES[slug]})
