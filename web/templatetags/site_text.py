"""Template filters that put our data's own words into the page's language: GPU name qualifiers and form factors,
capability questions and answers by key (instead of raw `offering=byo`)."""

from django import template

from providers.capabilities import QUESTIONS, VALUE_LABELS
from web import display

register = template.Library()


@register.filter
def gpu_name(name: str) -> str:
    return display.gpu_name(name or "")


@register.filter
def form_factor(value: str) -> str:
    return display.form_factor(value or "")


@register.filter
def question_label(key: str) -> str:
    question = QUESTIONS.get(key)
    return str(question.label) if question else key


@register.filter
def answer_label(value: str) -> str:
    """An answer in words; an RDMA fabric (a filter value that is itself a question key) by its question's name."""
    if value in VALUE_LABELS:
        return str(VALUE_LABELS[value])
    return str(QUESTIONS[value].label) if value in QUESTIONS else value
