"""One date format per language (#42 item 6): English pages write ISO 8601 (2026-11-01, 2026-11-01 14:05), Chinese
pages Django's zh_Hans long form (2026年11月1日); never the US forms "Nov. 1, 2026" or "11/01/2026", and never a
second format on the same site. Templates ask for DATE_FORMAT / DATETIME_FORMAT (comparator/formats/en), never a
pattern of their own."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from tests.ui import builders

pytestmark = pytest.mark.django_db

US_MONTH_FIRST = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}, \d{4}")
US_NUMERIC = re.compile(r"\b\d{1,2}/\d{1,2}/\d{4}\b")
ISO_DAY = re.compile(r"\b20\d\d-\d\d-\d\d\b")
OWN_PATTERN = re.compile(r"""\|date:["'](?![A-Z_]+["'])""")


@pytest.fixture
def pages():
    from providers.models import ScrapeRun

    data = builders.catalog()
    builders.rates()
    source = data["acme_h100"].source
    ScrapeRun.objects.create(source=source, status="success", created=1, updated=0, unchanged=0, deactivated=0,
                             offline=False, started_at=timezone.now())
    return ["/", "/?currency=CNY", f"/offers/{data['acme_h100'].pk}/", "/providers/acme/",
            "/compare/?provider=acme,metal", "/sources/", "/charts/",
            "/advisor/?kind=batch&gpu=h100-sxm&gpus_per_node=2&nodes=2"]


def visible(html: str) -> str:
    return re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_no_page_writes_a_us_date(client, pages, language):
    client.cookies["django_language"] = language
    seen_dates = 0
    for url in pages:
        html = visible(client.get(url, follow=True).content.decode())
        assert US_MONTH_FIRST.findall(html) == [], url
        assert US_NUMERIC.findall(html) == [], url
        seen_dates += len(ISO_DAY.findall(html)) if language == "en" else html.count("日")
    assert seen_dates > 0  # the pages do carry dates: the check above looked at some


def test_the_sources_page_dates_its_runs_in_each_languages_one_format(client, pages):
    now = timezone.now()
    english = client.get("/sources/").content.decode()
    assert f"{now:%Y-%m-%d}" in english
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get("/sources/", follow=True).content.decode()
    # Before, this table alone wrote ISO dates on Chinese pages that elsewhere say 2026年11月1日.
    assert f"{now.year}年{now.month}月{now.day}日" in chinese
    assert not re.search(rf"{now:%Y-%m-%d} \d\d:\d\d UTC", chinese)


def test_templates_name_the_format_rather_than_spell_one_out():
    spelled = [f"{path.relative_to(settings.BASE_DIR)}: {match.group()}"
               for path in Path(settings.BASE_DIR, "templates").rglob("*.*")
               for match in OWN_PATTERN.finditer(path.read_text(encoding="utf-8"))]
    assert spelled == []


def test_node_software_dates_follow_the_page_language(client):
    """The summaries give the API ISO days; the provider page writes them in the page's format (the EKS calendar
    and driver history, from nodesoftware's data files)."""
    builders.provider("aws", "Amazon Web Services")
    english = client.get("/providers/aws/").content.decode()
    section = english[english.index('id="node-software-title"'):]
    assert ISO_DAY.search(section)
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get("/providers/aws/", follow=True).content.decode()
    section = chinese[chinese.index('id="node-software-title"'):chinese.index("</section>", chinese.index(
        'id="node-software-title"'))]
    shown = re.sub(r"<[^>]+>", "", section)  # the <time> elements carry the ISO day in their attribute only
    assert "年" in shown and ISO_DAY.findall(shown) == []
