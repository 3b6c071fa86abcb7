"""axe-core (bundled by axe-playwright-python, injected into the page: nothing fetched at test time) with the WCAG 2.2
AA rules (tags wcag2a, wcag2aa, wcag21a, wcag21aa, wcag22aa: target size, among others) on every page type of ours,
in English and Chinese, at 1366 and 390 px, against the full bundled snapshot: zero violations. One browser, one page
per language and width, reused for every page type. The vendored Swagger UI at /api/docs/ is not ours; its findings
are listed by a separate test that does not fail on them."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.page_types import pages

pytest.importorskip("playwright")
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")

pytestmark = pytest.mark.django_db(transaction=True)

WCAG_22_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]},
              "resultTypes": ["violations"]}
VIEWS = [("en", 1366), ("en", 390), ("zh-hans", 1366), ("zh-hans", 390)]


def describe(results) -> str:
    lines = []
    for violation in results.response["violations"]:
        targets = [", ".join(node["target"]) for node in violation["nodes"][:4]]
        lines.append(f"{violation['id']} ({violation['impact']}) x{len(violation['nodes'])}: {violation['help']} "
                     f"-> {targets}")
    return "\n".join(lines)


def test_every_page_type_has_no_wcag_22_aa_violations_on_the_full_snapshot(site, full_snapshot):
    axe = axe_sync.Axe()
    urls = pages()
    assert len(urls) >= 22  # every page type, the snapshot's idle provider included
    found = {}
    for language, width in VIEWS:
        page = site(language=language, width=width)
        for name, url in urls.items():
            page.goto(site.url + url)
            for figure in page.locator("[data-figure]").all():
                # Charts draw when they scroll into view (plotly is fetched then): scroll to each, as a reader would.
                figure.scroll_into_view_if_needed()
                expect(figure).to_have_class(re.compile(r"\bdrawn\b"), timeout=30000)
            results = axe.run(page, options=WCAG_22_AA)
            if results.violations_count:
                found[f"{name} ({language}, {width} px)"] = describe(results)
                screenshot(page, f"axe-{name}-{language}-{width}")
        page.context.close()
    # Pages asked for with a 400 or 404 on purpose are logged by the browser; nothing else may be.
    site.watch.problems[:] = [p for p in site.watch.problems if "400 (Bad Request)" not in p
                              and "404 (Not Found)" not in p]
    assert found == {}, "\n".join(f"{name}:\n{text}" for name, text in found.items())


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_manifest_scrolls_from_the_keyboard_and_escape_closes_an_offer_rows_popover(site, full_snapshot,
                                                                                        language):
    page = site(language=language, width=390)
    page.goto(site.url + "/advisor/?kind=inference&model=llama-3.1-8b")
    manifest = page.locator("pre.manifest")
    expect(manifest).to_have_attribute("tabindex", "0")
    expect(manifest).to_have_accessible_name(page.locator("h2#manifest").inner_text())
    manifest.focus()
    assert page.evaluate("document.activeElement.matches('pre.manifest')")
    if page.evaluate("(pre => pre.scrollWidth > pre.clientWidth)(document.querySelector('pre.manifest'))"):
        page.keyboard.press("ArrowRight")
        page.keyboard.press("End")
        page.wait_for_function("document.querySelector('pre.manifest').scrollLeft > 0")
    # An offer row's Kubernetes cell: opened from the keyboard, closed by Escape with the focus kept on it.
    page.goto(site.url + "/")
    cell = page.locator("table.offers details.k8s").first
    cell.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(cell).to_have_attribute("open", "")
    page.keyboard.press("Escape")
    expect(cell).not_to_have_attribute("open", "")
    assert page.evaluate("document.activeElement.closest('details.k8s') !== null")
    # ... and a tap elsewhere closes it too.
    cell.locator("summary").click()
    expect(cell).to_have_attribute("open", "")
    page.locator("h1").click()
    expect(cell).not_to_have_attribute("open", "")


def test_the_vendored_api_docs_page_is_listed_separately(site, capsys):
    """Swagger UI (drf-spectacular-sidecar) is a vendored page we do not write: report, do not fail."""
    axe = axe_sync.Axe()
    page = site()
    page.goto(site.url + "/api/docs/")
    page.wait_for_selector(".swagger-ui .info")
    results = axe.run(page, options=WCAG_22_AA)
    with capsys.disabled():
        print(f"\n/api/docs/ (vendored Swagger UI): {results.violations_count} axe violation(s)\n{describe(results)}")
