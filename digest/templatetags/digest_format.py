"""Formatting for digest emails and pages: money, signed percentages, safe outbound links."""

from decimal import Decimal
from urllib.parse import urlsplit

from django import template

from providers.models import Availability

register = template.Library()


@register.filter
def money(value) -> str:
    """2 decimals, or up to 4 for sub-cent prices (spot GPUs at 0.0035 USD/h are real)."""
    if value is None or value == "":
        return "—"
    value = Decimal(value)
    places = Decimal("0.01") if abs(value) >= 1 or value == 0 else Decimal("0.0001")
    return f"{value.quantize(places):,}"


@register.filter
def percent(value) -> str:
    """A fraction as a signed percentage with one decimal: -0.0812 -> "-8.1%"."""
    value = Decimal(value) * 100
    return f"{value:+.1f}%"


@register.filter
def per_gpu(price, gpu_count):
    if price is None or not gpu_count:
        return None
    return Decimal(price) / Decimal(gpu_count)


@register.filter
def availability_label(value) -> str:
    try:
        return str(Availability(value).label)
    except ValueError:
        return value


@register.filter
def http_url(value) -> str:
    """The URL if it is http(s), else empty: a provider API's `javascript:` link never becomes an href."""
    value = (value or "").strip()
    return value if urlsplit(value).scheme in {"http", "https"} else ""


@register.filter
def kubernetes_summary(offer) -> str:
    """The offer's own Kubernetes answers in a few words (managed node, MIG, RDMA fabric), as the offers table's
    cell shows them; plain text, escaped by the template like any value."""
    from providers.selectors import kubernetes_answers_of
    from web.badges import CELL_SYMBOLS, FABRIC_LABEL_TEXT, _question_label, _state_text

    profile = getattr(offer, "kubernetes_profile", None)
    answers = kubernetes_answers_of(profile.answers if profile is not None else None)
    parts = []
    for question, _short in CELL_SYMBOLS:
        answer = answers[question]
        text = _state_text(answer.state)
        if question == "rdma" and answer.state == "yes" and answer.fabric in FABRIC_LABEL_TEXT:
            text = FABRIC_LABEL_TEXT[answer.fabric]
        parts.append(f"{_question_label(question)}: {text}")
    return " · ".join(parts)
