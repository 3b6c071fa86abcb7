"""Chinese completely, and no raw keys in either language: GPU qualifiers and form factors, advisor evidence, data
source counts, error pages; provider names in the page's language instead of appended to English ones."""

import json
import re

import pytest

from tests.ui import builders

pytestmark = pytest.mark.django_db

RAW_KEY = re.compile(r"\b[a-z_]{3,}=[a-z_/]+~?")


@pytest.fixture
def data():
    objects = builders.catalog()
    objects["vague"] = builders.gpu("h100-unspecified", "NVIDIA H100 80GB (form factor not stated)", "H100", "80")
    objects["vague"].form_factor = "unspecified"
    objects["vague"].save()
    builders.offer(objects["acme"], objects["acme_h100"].source, objects["vague"], "acme.vague", "2.00")
    return objects


def visible_text(html: str) -> str:
    html = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_no_page_shows_raw_keys(client, data, language):
    urls = ["/", "/providers/", "/providers/acme/", "/gpus/", "/gpus/h100-sxm/", "/compare/?provider=acme,metal",
            "/sources/", "/charts/", "/advisor/?kind=batch&gpu=h100-sxm&gpus_per_node=2&nodes=2"]
    for url in urls:
        response = client.get(url, HTTP_ACCEPT_LANGUAGE=language, follow=True)
        assert response.status_code == 200, url
        found = RAW_KEY.findall(visible_text(response.content.decode()))
        assert found == [], (url, found)


def test_advisor_evidence_names_the_question_and_answer_in_words(client, data):
    params = {"kind": "batch", "gpu": "h100-sxm", "gpus_per_node": "2", "nodes": "2"}
    html = client.get("/advisor/", params).content.decode()
    assert "offering=" not in html
    # The evidence is the offer's own answers, each named in words: its machine as a node of the managed Kubernetes.
    assert "managed_node" not in html and "managed control plane: yes" in html
    html = client.get("/advisor/", params, HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "offering=" not in html and "Acme Cloud 阿克米云" not in html


def test_gpu_qualifiers_and_form_factors_are_translated(client, data):
    html = client.get("/gpus/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "NVIDIA H100 80GB（未注明规格）" in html.replace(" （", "（")
    assert "form factor not stated" not in html and ">unspecified<" not in html
    html = client.get("/gpus/").content.decode()
    assert "NVIDIA H100 80GB (form factor not stated)" in html and "<td>not stated</td>" in html
    html = client.get("/gpus/h100-unspecified/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "<h1>NVIDIA H100 80GB （未注明规格）</h1>" in html


def test_source_counts_are_words_not_symbols(client, data):
    from django.utils import timezone

    from providers.models import ScrapeRun

    source = data["acme_h100"].source
    ScrapeRun.objects.create(source=source, status="success", created=3, updated=1, unchanged=5, deactivated=0,
                             offline=False, started_at=timezone.now())
    html = client.get("/sources/").content.decode()
    assert "3 new, 1 changed, 5 unchanged, 0 no longer listed" in html
    html = client.get("/sources/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "新增 3，变更 1，未变 5，下架 0" in html
    assert "<td>阿克米云</td>" in html


def test_the_plotly_locale_is_loaded_only_on_chinese_pages(client, data):
    assert "plotly-locale-zh-cn" not in client.get("/charts/").content.decode()
    html = client.get("/charts/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert 'data-plotly-locale="/static/vendor/plotly-locale-zh-cn-3.1.1.js" data-locale="zh-CN"' in html


def test_chart_labels_carry_translated_qualifiers(client, data):
    html = client.get("/charts/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    figure = html.split('<script type="application/json" id="fig-distribution">')[1].split("</script>")[0]
    text = json.dumps(json.loads(figure), ensure_ascii=False)
    assert "NVIDIA H100 80GB （未注明规格）" in text
    assert "form factor not stated" not in text


def test_gpu_choices_of_the_filter_panel_and_the_advisor_carry_translated_qualifiers(client, data):
    def form(html):  # the filter panel or the advisor's form, without the results below them
        return html.split("<form")[2].split("</form>")[0]

    for url in ("/", "/advisor/"):
        html = form(client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode())
        assert "form factor not stated" not in html, url
        assert "NVIDIA H100 80GB （未注明规格）" in html, url
        assert "NVIDIA H100 80GB (form factor not stated)" in form(client.get(url).content.decode()), url


def test_compare_lists_providers_to_choose_in_the_page_language(client, data):
    html = client.get("/compare/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    form = html.split("<form")[2].split("</form>")[0]
    assert "阿克米云" in form and "Acme Cloud" not in form
    assert "Acme Cloud" in client.get("/compare/").content.decode().split("<form")[2]


def test_the_filter_panel_speaks_each_requests_language_however_often_it_is_asked(client, data):
    """The offers page's panel is built once per process (OfferPanelFilterSet.present_fields) and its widgets'
    HTML is kept (web.widgets): the GPU choices' qualifiers are still translated for each request's language."""
    for _ in range(2):
        english = client.get("/?gpu_family=H100", HTTP_ACCEPT_LANGUAGE="en", follow=True).content.decode()
        chinese = client.get("/?gpu_family=H100", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
        assert "(form factor not stated)" in english and "未注明规格" not in english
        assert "未注明规格" in chinese and "(form factor not stated)" not in chinese


def test_an_architecture_no_source_names_reads_not_stated_in_the_readers_language(client, data):
    from providers.models import GpuModel

    GpuModel.objects.filter(slug="h100-sxm").update(architecture=GpuModel.ARCHITECTURE_NOT_STATED)
    html = client.get("/gpus/h100-sxm/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "<dd>未注明</dd>" in html and "not stated" not in html
    html = client.get("/gpus/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "<td>未注明</td>" in html and "<td>not stated</td>" not in html
    assert "<dd>not stated</dd>" in client.get("/gpus/h100-sxm/").content.decode()
