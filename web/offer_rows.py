"""The offers table: its columns and sort links, a page of offers read as the API reads them, and each row's HTML
(price in the display currency and unit, badges, freshness, links) in the active language."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from html import escape

from django.contrib.humanize.templatetags.humanize import intcomma, naturaltime
from django.core.paginator import Page, Paginator
from django.http import QueryDict
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, ngettext, pgettext
from django.utils.translation import gettext_lazy as _

from providers import offer_reads, pricing
from providers.filters import CONTINENTS, OfferFilterSet
from providers.models import Offer, in_language
from providers.presentation import SUB_CENT, day_html, gpu_name, money
from scrapers.normalize import GLOBAL

from .availability import share_text, when_text
from .badges import kubernetes_row_cell_html
from .currency import Conversion
from .display import HOURS_PER_MONTH
from .querystrings import with_params

logger = logging.getLogger(__name__)


PER_PAGE = 50


def decorate_offers(rows: list[dict], *, conversion: Conversion, unit: str, period: str = "hour") -> list[dict]:
    """Give each row of offer_reads.offer_rows (the API's rows) its `html`: the offers table's row, with the price in
    the display currency, unit and period (per hour, or per month of HOURS_PER_MONTH), capability badges,
    freshness and links, in the active language.

    One query (the capability answers of the providers on the page) whatever the number of rows."""
    page = RowFormat(rows, conversion=conversion, unit=unit, period=period)
    for row in rows:
        row["html"] = page.row_html(row)
    return rows



def place_text(country: str, continent: str, region: str = "") -> str:
    """Where an offer is, as finely as its source says: the country code, else the continent's name, else "global"
    for a price the source ties to no region (scrapers.normalize.GLOBAL); "" when nothing is known, or when it would
    only repeat the region (CoreWeave's region is "Europe")."""
    if country:
        return country
    if continent == GLOBAL:
        return gettext("global: the price names no region")
    text = str(dict(CONTINENTS).get(continent, ""))
    return "" if text == region else text

class RowFormat:
    """What the rows of one page share, made once: the language, currency and unit, the translated words, and what
    is the same for every row of a provider, a GPU model or a value (badges, links, dates: the offers of one scrape
    run share their last_seen). The offers page must stay within twice the API's time for the same query
    (bench/pages.py), and rendering a template per row took longer than the API's whole request."""

    def __init__(self, rows: list[dict], *, conversion: Conversion, unit: str, period: str = "hour"):
        self.language = get_language()
        self.zone = timezone.get_current_timezone_name()
        self.conversion = conversion
        self.per_gpu = unit == "gpu"
        self.hours = HOURS_PER_MONTH if period == "month" else 1
        self.words = {word: escape(gettext(word)) for word in (
            "unknown", "not stated", "GPU name not in our catalog", "Spot", "GPUs", "Memory / GPU", "Availability",
            "Last seen")}
        # Spelled out so makemessages finds them (the tuple above holds strings the templates also use).
        self.words.update({
            "as of": escape(gettext("as of")),
            "undated": escape(gettext("undated")),
            "old": escape(gettext("old")),
            "old title": escape(gettext("price dated more than %(days)s days ago") % {"days": pricing.OLD_AFTER_DAYS}),
            "inferred:": escape(gettext("date inferred, not stated by the source:")),
            "read live": escape(gettext("read live")),
            "from a recording": escape(gettext("from a recording")),
            "recording title": escape(gettext("Loaded from a recorded copy of the source, not read live: this is "
                                              "when it was loaded, not when the provider last listed it.")),
            "catalog region": escape(gettext("region per a catalog")),
            "region title": escape(gettext("Only a third-party catalog lists this machine in this region; the provider "
                                           "does not say it is sold here")),
            "share of one GPU; the per-GPU price is per whole GPU": escape(
                gettext("share of one GPU; the per-GPU price is per whole GPU")),
        })
        # A location without a country: the continent, or "global" for a price the source ties to no region.
        self.continents = {code: escape(gettext("global") if code == GLOBAL else place_text("", code))
                           for code, _label in CONTINENTS}
        self.day = lru_cache(maxsize=None)(day_html)
        self.old_before = pricing.old_cutoff(timezone.now()).date()  # a date older than this is "old"
        self.availability = {value: str(label) for value, label in Offer._meta.get_field("availability").choices}
        self.offer_url_head, self.offer_url_tail = reverse("offer-detail", args=[0]).rsplit("0", 1)
        # The rows' Kubernetes cells, kept across requests per profile and its computation time (so a recomputed
        # profile is a new entry, never a stale one).
        self.kubernetes_cells = {}
        for row in rows:
            key = cell_key(self.language, row)
            if key not in CELLS:
                remember(key, kubernetes_row_cell_html(row["kubernetes_profile__answers"],
                                                       profile_id=row["kubernetes_profile_id"]))
            self.kubernetes_cells[row["kubernetes_profile_id"]] = CELLS[key]
        self.url = lru_cache(maxsize=None)(lambda name, slug: escape(reverse(name, args=[slug])))
        # The catalog's qualifiers in the page's language ("(form factor not stated)" -> "（未说明规格）").
        self.gpu_name = lru_cache(maxsize=None)(lambda name, form_factor: escape(gpu_name(name, form_factor)))
        self.number = lru_cache(maxsize=None)(lambda value, arg: floatformat(value, arg))
        self.seen = lru_cache(maxsize=None)(lambda moment: (
            escape(datetime_text(self.language, self.zone, moment)), escape(naturaltime(timezone.localtime(moment)))))

    def spot_advice(self, row: dict) -> str:
        """No spot price but AWS's Spot Advisor share and interruption bucket: shown as what they are."""
        if row["spot_savings_pct"] is None:
            return NO_SPOT
        text = escape(gettext("−%(pct)s%% spot, interruptions %(bucket)s") % {
            "pct": row["spot_savings_pct"], "bucket": row["spot_interruption"]})
        title = escape(gettext("AWS Spot Advisor savings share, not a price"))
        dated = ""
        if row["spot_as_of"] is not None:  # the Advisor's own date, "old" past the prices' threshold (not a price)
            data_of = escape(pgettext("spot advice", "data of"))
            dated = f'<br><span class="as-of">{data_of} {self.day(row["spot_as_of"])}'
            if row["spot_as_of"] < self.old_before:
                old_title = escape(gettext("Spot Advisor data dated more than %(days)s days ago") % {
                    "days": pricing.OLD_AFTER_DAYS})
                dated += f' · <strong class="old" title="{old_title}">{escape(pgettext("spot advice", "old"))}</strong>'
            dated += "</span>"
        return f'<small title="{title}">{text}{dated}</small>'

    def kubernetes_cell(self, row: dict, offer_url: str) -> str:
        """The offer's own Kubernetes answers (not its provider's): one cell per profile, around a link to the
        offer's page (where the answers are without JavaScript)."""
        head, tail = self.kubernetes_cells[row["kubernetes_profile_id"]]
        return f"{head}{offer_url}{tail}" if tail else head

    def price(self, usd: Decimal | None) -> str:
        amount = self.conversion.convert(usd)
        if amount is None:
            return ""
        if self.hours != 1:  # a month's cost: a total, to the cent
            return escape(f"{self.conversion.symbol}{money(amount * self.hours, total=True)}")
        # Per GPU-hour to three decimals (2.499); an instance-hour price to the cent (98.32), as money is written,
        # unless it is below a cent (a slice of a GPU), where the cent would read 0.00.
        to_the_cent = not self.per_gpu and abs(amount) >= SUB_CENT
        return escape(f"{self.conversion.symbol}{money(amount, total=to_the_cent)}")

    def commitments(self, row: dict) -> str:
        """The 1- and 3-year commitment prices under the on-demand one, where a source states them (providers/pricing:
        "prices by term"), so a list sorted by them shows what it is sorted by."""
        if row["commit_1y_price_hour_usd"] is None and row["commit_3y_price_hour_usd"] is None:
            return ""
        parts = []
        for term, text in (("1y", gettext("1-yr commitment %(price)s")), ("3y", gettext("3-yr commitment %(price)s"))):
            price = self.price(row[f"commit_{term}_price_per_gpu_hour_usd" if self.per_gpu
                                   else f"commit_{term}_price_hour_usd"])
            if price:
                parts.append(text % {"price": price})
        return f'<br><small class="commitment">{" · ".join(parts)}</small>'

    def price_date(self, row: dict) -> str:
        """The price's own date and how we know it (providers/pricing.py), shown under the price so it is on screen
        at any width: "as of <date>", "~" and the evidence for an inferred date, "old" past the threshold, or
        "undated". Not when we last read it (the last column says that)."""
        words = self.words
        if row["price_as_of"]:
            day = self.day(row["price_as_of"])
            if row.get("price_dated_by") == "inferred":
                evidence = escape(in_language(row.get("source__price_evidence") or "",
                                               row.get("source__price_evidence_zh") or ""))
                dated = f'{words["as of"]} <abbr title="{words["inferred:"]} {evidence}">~{day}</abbr>'
            else:
                dated = f'{words["as of"]} {day}'
            if row.get("price_is_old"):
                dated = f'{dated} · <strong class="old" title="{words["old title"]}">{words["old"]}</strong>'
            return dated
        if row["source__last_success_at"] and not row["source__revision"]:
            # A live answer that states no date is as fresh as the run that read it; a file pinned at a commit
            # (source revision) is as old as its commit, however recently it was read.
            return f'{words["as of"]} {self.day(row["last_seen"])} ({words["read live"]})'
        return f'<span class="u">{words["undated"]}</span>'

    def retiring(self, row: dict) -> str:
        """A type its provider retires on a coming day carries the day (retired types are not in the live list)."""
        retirement = pricing.retirement_of(row["provider__slug"], row["instance_type"])
        if retirement is None:
            return ""
        text = escape(gettext("retiring on %(day)s") % {"day": date_format(retirement.date, "DATE_FORMAT")})
        link = escape(retirement.source_url)
        return f'<br><small class="retiring"><a href="{link}" rel="noopener">{text}</a></small>'

    def row_html(self, row: dict) -> SafeString:
        """One row of the offers table (templates/offers/_table.html), written here like the rows of Django admin's
        change lists. Every value from the data is escaped."""
        words = self.words
        unknown = f'<span class="u">{words["unknown"]}</span>'
        provider = escape(in_language(row["provider__name"], row["provider__name_zh"]))
        if row["gpu_id"] is not None:
            name = self.gpu_name(row["gpu__name"], row["form_factor"])
            gpu = f'<a href="{self.url("gpu-detail", row["gpu__slug"])}">{name}</a>'
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
            # When and how often: the last check's age (or the recording's date) and the 7-day in-stock share.
            when = when_text(availability=row["availability"], checked_at=row.get("availability_checked_at"),
                             since=row.get("availability_since"), recorded=row.get("availability_recorded"))
            share = share_text(row.get("in_stock_share_7d"))
            if share:
                when = f"{when} · " + gettext("%(share)s in stock over 7 days") % {"share": share}
            if row.get("availability_checked_at") is not None:
                availability = f'{availability} <small class="av-when">{escape(when)}</small>'
        seen_at, seen = self.seen(row["last_seen"])
        if row["source__last_success_at"] is None:  # a replayed recording (the bundled snapshot): no live read
            seen_at, seen = f'{words["recording title"]} ({seen_at})', words["from a recording"]
        dated = self.price_date(row)
        count = escape(self.number(row["gpu_count"], "-3"))
        if row["gpu_fraction"] is not None:
            count = f'<abbr title="{words["share of one GPU; the per-GPU price is per whole GPU"]}">{count}</abbr>'
        # The source's own name for the place: an identifier, not words to translate (translate="no").
        region = f'<span translate="no">{escape(row["region"])}</span>' if row["region"] else words["not stated"]
        if row["country"]:
            region = f"{region} <small>{escape(row['country'])}</small>"
        elif row["continent"] in self.continents and self.continents[row["continent"]] != escape(row["region"]):
            # (as place_text: a continent that only repeats the region, CoreWeave's "Europe", is left out)
            region = f"{region} <small>{self.continents[row['continent']]}</small>"
        if row["region"] and row.get("region_confirmed") is False:
            region = (f'{region} <small class="catalog-region" title="{words["region title"]}">'
                      f'{words["catalog region"]}</small>')
        others = (row.get("machine_regions") or 1) - 1
        if others:  # one row per machine: the cheapest region, and how many more match
            text = ngettext("also in %(count)s more region", "also in %(count)s more regions", others) % {
                "count": intcomma(others)}
            region = f'{region}<br><small class="also-in">{escape(text)}</small>'
        offer_url = escape(f"{self.offer_url_head}{row['id']}{self.offer_url_tail}")
        return SafeString(
            "<tr>\n"
            f'<td><a href="{self.url("provider-detail", row["provider__slug"])}">{provider}</a></td>\n'
            f"<td>{gpu}</td>\n"
            f'<td class="num price">{price}<br><small class="as-of">{dated}</small>{self.commitments(row)}</td>\n'
            f'<td class="num" data-label="{words["Spot"]}">{spot or self.spot_advice(row)}</td>\n'
            f'<td class="badges">{self.kubernetes_cell(row, offer_url)}</td>\n'
            f'<td><a href="{offer_url}"><code>{escape(row["instance_type"])}</code></a>{self.retiring(row)}</td>\n'
            f"<td>{region}</td>\n"
            f'<td class="num" data-label="{words["GPUs"]}">{count}</td>\n'
            f'<td class="num" data-label="{words["Memory / GPU"]}">{escape(memory) if memory else unknown}</td>\n'
            f'<td data-label="{words["Availability"]}">{availability}</td>\n'
            f'<td data-label="{words["Last seen"]}"><span class="fresh" title="{seen_at}">{seen}</span></td>\n'
            "</tr>\n"
        )


@lru_cache(maxsize=4096)
def datetime_text(language: str, zone: str, moment: datetime) -> str:
    """`moment` in DATETIME_FORMAT for the language and time zone given, which must be the active ones. Kept because
    it is a pure function of its arguments and the offers of one scrape run share one last_seen on every page."""
    return date_format(timezone.localtime(moment), "DATETIME_FORMAT")


NO_SPOT = '<span class="u">—</span>'

# Rendered Kubernetes cells (head, tail) and the answer lists their disclosures fetch, by (language, profile id,
# computed_at); bounded, oldest entries dropped first.
CELLS: dict[tuple, tuple[str, str]] = {}
ANSWER_LISTS: dict[tuple, str] = {}
MAX_CELLS = 4096


def cell_key(language: str, row: dict) -> tuple:
    return (language, row["kubernetes_profile_id"], row["kubernetes_profile__computed_at"])


def remember(key: tuple, cell: tuple[str, str]) -> None:
    remember_in(CELLS, key, cell)


def remember_in(store: dict, key: tuple, value):
    if len(store) >= MAX_CELLS:
        del store[next(iter(store))]
    store[key] = value
    return value



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
    key: str = ""  # a column the offers page's "Columns" chooser can hide (static/css/site.css `.hide-<key>`)


PRICE_HEADERS = {("gpu", "hour"): _("Price / GPU-hour"), ("instance", "hour"): _("Price / hour"),
                 ("gpu", "month"): _("Price / GPU-month"), ("instance", "month"): _("Price / month")}


def offer_columns(params: QueryDict, unit: str, ordering: list[str], *, period: str = "hour") -> list[Column]:
    """The offers table's header: labels, and for sortable columns the link that sorts by them (or reverses)."""
    links = _sort_links(params, unit, ordering)
    price = PRICE_HEADERS.get((unit, period), PRICE_HEADERS[("gpu", "hour")])
    # What decides a choice comes first (price, Kubernetes), so it stays in view on narrow screens; then what the
    # offer is (instance type, region), in view without scrolling at 1366 px; the rest can be hidden (site.js).
    return [
        Column(_("Provider"), links["provider"]), Column(_("GPU")), Column(price, links["price"], num=True),
        Column(_("Spot"), links["spot"] if links["spot"].url else None, num=True, key="spot"),
        Column(_("Kubernetes"), key="kubernetes"), Column(_("Instance"), key="instance"),
        Column(_("Region"), key="region"), Column(_("GPUs"), links["gpu_count"], num=True, key="gpus"),
        Column(_("Memory / GPU"), links["gpu_memory"], num=True, key="memory"),
        Column(_("Availability"), key="availability"), Column(_("Last seen"), links["last_seen"], key="seen"),
    ]


def plain_columns() -> list[Column]:
    """The offers table's header without sort links (provider and GPU pages list offers cheapest first)."""
    return [Column(column.label, None, column.num, column.key) for column in offer_columns(QueryDict(), "gpu", [])]


def _sort_links(params: QueryDict, unit: str, ordering: list[str]) -> dict[str, SortLink]:
    current = ordering[0] if ordering else "price_per_gpu_hour"
    links = {}
    for column, names in SORTABLE.items():
        name = names.get(unit)
        if not name:
            links[column] = SortLink()
            continue
        if current == name:
            links[column] = SortLink(with_params(params, ordering=f"-{name}", page=None), "ascending", "▲")
        elif current == f"-{name}":
            links[column] = SortLink(with_params(params, ordering=name, page=None), "descending", "▼")
        else:
            links[column] = SortLink(with_params(params, ordering=name, page=None))
    return links


# --- pages ---------------------------------------------------------------------------------------------------------


def offer_page(filterset: OfferFilterSet, number: int = 1) -> Page:
    """Page `number` (offer_reads.page_number) of a valid filterset's offers, read as the API reads them: the count
    (offer_reads.offer_count, exact up to 10,000 offers or the end of this page: `page.matching`, and
    `page.matching_exact` False when it means "more than"), the page's ids from the bare offer table in index order
    and the API's rows for those ids only (offer_reads.offer_page: plain dicts, no model instances). A number past
    the last page gives the last page, without its rows, and `page.past_the_end` set, for the caller to refuse."""
    counted = offer_reads.offer_count(filters=filterset, through=number * PER_PAGE)
    paginator = Paginator(offer_reads.offer_ids(filters=filterset), PER_PAGE)
    paginator.count = counted.for_paginator  # a cached_property: setting it skips Django's own COUNT
    page = paginator.get_page(number)
    page.past_the_end = number > paginator.num_pages
    # The count on the page itself (`count` would hide Page.count, a Sequence method).
    page.matching, page.matching_exact = counted.value, counted.exact
    # Sliced by the page size rather than up to the count.
    start = (page.number - 1) * PER_PAGE
    page.object_list = [] if page.past_the_end else offer_reads.offer_page(filters=filterset, offset=start,
                                                                           limit=PER_PAGE)
    return page

