"""/providers/ as a query tool: keep the providers whose answers meet the chosen questions (the shared FilterSet's
provider filters), sort by a question's answer, refuse unknown parameters, and one-click presets."""

import re

import pytest

from tests.ui import builders

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return builders.catalog()


def providers_listed(html: str) -> list[str]:
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return re.findall(r'<th scope="row"><a href="/providers/([a-z-]+)/">', body)


def test_the_matrix_keeps_providers_meeting_every_chosen_answer(client, data):
    assert providers_listed(client.get("/providers/").content.decode()) == ["acme", "dearco", "metal", "oldie"]
    html = client.get("/providers/?mig=yes&scale_to_zero=yes").content.decode()
    assert providers_listed(html) == ["acme", "dearco"]
    assert "2 of 4 providers match." in html
    assert 'href="/providers/?scale_to_zero=yes"' in html  # the MIG chip drops MIG only
    html = client.get("/providers/?offering=byo").content.decode()
    assert providers_listed(html) == ["metal"]
    assert "Kubernetes offering: bring your own cluster" in html
    html = client.get("/providers/?mig=unknown").content.decode()
    assert providers_listed(html) == ["metal"]


def test_a_question_sorts_the_matrix_best_answer_first(client, data):
    html = client.get("/providers/?sort=mig").content.decode()
    assert providers_listed(html)[:2] == ["acme", "dearco"] and providers_listed(html)[-1] == "metal"
    assert 'aria-sort="ascending"' in html


@pytest.mark.parametrize("query", ["mgi=yes", "mig=maybe", "sort=nope"])
def test_unknown_questions_and_answers_are_errors(client, data, query):
    response = client.get(f"/providers/?{query}")
    assert response.status_code == 400
    assert 'role="alert"' in response.content.decode()


def test_presets_are_one_click_links(client, data):
    html = client.get("/providers/").content.decode()
    assert 'href="/providers/?mig=yes&amp;scale_to_zero=yes"' in html
    html = client.get("/providers/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "4 家厂商中有 4 家符合条件。" in html


def matrix_cell(html: str, provider: str, question_label: str) -> str:
    """The <details> cell of one provider's row whose panel names the question."""
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    row = body.split(f'/providers/{provider}/">')[1].split("</tr>")[0]  # /zh-hans/providers/... on Chinese pages
    cells = row.split('<details class="cell">')[1:]
    return next(cell for cell in cells if f"<strong>{question_label}</strong>" in cell)


def test_each_matrix_cell_opens_to_its_detail_source_and_verified_date_without_a_tooltip(client, data):
    from providers.models import Capability

    Capability.objects.filter(provider=data["acme"], key="mig").update(
        label="MIG on H100 and A100", detail="Seven instances per GPU on the managed node pools.")
    html = client.get("/providers/").content.decode()
    cell = matrix_cell(html, "acme", "MIG")
    summary, panel = cell.split("</summary>")
    assert "yes" in summary and "<a " not in summary  # the summary is the control, the link sits in the panel
    assert "Acme Cloud" in panel and "MIG on H100 and A100" in panel
    assert "Seven instances per GPU on the managed node pools." in panel
    assert 'href="https://docs.acme.example.com/mig"' in panel and ">Source</a>" in panel
    assert "verified 2026-11-01" in builders.shown(panel)
    assert "Documented" in panel  # the confidence in words
    assert 'title="' not in html.split("<tbody>")[1].split("</tbody>")[0]  # nothing lives only in a tooltip
    unknown = matrix_cell(html, "metal", "MIG")
    assert "no source we checked answers this yet." in unknown and "Source</a>" not in unknown


def test_matrix_cells_speak_chinese_on_chinese_pages(client, data):
    html = client.get("/providers/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    cell = matrix_cell(html, "metal", "MIG")
    assert "未知" in cell and "no source we checked" not in cell
    assert "阿克米云" in html.split("<tbody>")[1]
