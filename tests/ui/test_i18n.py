"""English and Simplified Chinese: the switcher, translated pages, per-language number and date formats, and a
translation catalogue that is complete for the site's pages and compiled."""

import gettext
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from tests.ui import builders

pytestmark = pytest.mark.django_db

PO = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
# Files whose strings the site's pages show; other features' folders keep their own translation checks.
PAGE_SOURCES = ("web/views.py", "web/currency.py", "providers/", "templates/offers/",
                "templates/gpus/", "templates/providers/", "templates/guides/", "templates/base.html",
                "templates/charts.html", "templates/compare.html", "templates/sources.html",
                "templates/_capability.html")


def po_entries():
    """(references, msgid, msgstr) of every entry, read with msgcat's help-free format: one field per line."""
    entries, refs, fields, current = [], [], {}, None
    for line in [*PO.read_text(encoding="utf-8").splitlines(), ""]:
        if not line.strip():
            if fields.get("msgid"):
                entries.append((" ".join(refs), fields["msgid"], fields.get("msgstr", fields.get("msgstr[0]", "")),
                                "fuzzy" in " ".join(refs)))
            refs, fields, current = [], {}, None
        elif line.startswith("#"):
            refs.append(line)
        elif line.startswith('"'):
            fields[current] += line[1:-1]
        else:
            current, _, value = line.partition(" ")
            fields[current] = value[1:-1]
    return entries


def test_every_string_of_the_pages_is_translated_to_chinese():
    untranslated = [msgid for refs, msgid, msgstr, fuzzy in po_entries()
                    if any(source in refs for source in PAGE_SOURCES) and (not msgstr or fuzzy)]
    assert untranslated == []


def test_the_whole_catalogue_is_translated_including_digest_and_advisor():
    """Every entry, the digest's and the advisor's templates and modules included: no empty msgstr, no fuzzy."""
    sources = ("digest/", "advisor/", "templates/digest/", "templates/advisor/")
    entries = po_entries()
    assert {source for source in sources if any(source in refs for refs, *_ in entries)} == set(sources)
    assert [msgid for refs, msgid, msgstr, fuzzy in entries if not msgstr or fuzzy] == []


def test_compiled_catalogue_matches_the_po_file(tmp_path):
    compiled = tmp_path / "django.mo"
    subprocess.run(["msgfmt", "--check-format", "-o", str(compiled), str(PO)], check=True)
    fresh = gettext.GNUTranslations(compiled.open("rb"))._catalog
    committed = gettext.GNUTranslations(MO.open("rb"))._catalog
    assert committed == fresh


def test_language_switcher_sets_chinese_and_returns_to_the_same_page(client):
    builders.catalog()
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/?gpu_family=H100"})
    assert response.status_code == 302 and response["Location"] == "/zh-hans/?gpu_family=H100"  # the same page
    html = client.get(response["Location"]).content.decode()
    # The address without the prefix keeps working: with the cookie set, it leads to the Chinese page.
    assert client.get("/?gpu_family=H100")["Location"] == "/zh-hans/?gpu_family=H100"
    assert '<html lang="zh-Hans">' in html
    assert "为 Kubernetes 租用 GPU，该去哪里" in html
    assert "4 个报价符合条件。" in html
    assert "阿克米云" in html  # the provider's Chinese name


def test_numbers_and_dates_follow_the_language(client):
    data = builders.catalog()
    builders.rates()
    client.cookies["django_language"] = "zh-hans"
    html = client.get("/?currency=CNY&provider=acme", follow=True).content.decode()
    assert "按欧洲央行 2026年11月27日 参考汇率由美元换算" in builders.shown(html)
    assert "¥5.040" in html
    html = client.get("/providers/acme/", follow=True).content.decode()
    assert "2026年11月1日" in html
    client.cookies["django_language"] = "en"
    assert "2026-11-01" in client.get("/providers/acme/", follow=True).content.decode()
    for index in range(1000):
        builders.offer(data["acme"], data["acme_h100"].source, data["h100"], f"bulk-{index}", "9.00")
    assert "1,006 offers match." in client.get("/", follow=True).content.decode()


def test_kubernetes_cells_are_translated(client):
    """The cell's questions and states are in the page's language (the reasons stay English, as the API gives them)."""
    builders.catalog()
    client.cookies["django_language"] = "zh-hans"
    html = client.get("/?provider=acme", follow=True).content.decode()
    assert "MIG: 是" in html and "MIG: yes" not in html


def test_the_navigation_names_the_gpu_catalog_not_a_gpu_count(client):
    """"GPUs" is both the catalog link and the offers table's GPUs-per-instance column; Chinese needs two words."""
    client.cookies["django_language"] = "zh-hans"
    html = client.get("/gpus/", follow=True).content.decode()
    assert 'aria-current="page">GPU 型号</a>' in html
    home = client.get("/", follow=True).content.decode()
    assert ">GPU 型号</a>" in home and "GPU 数" in home  # the link; counts (column, filters) keep their word
