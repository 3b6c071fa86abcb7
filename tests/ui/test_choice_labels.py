"""Every choice label true (issue #36): for every choice of every filter of the shared FilterSet, in English and
Chinese, the panel's text and the chip of `?<filter>=<choice>` say what the query does. Generated over ALL choices
of ALL filters, so a new filter or choice is checked without a new test: it fails on a label shared by two choices
of one filter (as `/?rdma=none` once read "any RDMA fabric", the label of 5 of its 9 choices), on an empty label,
and on a chip that does not show its choice's label. An unknown value is a 400 naming the parameter and the
accepted values."""

import html
import re

import pytest
from django.http import QueryDict
from django.utils import translation

from providers.filters import OfferFilterSet
from tests.ui import builders
from web.filter_panel import OfferPanelFilterSet
from web.querystrings import active_filters

pytestmark = pytest.mark.django_db

CHOICE_FILTERS = sorted(name for name, filter_ in OfferFilterSet.base_filters.items()
                        if "choices" in filter_.extra and name != "ordering")


@pytest.fixture
def data():
    return builders.catalog()


def panel_choices(name: str) -> list[tuple[str, str]]:
    form = OfferPanelFilterSet(QueryDict()).form
    return [(str(value), str(label)) for value, label in form.fields[name].choices if str(value)]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("name", CHOICE_FILTERS)
def test_every_choice_of_the_filter_has_its_own_true_label_in_the_panel_and_its_chip(data, name, language):
    with translation.override(language):
        choices = panel_choices(name)
        assert choices, name
        labels = [label for _value, label in choices]
        shared = {label for label in labels if labels.count(label) > 1}
        assert not shared, f"{name}: choices share the label(s) {shared}"
        assert all(label.strip() for label in labels)
        for value, label in choices:
            form = OfferPanelFilterSet(QueryDict(f"{name}={value}")).form
            chips = active_filters(QueryDict(f"{name}={value}"), form)
            assert [chip.value for chip in chips] == [label], (name, value)


def test_rdma_none_is_no_longer_labelled_any_fabric(data):
    with translation.override("en"):
        labels = dict(panel_choices("rdma"))
    assert "plain network" in labels["none"] and "any" not in labels["none"].lower()
    assert labels["infiniband"] == "InfiniBand only" and "GPUDirect RDMA" in labels["any"]


@pytest.mark.parametrize("name", [*CHOICE_FILTERS, "ordering"])
def test_an_unknown_choice_is_a_400_naming_the_parameter_and_the_accepted_values(client, data, name):
    response = client.get(f"/api/v1/offers/?{name}=no-such-choice")
    assert response.status_code == 400
    body = response.json()
    assert list(body) == [name]
    message = " ".join(body[name])
    assert "no-such-choice" in message
    accepted = [value for value, _label in panel_choices(name)] if name != "ordering" else []
    if name not in ("gpu", "provider", "ordering") and accepted:
        assert all(re.search(rf"(^|[ ,:]){re.escape(html.escape(value, quote=False))}([,.]|$)", message)
                   or value in message for value in accepted), message
