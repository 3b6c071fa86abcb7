"""The page's language is in its URL (comparator.locale): English unprefixed, Chinese under /zh-hans/, so a shared
link opens in the language it was shared in; old addresses redirect by the language cookie or Accept-Language; the
API, /healthz and /metrics are never prefixed."""

import re

import pytest

from tests.ui import builders

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return builders.catalog()


def test_a_prefixed_address_is_chinese_for_anyone_and_an_unprefixed_one_english(client, data):
    chinese = client.get("/zh-hans/providers/?mig=yes", HTTP_ACCEPT_LANGUAGE="en")
    assert chinese.status_code == 200 and '<html lang="zh-Hans">' in chinese.content.decode()
    assert chinese["Content-Language"] == "zh-hans"
    english = client.get("/providers/?mig=yes")
    assert english.status_code == 200 and '<html lang="en">' in english.content.decode()
    assert "Accept-Language" in english["Vary"] and "Cookie" in english["Vary"]


@pytest.mark.parametrize("headers", [{"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"}, {}])
def test_an_old_address_redirects_to_the_chinese_page_for_a_chinese_reader(client, data, headers):
    if not headers:
        client.cookies["django_language"] = "zh-hans"  # the switcher's cookie
    response = client.get("/compare/?provider=acme&provider=metal", **headers)
    assert response.status_code == 302
    assert response["Location"] == "/zh-hans/compare/?provider=acme&provider=metal"
    assert "Accept-Language" in response["Vary"] and "Cookie" in response["Vary"]


def test_the_cookie_wins_over_the_browser_language(client, data):
    client.cookies["django_language"] = "en"  # a Chinese browser whose reader chose English
    response = client.get("/providers/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 200 and '<html lang="en">' in response.content.decode()


def test_every_page_names_its_other_language_with_hreflang(client, data):
    html = client.get("/zh-hans/gpus/?x=1").content.decode()
    links = dict(re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">', html))
    assert links == {"en": "http://testserver/gpus/?x=1", "x-default": "http://testserver/gpus/?x=1",
                     "zh-Hans": "http://testserver/zh-hans/gpus/?x=1"}
    assert "hreflang" not in client.get("/zh-hans/no-such-page/").content.decode()  # no page: no other language


def test_the_switcher_keeps_the_page_and_its_filters_in_the_other_language(client, data):
    to_english = client.post("/i18n/setlang/", {"language": "en", "next": "/zh-hans/?gpu_family=H100&provider=acme"},
                             HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert to_english["Location"] == "/?gpu_family=H100&provider=acme"
    assert to_english.cookies["django_language"].value == "en"
    page = client.get(to_english["Location"], HTTP_ACCEPT_LANGUAGE="zh-hans")  # the cookie now says English
    assert page.status_code == 200 and '<html lang="en">' in page.content.decode()
    to_chinese = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/providers/acme/?a=1"})
    assert to_chinese["Location"] == "/zh-hans/providers/acme/?a=1"


def test_a_chinese_page_links_to_chinese_pages(client, data):
    html = client.get("/zh-hans/").content.decode()
    assert 'href="/zh-hans/providers/"' in html and 'href="/zh-hans/sources/"' in html
    assert 'href="/providers/"' not in html
    assert 'href="/api/docs/"' in html  # the API has one address


def test_the_api_and_the_operator_endpoints_are_never_prefixed(client, data):
    assert client.get("/zh-hans/api/v1/providers/").status_code == 404
    assert client.get("/zh-hans/healthz").status_code == 404
    answer = client.get("/api/v1/providers/acme/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert answer.status_code == 200  # negotiated, not redirected
    assert client.get("/healthz", HTTP_ACCEPT_LANGUAGE="zh-hans").status_code == 200
