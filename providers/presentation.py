"""The site's one vocabulary for what people read: money, price per GPU and the catalog's GPU names in the active
language. Pages, emails and the advisor format through these, so "2.499" on the offers page is "2.499" in the
digest (the API and CSV give numbers, not text). Staleness is one rule too, in providers.selectors
(stale_expression and its Python twin is_stale); provider names in the active language are
providers.models.in_language, data-source names providers.source_names; answer words are providers.capabilities
(VALUE_LABELS, offer_state_text)."""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from django.template.defaultfilters import floatformat
from django.utils.formats import date_format
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext

from scrapers.normalize import per_gpu

from .kubernetes import gpu_on_machine

SUB_CENT = Decimal("0.01")


def money(amount, *, total: bool = False) -> str:
    """A price as text: three decimals with the active language's grouping ("1,234.500", "2.499"), four below one
    cent (spot GPU shares at 0.0035 USD/h are real); a `total` (a month's cost, the advisor's sums) to the cent
    ("5,913.00"); "—" when there is none. No currency: the caller says which."""
    if amount is None or amount == "":
        return "—"
    return _money(get_language(), Decimal(amount), total)


CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def as_written(text) -> SafeString:
    """Data text (a source's evidence, a note or reason from our data files) escaped for a page. On a Chinese page,
    its Latin-script words are English as the source or our notes wrote them, left untranslated on purpose: a note
    with no Chinese in it (no translation yet), or the names, settings and quotations a Chinese note keeps in
    English ("Cluster Autoscaler", "hostNetwork", "Standard"). They are marked `lang="en"`, so screen readers read
    them as English and the Chinese-completeness crawl (tests/ui/test_chinese_crawl.py) knows them for data as
    written rather than a page string someone forgot to translate."""
    text = "" if text is None else str(text)
    if not text or get_language() != "zh-hans":
        return escape(text)
    if not CJK.search(text):
        return mark_safe(f'<span lang="en">{escape(text)}</span>')
    return mark_safe("".join(
        f'<span lang="en">{escape(part)}</span>' if LATIN_WORDS.fullmatch(part) else str(escape(part))
        for part in LATIN_WORDS.split(text) if part))


# A stretch of Latin-script words in a Chinese text, with the spaces and punctuation between them (captured, so
# re.split keeps it).
LATIN_WORDS = re.compile(r"([A-Za-z][A-Za-z0-9 .,'’()/&+:;=_-]*[A-Za-z0-9)]|[A-Za-z])")


def day_html(moment) -> SafeString:
    """A day in the page's one date format (comparator/formats: 2026-11-29, 2026年11月29日) as a <time> element
    that carries the ISO day and is never split across lines (site.css), so a phone never shows "2026-11-" / "29".
    Accepts a date, a datetime or an ISO string (the node-software summaries give the API strings)."""
    from datetime import date, datetime

    if isinstance(moment, str):
        moment = date.fromisoformat(moment[:10])
    iso = (moment.date() if isinstance(moment, datetime) else moment).isoformat()
    return mark_safe(f'<time datetime="{iso}">{escape(date_format(moment, "DATE_FORMAT"))}</time>')


@lru_cache(maxsize=8192)
def _money(language: str, amount: Decimal, total: bool) -> str:
    # Keyed by the language, which must be the active one: the same prices are listed on many pages.
    if total:
        return floatformat(amount, "2g")
    return floatformat(amount, "4g" if 0 < abs(amount) < SUB_CENT else "3g")


def price_per_gpu(price, gpu_count) -> Decimal | None:
    """An instance price per GPU (per whole-GPU equivalent for a fractional GPU, whose count is its share), to the
    stored money precision; None without a price or a count. The one rule ingestion stores and pages recompute
    with (scrapers.normalize.per_gpu)."""
    if price is None or not gpu_count:
        return None
    return per_gpu(Decimal(price), Decimal(gpu_count))


# The catalog's names are English and carry qualifiers in parentheses (scrapers/data/gpus.toml): the product name
# stays as the vendor spells it, the qualifier is ours and is translated.
GPU_QUALIFIERS = (
    (re.compile(r"\(form factor not stated\)"), lambda m: gettext("(form factor not stated)")),
    (re.compile(r"\(edition not stated\)"), lambda m: gettext("(edition not stated)")),
    (re.compile(r"\(memory variant not stated\)"), lambda m: gettext("(memory variant not stated)")),
    (re.compile(r"\(per chip\)"), lambda m: gettext("(per chip)")),
    (re.compile(r"\((\d+)GB per GPU, (\d+) GPUs per board\)"),
     lambda m: gettext("(%(memory)sGB per GPU, %(count)s GPUs per board)") % {"memory": m[1], "count": m[2]}),
    (re.compile(r"\((\d+)GB per GPU\)"), lambda m: gettext("(%(memory)sGB per GPU)") % {"memory": m[1]}),
    (re.compile(r"\(1st gen, "), lambda m: gettext("(1st gen, ")),
)


def gpu_name(name: str, form_factor: str = "") -> str:
    """A catalog GPU name with its qualifier in the active language ("(form factor not stated)" -> "（未说明规格）"),
    on the offer's machine where its `form_factor` is given (gpu_on_machine)."""
    name = gpu_on_machine(name, form_factor)
    for pattern, replacement in GPU_QUALIFIERS:
        name = pattern.sub(replacement, name)
    return name
