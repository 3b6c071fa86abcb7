"""Links in emails use the site's real address: SITE_URL when set, else the address the request was served on
(confirmation emails), else LOCAL_SITE_URL for the weekly digest sent outside any request. /digest/ is a page."""

import re

import pytest
from django.core import mail

from digest.emails import site_base
from tests.ui import builders

pytestmark = pytest.mark.django_db


def _confirmation_links(client, **extra) -> list[str]:
    mail.outbox.clear()
    response = client.post("/digest/subscribe/?gpu_family=H100", {"email": "ann@example.org", "language": "en"},
                           **extra)
    assert response.status_code in (200, 302)
    [message] = mail.outbox
    return re.findall(r"https?://[^\s\"<>]+", message.body)


def test_confirmation_links_use_the_address_the_site_is_served_on(client, settings):
    builders.catalog()
    settings.SITE_URL = ""
    links = _confirmation_links(client, HTTP_HOST="localhost:8123")
    assert links and all(link.startswith("http://localhost:8123/") for link in links), links
    assert not [link for link in links if "127.0.0.1:8000" in link]


def test_site_url_wins_when_set(client, settings):
    builders.catalog()
    settings.SITE_URL = "https://gpus.example.org/"
    links = _confirmation_links(client, HTTP_HOST="localhost:8123")
    assert links and all(link.startswith("https://gpus.example.org/") for link in links), links


def test_outside_a_request_the_local_address_is_used_and_said(settings, caplog):
    settings.SITE_URL = ""
    assert site_base() == "http://127.0.0.1:8000"
    assert "SITE_URL is not set" in caplog.text
    settings.SITE_URL = "https://gpus.example.org"
    assert site_base() == "https://gpus.example.org"


@pytest.mark.parametrize("language, heading", [("en", "Weekly digest"), ("zh-hans", "每周摘要")])
def test_the_digest_has_a_page_and_a_place_in_the_navigation(client, language, heading):
    response = client.get("/digest/", HTTP_ACCEPT_LANGUAGE=language, follow=True)
    html = response.content.decode()
    assert response.status_code == 200
    assert f"<h1>{heading}</h1>" in html
    prefix = "/zh-hans" if language == "zh-hans" else ""  # links stay in the page's language
    assert f'href="{prefix}/digest/" aria-current="page"' in html
    assert f'href="{prefix}/digest/subscribe/"' in html
    assert f'href="{prefix}/digest/"' in client.get("/", HTTP_ACCEPT_LANGUAGE=language, follow=True).content.decode()
