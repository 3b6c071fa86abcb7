"""The filter panel keeps each field the query leaves unset, drawn once per language and change of the data
(web.filter_panel.unset_field_html): what it serves must be what drawing it afresh writes, a field the query sets is
always drawn for that query, and a change of the data (a new provider in the checkbox list) is drawn at once."""

import re

import pytest
from django.http import QueryDict
from django.test import RequestFactory
from django.utils import translation

from providers import versions
from tests.ui import builders
from web.filter_panel import OfferPanelFilterSet
from web.views import filter_groups_html

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return builders.catalog()

QUERIES = ["", "gpu_family=H100&mig=yes&price_per_gpu_hour_max=3.5&unknown=include",
           "provider=acme&gpu_count_min=8&rdma=infiniband", "gpu_count_min=many&provider=nobody",
           "gpu_family=A100&country=US&seen_within_hours=48"]


def panel(query: str) -> str:
    filterset = OfferPanelFilterSet(QueryDict(query), request=RequestFactory().get(f"/?{query}"))
    filterset.is_valid()
    return filter_groups_html(filterset)


def test_kept_fields_are_what_drawing_them_afresh_writes_in_each_language(data):
    fresh = {}
    for language in ("en", "zh-hans"):
        with translation.override(language):
            fresh.update({(language, query): panel(query) for query in QUERIES})  # outside a scope: nothing kept
    with versions.data_version_scope():
        for _round in range(2):  # the first round keeps the unset fields, the second serves them
            for language in ("en", "zh-hans"):
                with translation.override(language):
                    for query in QUERIES:
                        assert panel(query) == fresh[(language, query)], (language, query)
    assert fresh[("en", "")] != fresh[("zh-hans", "")]


def acme_ticked(html: str) -> bool:
    return re.search(r'name="provider" value="acme" id="id_provider_\d+" checked', html) is not None


def test_a_field_the_query_sets_is_drawn_for_that_query_and_a_new_provider_appears_at_once(data):
    with versions.data_version_scope():
        assert not acme_ticked(panel(""))
        assert acme_ticked(panel("provider=acme"))
        assert not acme_ticked(panel("gpu_family=H100"))  # the unset list again, not acme's
    builders.provider("newcloud", "New Cloud")  # a write: the data version goes up
    with versions.data_version_scope():
        assert 'value="newcloud"' in panel("")
