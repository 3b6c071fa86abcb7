"""Template filters that put our data's own words into the page's language: GPU name qualifiers and form factors,
capability questions and answers by key (instead of raw `offering=byo`), and money in the site's one format."""

from django import template

from providers import presentation, source_names
from providers.capabilities import QUESTIONS, VALUE_LABELS, offer_question_label, offer_state_text
from providers.kubernetes import QUESTIONS as OFFER_QUESTIONS
from providers.models import in_language
from web import display

register = template.Library()


@register.filter
def money(amount) -> str:
    """A price in the site's one format (providers.presentation.money): the same figure on every page and email."""
    return presentation.money(amount)


@register.filter
def source_name(name) -> str:
    """A data source's name in the page's language (providers.source_names)."""
    return source_names.source_name(name)


@register.filter
def money_total(amount) -> str:
    """A total (a month's cost, the advisor's sums) in the site's one format, to the cent."""
    return presentation.money(amount, total=True)


@register.filter
def gpu_name(name: str, form_factor: str = "") -> str:
    """`{{ gpu.name|gpu_name }}`, or `{{ offer.gpu.name|gpu_name:offer.form_factor }}` beside an offer."""
    return presentation.gpu_name(name or "", form_factor or "")


@register.filter
def form_factor(value: str) -> str:
    return display.form_factor(value or "")


@register.filter
def question_label(key: str) -> str:
    """A provider capability question, or a question about one offer's machine (`managed_node`), in words."""
    question = QUESTIONS.get(key)
    if question:
        return str(question.label)
    return offer_question_label(key) if key in OFFER_QUESTIONS else key


@register.filter
def answer_label(value: str) -> str:
    """An answer in words (an offer's "not on this machine" too); an RDMA fabric (a filter value that is itself a
    question key) by its question's name."""
    if value in VALUE_LABELS:
        return str(VALUE_LABELS[value])
    if value in QUESTIONS:
        return str(QUESTIONS[value].label)
    return offer_state_text(value)


@register.filter
def day(value) -> str:
    """A day (date, datetime or the summaries' ISO string) in the page's one date format, as an unbreakable <time>
    element (providers.presentation.day_html); "" for none. For text, not for attribute values."""
    return presentation.day_html(value) if value else ""


@register.filter
def written(text) -> str:
    """Data text as its source wrote it, marked English on a Chinese page where it has no translation
    (providers.presentation.as_written). For text, not for attribute values."""
    return presentation.as_written(text)


@register.filter
def written_in(english, chinese) -> str:
    """Data text in the page's language: `chinese` on a Chinese page when there is one, else `english`; either as
    its source wrote it (written)."""
    return presentation.as_written(in_language(english or "", chinese or ""))


@register.filter
def identifier(text) -> str:
    """A provider's own identifier shown in running text (a region such as "us-east-1" or "Quebec, CA, NA"): marked
    translate="no", the same on English and Chinese pages."""
    from django.utils.html import format_html

    return format_html('<span translate="no">{}</span>', text) if text else ""
