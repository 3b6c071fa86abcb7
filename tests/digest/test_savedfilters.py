"""Saved filters are the canonical query string of OfferFilterSet parameters: validated by it, one spelling each."""

from decimal import Decimal

import pytest
from django import forms
from django.http import QueryDict

from digest.savedfilters import filter_names, saved_filter_offers, saved_filter_parse
from providers.filters import OfferFilterSet
from providers.models import Offer

pytestmark = pytest.mark.django_db


def test_repeated_keys_commas_duplicates_and_order_give_one_canonical_string(catalog):
    spellings = [
        "gpu=h100&gpu=a100-80gb&mig=yes&price_per_gpu_hour_max=3.50",
        "price_per_gpu_hour_max=3.5&gpu=a100-80gb,h100&mig=yes",
        "mig=yes&gpu=h100,a100-80gb,h100&price_per_gpu_hour_max=3.500&page=4&ordering=-price_hour",
    ]
    queries = {saved_filter_parse(spelling).query for spelling in spellings}
    assert queries == {"gpu=a100-80gb,h100&mig=yes&price_per_gpu_hour_max=3.5"}


def test_switches_left_off_are_dropped_and_meaningful_false_is_kept(catalog):
    assert saved_filter_parse("documented_only=false&include_inactive=false&spot=false").query == "spot=false"


def test_unknown_parameters_are_reported_not_silently_applied(catalog):
    parsed = saved_filter_parse("gpuu=h100&utm_source=x&gpu=h100")
    assert parsed.is_valid and parsed.query == "gpu=h100"
    assert parsed.ignored == ("gpuu", "utm_source")


def test_invalid_values_are_errors_naming_the_parameter(catalog):
    parsed = saved_filter_parse("gpu=no-such-gpu&price_per_gpu_hour_max=-1&country=USA")
    assert not parsed.is_valid and parsed.query == ""
    assert set(parsed.errors) == {"gpu", "price_per_gpu_hour_max", "country"}


def _sample(name: str, field: forms.Field) -> str:
    if isinstance(field, forms.NullBooleanField):
        return "true"
    if name == "country":
        return "us,DE"
    if isinstance(field, forms.DecimalField):
        return "24.0"
    if isinstance(field, forms.ChoiceField):
        return str(next(value for value, _label in field.choices if value not in ("", None)))
    if name in ("cuda", "k8s_version"):  # a major.minor version
        return "12.8"
    return "Us-East-1"


@pytest.mark.parametrize("name", filter_names())
def test_every_filter_round_trips_through_its_canonical_form(world, name):
    field = OfferFilterSet(QueryDict(""), queryset=Offer.objects.none()).form.fields[name]
    first = saved_filter_parse(f"{name}={_sample(name, field)}")
    assert first.is_valid, first.errors
    assert first.query.startswith(f"{name}=")
    assert saved_filter_parse(first.query).query == first.query
    list(saved_filter_offers(first.query))  # and OfferFilterSet applies it


def test_a_saved_filter_selects_what_the_filterset_selects(world):
    h100 = world.offer("h100-box", gpu="h100", price="2.00")
    world.offer("a100-box", gpu="a100-80gb", price="1.00")
    assert list(saved_filter_offers("gpu=h100")) == [h100]
    assert Decimal(saved_filter_parse("price_per_gpu_hour_max=1.50").query.split("=")[1]) == Decimal("1.5")


def test_a_saved_filter_that_no_longer_validates_raises_with_the_reason(catalog):
    with pytest.raises(ValueError, match="gpu"):
        saved_filter_offers("gpu=retired-gpu")
