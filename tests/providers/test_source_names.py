"""Every data source the snapshot and the schedule register has a name in Chinese (providers.source_names), and the
pages show it in the page's language."""

import pytest
from django.utils import translation

from providers.source_names import source_name
from scrapers import registry


def registered_names() -> set[str]:
    return {client.info.name for client in registry.SOURCES.values()}


@pytest.mark.parametrize("name", sorted(registered_names()))
def test_every_registered_source_has_a_chinese_name(name):
    with translation.override("zh-hans"):
        chinese = source_name(name)
    with translation.override("en"):
        assert source_name(name) == name  # English pages show the client's own name
    assert chinese != name and any("\u4e00" <= char <= "\u9fff" for char in chinese), chinese


def test_a_name_the_catalogue_does_not_know_is_shown_as_it_is():
    with translation.override("zh-hans"):
        assert source_name("Some new API (v9)") == "Some new API (v9)"
        assert source_name("") == ""


@pytest.mark.django_db
def test_the_sources_and_provider_pages_name_sources_in_the_pages_language(client):
    from tests.ui import builders

    azure = builders.provider("azure", "Microsoft Azure", name_zh="微软 Azure")
    source = builders.source(azure)
    source.name = "Azure Retail Prices API"
    source.save()
    for url in ("/sources/", "/providers/azure/"):
        chinese = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
        english = client.get(url, HTTP_ACCEPT_LANGUAGE="en", follow=True).content.decode()
        assert "Azure 零售价格 API" in chinese and "Azure Retail Prices API" not in chinese, url
        assert "Azure Retail Prices API" in english, url
