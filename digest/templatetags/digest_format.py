"""Formatting for digest emails and pages: money (the site's one format), signed percentages, safe outbound links,
and the site's own words for names, stock states and capability answers in the active language (the emails render
under the subscriber's language, so one template set serves every language)."""

import unicodedata
from decimal import Decimal
from urllib.parse import urlsplit

from django import template
from django.template.defaultfilters import floatformat
from django.utils.translation import pgettext

from providers import presentation
from providers.capabilities import OFFER_SUMMARY_QUESTIONS, VALUE_LABELS, offer_question_label, offer_state_text
from providers.kubernetes import FABRIC_LABELS
from providers.models import Availability, in_language
from providers.selectors import kubernetes_answers_of

register = template.Library()


@register.filter
def gpu_name(name) -> str:
    """A catalog GPU name with its qualifier in the email's language (providers.presentation.gpu_name)."""
    return presentation.gpu_name(name or "")


@register.filter
def money(value) -> str:
    """The site's one money format (providers.presentation.money), as on the pages."""
    return presentation.money(value)


@register.filter
def percent(value) -> str:
    """A fraction as a signed percentage with one decimal: -0.0812 -> "-8.1%"."""
    value = Decimal(value) * 100
    return f"{value:+.1f}%"


@register.filter
def per_gpu(price, gpu_count):
    """An instance price per GPU by the one rule ingestion stores (providers.presentation.price_per_gpu)."""
    return presentation.price_per_gpu(price, gpu_count)


@register.filter
def availability_label(value) -> str:
    """A stock state by the site's label of it (providers.models.Availability), in the active language."""
    try:
        return str(Availability(value).label)
    except ValueError:
        return value


@register.filter
def capability_value(value) -> str:
    """A capability answer in the site's words (providers.capabilities.VALUE_LABELS); "—" for no answer (a new
    question), the raw value for one the site has no words for."""
    if not value:
        return "—"
    return str(VALUE_LABELS.get(value, value))


@register.filter
def provider_name(provider) -> str:
    """The provider's name in the active language (its Chinese name on Chinese emails, when it has one)."""
    return in_language(provider.name, provider.name_zh)


@register.filter
def offer_text(offer) -> str:
    """One offer on a plain-text line: provider · GPU x count · instance type · region · its Kubernetes answers."""
    gpu = presentation.gpu_name(offer.gpu.name) if offer.gpu else offer.gpu_name
    return (f"{provider_name(offer.provider)} · {gpu} x{floatformat(offer.gpu_count, '-3')} · "
            f"{offer.instance_type} · {offer.region} · {kubernetes_summary(offer)}")


@register.filter
def filter_summary(summary) -> str:
    """A saved filter's (label, value) pairs on one line, "GPU model: H100; MIG: yes", or "all offers"."""
    if not summary:
        return pgettext("digest email: a saved filter without conditions", "all offers")
    item = pgettext("digest email: one condition of a saved filter", "%(label)s: %(value)s")
    separator = pgettext("digest email: between the conditions of a saved filter", "; ")
    return separator.join(item % {"label": label, "value": value} for label, value in summary)


@register.filter
def plain_heading(title) -> str:
    """A plain-text email heading in capitals, as English text emails set them ("PRICE DROPS"), except a title
    with letters of a script without capitals (Chinese): "Kubernetes 能力变化" stays as written."""
    title = str(title)
    if any(unicodedata.category(char) == "Lo" for char in title):
        return title
    return title.upper()


@register.filter
def http_url(value) -> str:
    """The URL if it is http(s), else empty: a provider API's `javascript:` link never becomes an href."""
    value = (value or "").strip()
    return value if urlsplit(value).scheme in {"http", "https"} else ""


@register.filter
def kubernetes_summary(offer) -> str:
    """The offer's own Kubernetes answers in a few words (managed node, MIG, RDMA fabric: the ones the offers
    table's cell shows), in the site's words; plain text, escaped by the template like any value."""
    profile = getattr(offer, "kubernetes_profile", None)
    answers = kubernetes_answers_of(profile.answers if profile is not None else None)
    parts = []
    for question in OFFER_SUMMARY_QUESTIONS:
        answer = answers[question]
        text = offer_state_text(answer.state)
        if question == "rdma" and answer.state == "yes" and answer.fabric in FABRIC_LABELS:
            text = FABRIC_LABELS[answer.fabric]
        parts.append(f"{offer_question_label(question)}: {text}")
    return " · ".join(parts)


@register.filter
def price_date(offer) -> str:
    """The day an offer's price holds, as the offers page says it: "price as of 2026-07-20", "~" before a day
    inferred from the source's content, or "price undated" where the source states none."""
    from django.utils.formats import date_format
    from django.utils.translation import gettext

    if not offer.price_as_of:
        return gettext("price undated")
    day = date_format(offer.price_as_of, "DATE_FORMAT")
    return gettext("price as of %(day)s") % {"day": f"~{day}" if offer.price_dated_by == "inferred" else day}
