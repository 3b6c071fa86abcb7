"""axe-core (bundled by axe-playwright-python, injected into the page: nothing fetched at test time) on every main
page of ours in English and Chinese, at desktop and phone widths: zero violations. The vendored Swagger UI at
/api/docs/ is not ours; its findings are listed by a separate test that does not fail on them."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.ui import builders

pytest.importorskip("playwright")
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def data():
    objects = builders.catalog()
    builders.rates()
    builders.provider("aws", "Amazon Web Services", caps=builders.FULL, name_zh="亚马逊云科技")
    return objects


def pages(data) -> dict[str, str]:
    return {
        "offers": "/", "offers-filtered": "/?gpu_family=H100&offering=managed&mig=yes",
        "offers-empty": "/?provider=aws", "offers-error": "/?gpu_modle=h100",
        "providers": "/providers/", "provider": "/providers/acme/", "provider-no-offers": "/providers/aws/",
        "gpus": "/gpus/", "gpu": "/gpus/h100-sxm/", "offer": f"/offers/{data['acme_h100'].pk}/",
        "compare-pick": "/compare/", "compare-one": "/compare/?provider=acme",
        "compare": "/compare/?provider=acme&provider=metal", "charts": "/charts/", "guides": "/guides/",
        "guide": "/guides/gpu-sharing/", "sources": "/sources/", "advisor": "/advisor/",
        "digest": "/digest/", "digest-subscribe": "/digest/subscribe/?gpu_family=H100", "not-found": "/no-such-page/",
    }


def describe(results) -> str:
    lines = []
    for violation in results.response["violations"]:
        targets = [", ".join(node["target"]) for node in violation["nodes"][:4]]
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']} -> {targets}")
    return "\n".join(lines)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("width", [1366, 390])
def test_every_main_page_has_no_axe_violations(site, data, language, width):
    axe = axe_sync.Axe()
    page = site(language=language, width=width)
    found = {}
    for name, url in pages(data).items():
        page.goto(site.url + url)
        for figure in page.locator("[data-figure]").all():
            # Charts draw when they scroll into view (plotly is fetched then): scroll to each, as a reader would.
            figure.scroll_into_view_if_needed()
            expect(figure).to_have_class(re.compile(r"\bdrawn\b"), timeout=30000)
        results = axe.run(page)
        if results.violations_count:
            found[name] = describe(results)
            screenshot(page, f"axe-{name}-{language}-{width}")
    # Pages asked for with a 400 or 404 on purpose are logged by the browser; nothing else may be.
    site.watch.problems[:] = [p for p in site.watch.problems if "400 (Bad Request)" not in p
                              and "404 (Not Found)" not in p]
    assert found == {}, "\n".join(f"{name}:\n{text}" for name, text in found.items())


def test_the_vendored_api_docs_page_is_listed_separately(site, data, capsys):
    """Swagger UI (drf-spectacular-sidecar) is a vendored page we do not write: report, do not fail."""
    axe = axe_sync.Axe()
    page = site()
    page.goto(site.url + "/api/docs/")
    page.wait_for_selector(".swagger-ui .info")
    results = axe.run(page)
    with capsys.disabled():
        print(f"\n/api/docs/ (vendored Swagger UI): {results.violations_count} axe violation(s)\n{describe(results)}")
