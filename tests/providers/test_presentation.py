"""The site's one money format and per-GPU rule (providers.presentation): the offers page, the offer page, the
advisor and the digest print the same figure for the same price."""

from decimal import Decimal

import pytest
from django.template import Context, Template
from django.utils import translation

from providers.presentation import money, price_per_gpu


@pytest.mark.parametrize(("amount", "english", "chinese"), [
    (Decimal("2.49"), "2.490", "2.490"),
    (Decimal("1234.5"), "1,234.500", "1234.500"),  # grouping as each language writes it (Django's locale formats)
    (Decimal("0.0035"), "0.0035", "0.0035"),  # a sub-cent spot share keeps its figure instead of printing 0.004
    (Decimal("0"), "0.000", "0.000"),
    (None, "—", "—"),
])
def test_money_has_one_format_per_language(amount, english, chinese):
    with translation.override("en"):
        assert money(amount) == english
    with translation.override("zh-hans"):
        assert money(amount) == chinese


def test_price_per_gpu_is_the_stored_rule_and_refuses_no_count():
    assert price_per_gpu(Decimal("98.32"), Decimal("8")) == Decimal("12.29")
    assert price_per_gpu(Decimal("1.00"), Decimal("0.25")) == Decimal("4.00")  # a quarter GPU: per whole GPU
    assert price_per_gpu(None, Decimal("8")) is None
    assert price_per_gpu(Decimal("1.00"), Decimal("0")) is None


def test_pages_and_emails_print_the_same_money():
    page = Template("{% load site_text %}{{ amount|money }}").render(Context({"amount": Decimal("12.2875")}))
    email = Template("{% load digest_format %}{{ amount|money }}").render(Context({"amount": Decimal("12.2875")}))
    assert page == email == "12.288"
