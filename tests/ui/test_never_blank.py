"""Never blank, never misleading: an empty result says so and offers a way out, unknown or impossible parameters are
errors (as the API answers them), a provider without prices says so, error pages keep the navigation, and the
compare page accepts one chosen provider and asks for one more."""

import re

import pytest
from django.test import override_settings

from providers.models import Provider
from tests.ui import builders

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    objects = builders.catalog()
    objects["aws"] = builders.provider("aws", "Amazon Web Services", caps=builders.FULL, name_zh="亚马逊云科技")
    return objects


def test_no_matching_offer_says_zero_and_shows_removable_filters(client, data):
    response = client.get("/?gpu_family=A100&offering=managed")
    html = response.content.decode()
    assert response.status_code == 200
    assert "0 offers match." in html
    assert 'class="chips"' in html
    # Each chip drops its own filter and keeps the other one.
    assert 'href="/?offering=managed"' in html and "GPU family: A100" in html
    assert 'href="/?gpu_family=A100"' in html and "Kubernetes offering: managed control plane" in html
    assert "Remove all filters" in html
    results = html.split('id="results"')[1]
    assert '<table class="offers">' not in results  # no empty table, no "reset the filters" row


def test_providers_that_meet_the_kubernetes_filters_without_prices_are_named(client, data):
    html = client.get("/?provider=aws").content.decode()
    assert "0 offers match." in html
    assert "Amazon Web Services meets these Kubernetes requirements; we have no prices for it yet." in html
    html = client.get("/?offering=managed&mig=yes&gpu_family=A100").content.decode()
    assert "Amazon Web Services meets these Kubernetes requirements" in html
    # A provider without an answer meeting the filters is not named.
    assert "Metal Rentals" not in html.split('class="empty"')[-1]


def test_no_provider_is_named_when_only_offer_filters_are_set(client, data):
    html = client.get("/?gpu_family=A100&price_per_gpu_hour_max=0.1").content.decode()
    assert "0 offers match." in html
    assert "meets these Kubernetes requirements" not in html


@pytest.mark.parametrize("query, named", [
    ("gpu_modle=h100", "gpu_modle: not a parameter of this page"),
    ("country=zz", "No country has the ISO code ZZ"),
])
def test_unknown_parameters_and_impossible_values_are_errors_with_400(client, data, query, named):
    response = client.get(f"/?{query}")
    assert response.status_code == 400
    assert named in response.content.decode()
    assert client.get(f"/charts/?{query}").status_code == 400
    assert named in client.get(f"/charts/?{query}").content.decode()
    assert client.get(f"/api/v1/offers/?{query}").status_code == 400  # the same rule as the API's


def test_a_real_country_code_is_still_accepted(client, data):
    assert client.get("/?country=us").status_code == 200
    assert client.get("/api/v1/offers/?country=US,JP").status_code == 200


def test_provider_page_without_offers_says_so(client, data):
    html = client.get("/providers/aws/").content.decode()
    assert "We have no prices for Amazon Web Services yet" in html
    assert "Reset the filters" not in html
    html = client.get("/providers/aws/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "<h1>亚马逊云科技 <span lang=\"en\">(Amazon Web Services)</span></h1>" in html


def test_an_unpriced_provider_page_says_why_with_the_price_page_and_the_day_we_looked(client, data):
    builders.provider("hetzner", "Hetzner", kind="regional_cloud", caps={"offering": "byo"})
    html = client.get("/providers/hetzner/").content.decode()
    empty = html[html.index('<p class="empty">'):].split("</p>")[0]
    assert "We have no prices for Hetzner yet" in empty
    assert "Why: its GEX pages load their prices from a price feed on hetzner.com" in empty
    assert 'href="https://www.hetzner.com/dedicated-rootserver/matrix-gpu/"' in empty
    assert 'datetime="2026-12-05"' in empty
    zh = client.get("/providers/hetzner/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "原因：其 GEX 页面的价格来自 hetzner.com 上的价格数据接口" in zh
    # A provider without a stated reason keeps the general sentence alone.
    assert "Why:" not in client.get("/providers/aws/").content.decode()


def test_english_heading_has_no_chinese_name_appended(client, data):
    html = client.get("/providers/acme/").content.decode()
    assert "<h1>Acme Cloud</h1>" in html


def test_compare_with_one_provider_asks_for_one_more(client, data):
    response = client.get("/compare/?provider=acme")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Chosen: Acme Cloud" in html and "Choose at least one more provider" in html
    assert re.search(r'value="acme" id="id_provider_\d+" checked', html)  # the picker shows the chosen one
    assert len(re.findall(r"name=\"provider\" value=\"[^\"]+\" id=\"[^\"]+\" checked", html)) == 1
    assert 'role="alert"' not in html
    html = client.get("/compare/?provider=acme&provider=metal").content.decode()
    assert "Chosen: Acme Cloud, Metal Rentals" in html
    assert client.get("/compare/?provider=acme,metal,dearco,oldie,aws").status_code == 400
    bogus = client.get("/compare/?provider=bogus")  # the error once, in the alert, not again under the field
    assert bogus.status_code == 400 and bogus.content.decode().count("bogus is not one of the available choices") == 1


@pytest.mark.parametrize("language, heading", [("en", "Page not found"), ("zh-hans", "找不到页面")])
def test_404_page_has_the_navigation_in_both_languages(client, data, language, heading):
    with override_settings(DEBUG=False):
        response = client.get("/no-such-page/", HTTP_ACCEPT_LANGUAGE=language, follow=True)
    html = response.content.decode()
    assert response.status_code == 404
    assert f"<h1>{heading}</h1>" in html
    prefix = "/zh-hans" if language == "zh-hans" else ""  # the navigation stays in the page's language
    assert '<nav id="site-nav" aria-label=' in html and f'href="{prefix}/providers/"' in html


def test_a_path_under_the_api_that_names_nothing_is_a_json_404(client, data):
    """docs/api.md: API errors are JSON, a 404 included; a page path keeps the HTML 404 page."""
    with override_settings(DEBUG=False):
        for path in ("/api/v1/bogus/", "/api/v1/exports/bogus/"):
            response = client.get(path)
            assert response.status_code == 404 and response["Content-Type"] == "application/json"
            assert path in response.json()["detail"] and "/api/docs/" in response.json()["detail"]
        page = client.get("/no-such-page/")
        assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
        assert "<code>/no-such-page/</code>" in page.content.decode()


@pytest.mark.parametrize("language, heading", [("en", "Something went wrong"), ("zh-hans", "出错了")])
def test_500_page_has_the_navigation_in_both_languages(client, data, language, heading, monkeypatch):
    from web import views

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(views.selectors, "source_status_list", broken)
    client.raise_request_exception = False
    with override_settings(DEBUG=False):
        response = client.get("/sources/", HTTP_ACCEPT_LANGUAGE=language, follow=True)
    html = response.content.decode()
    assert response.status_code == 500
    assert f"<h1>{heading}</h1>" in html
    assert f'href="{"/zh-hans" if language == "zh-hans" else ""}/providers/"' in html
    assert Provider.objects.exists()


def test_free_text_search_is_a_filter_of_the_page_with_its_chip(client, data):
    html = client.get("/?search=h100%20us-east").content.decode()
    assert "acme.h100x8" in html and "metal.h100" in html and "metal.a100" not in html
    assert 'name="search"' in html and 'value="h100 us-east"' in html
    assert "Search instance type, GPU and region (words, all must match): h100 us-east" in html
