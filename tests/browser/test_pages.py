"""The pages in a real browser: filtering without reload, the URL as the state (shareable, back button), sorting,
currency and language switches, the compare page, charts that draw, the no-JavaScript fallback, and no console
error or off-site request anywhere. Screenshots of the main pages go to screenshots/ (git-ignored)."""

import re

import pytest

from tests.browser.conftest import screenshot
from tests.ui import builders

pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def data():
    objects = builders.catalog()
    builders.rates()
    return objects


def rows(page):
    return page.locator("table.offers tbody code")


def test_filtering_updates_the_table_without_reload_and_the_url_follows(site, data):
    page = site()
    page.goto(site.url + "/")
    expect(rows(page)).to_have_count(6)
    page.evaluate("window.__sameDocument = true")
    page.check("input[name=gpu_family][value=H100]")
    page.check("input[name=mig][value=yes]")
    page.check("input[name=rdma][value=infiniband]")
    page.check("input[name=offering][value=managed]")
    page.fill("#id_price_per_gpu_hour_max", "3")
    page.keyboard.press("Tab")
    expect(rows(page)).to_have_text(["acme.h100x8"])
    expect(page).to_have_url(re.compile(r"price_per_gpu_hour_max=3"))
    assert page.evaluate("window.__sameDocument") is True  # htmx swapped the results; no full reload
    for part in ("gpu_family=H100", "mig=yes", "rdma=infiniband", "offering=managed"):
        assert part in page.url
    assert "=&" not in page.url  # only the filters that are set
    screenshot(page, "offers-filtered")


def test_the_url_round_trips_the_filters_and_the_back_button_restores_them(site, data):
    page = site()
    page.goto(site.url + "/?gpu_family=H100&offering=managed")
    expect(page.locator("input[name=gpu_family][value=H100]")).to_be_checked()
    expect(page.locator("input[name=offering][value=managed]")).to_be_checked()
    # Machines documented as nodes of their provider's managed Kubernetes (old.h100's provider states none).
    expect(rows(page)).to_have_text(["acme.h100x8", "dear.h100"])
    page.check("input[name=rdma][value=any]")
    expect(rows(page)).to_have_text(["acme.h100x8"])  # the one with a documented fabric
    expect(page).to_have_url(re.compile(r"rdma=any"))
    page.go_back()
    expect(page).to_have_url(re.compile(r"offering=managed$"))
    expect(rows(page)).to_have_text(["acme.h100x8", "dear.h100"])
    expect(page.locator("input[name=rdma][value=any]")).not_to_be_checked()


def test_sorting_by_clicking_headers(site, data):
    page = site()
    page.goto(site.url + "/?gpu_family=H100")
    expect(rows(page)).to_have_text(["metal.h100", "old.h100", "acme.h100x8", "dear.h100"])
    page.locator("th a", has_text="Price / GPU-hour").click()
    expect(rows(page)).to_have_text(["dear.h100", "acme.h100x8", "old.h100", "metal.h100"])
    expect(page).to_have_url(re.compile(r"ordering=-price_per_gpu_hour"))
    expect(page.locator("#id_ordering")).to_have_value("-price_per_gpu_hour")
    page.get_by_role("link", name="Provider", exact=True).click()
    expect(rows(page).first).to_have_text("acme.h100x8")


def test_currency_and_unit_switches(site, data):
    page = site()
    page.goto(site.url + "/?provider=acme")
    expect(page.locator("td.price").first).to_have_text(re.compile(r"^\$0\.700(?![0-9,.])"))
    page.select_option("#id_currency", "EUR")
    expect(page.locator("td.price").first).to_have_text(re.compile(r"^€0\.560(?![0-9,.])"))
    expect(page.locator(".count")).to_contain_text("ECB reference rate of 2026-11-27")
    expect(page).to_have_url(re.compile(r"currency=EUR"))
    page.check("input[name=unit][value=instance]")
    expect(page.locator("td.price").last).to_have_text(re.compile(r"^€16\.00(?![0-9,.])"))  # 8 x 2.50 / 1.25, cents


def test_language_switch_to_simplified_chinese_keeps_the_filters(site, data):
    page = site()
    page.goto(site.url + "/?gpu_family=H100")
    page.check("input[name=mig][value=yes]")
    expect(page).to_have_url(re.compile(r"mig=yes"))
    page.get_by_role("button", name="简体中文").click()
    expect(page.locator("h1")).to_have_text("为 Kubernetes 租用 GPU，该去哪里")
    expect(page).to_have_url(re.compile(r"gpu_family=H100&mig=yes"))
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
    expect(rows(page)).to_have_text(["acme.h100x8", "dear.h100"])
    screenshot(page, "offers-zh-hans")


def test_compare_page(site, data):
    page = site()
    page.goto(site.url + "/compare/")
    page.check("input[name=provider][value=acme]")
    page.check("input[name=provider][value=metal]")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#compare-capabilities tr.differs").first).to_be_visible()
    expect(page.locator("#compare-prices td.best")).to_have_count(1)  # A100: only one provider, nothing to beat
    expect(page.locator("#compare-prices td.best")).to_contain_text("$1.900")
    screenshot(page, "compare")


def test_charts_draw(site, data):
    page = site()
    page.goto(site.url + "/charts/")
    expect(page.locator('[data-figure="fig-distribution"].drawn svg.main-svg').first).to_be_visible()
    screenshot(page, "charts")
    page.goto(site.url + "/gpus/h100-sxm/")
    expect(page.locator('[data-figure="fig-history"].drawn svg.main-svg').first).to_be_visible()
    expect(page.locator('[data-figure="fig-spread"].drawn svg.main-svg').first).to_be_visible()
    screenshot(page, "gpu")


def test_filters_work_without_javascript(site, data):
    page = site(javascript=False)
    page.goto(site.url + "/")
    page.check("input[name=gpu_family][value=A100]")
    page.get_by_role("button", name="Apply filters").click()
    expect(page).to_have_url(re.compile(r"/\?gpu_family=A100$"))
    expect(rows(page)).to_have_text(["metal.a100"])


def test_kubernetes_cell_opens_from_the_keyboard_with_reasons_and_sources(site, data):
    page = site()
    page.goto(site.url + "/?provider=acme&gpu_family=H100")
    cell = page.locator("td.badges details.k8s").first
    cell.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(cell).to_have_attribute("open", "")
    expect(cell).to_contain_text("can be a node of Acme Cloud")
    assert cell.locator("a[href*='docs.acme.example.com']").count() >= 1


def test_every_page_loads_without_console_errors_and_screenshots(site, data):
    page = site()
    pages = {"offers": "/", "providers": "/providers/", "provider": "/providers/acme/", "gpus": "/gpus/",
             "offer": f"/offers/{data['acme_h100'].pk}/", "guides": "/guides/",
             "guide-sharing": "/guides/gpu-sharing/", "sources": "/sources/"}
    for name, url in pages.items():
        response = page.goto(site.url + url)
        assert response.status == 200, url
        page.wait_for_load_state("networkidle")
        screenshot(page, name)
    phone = site(width=390)
    phone.goto(site.url + "/?gpu_family=H100")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390 + 1  # no sideways page scroll
    screenshot(phone, "offers-phone")
    chinese = site(language="zh-hans")
    for url in ("/providers/acme/", "/guides/kubernetes-support/", "/compare/?provider=acme&provider=metal"):
        chinese.goto(site.url + url)
    screenshot(chinese, "compare-zh-hans")


def test_kubernetes_cell_without_javascript_links_to_the_offers_answers(site, data):
    page = site(javascript=False)
    page.goto(site.url + "/?provider=acme&gpu_family=H100")
    cell = page.locator("td.badges details.k8s").first
    cell.locator("summary").click()
    cell.get_by_role("link", name="Every answer with its reason and sources").click()
    expect(page).to_have_url(re.compile(r"/offers/\d+/#kubernetes$"))
    expect(page.locator("details.k8s.full")).to_contain_text("can be a node of Acme Cloud")


def right_edge_within_table_view(page, column: str) -> bool:
    """Whether the header cell named `column` ends inside the table's visible width (no sideways scroll needed)."""
    return page.evaluate("""(name) => {
        const wrap = document.querySelector('.table-wrap');
        const th = [...wrap.querySelectorAll('thead th')].find(th => th.textContent.trim().startsWith(name));
        return th.getBoundingClientRect().right <= wrap.getBoundingClientRect().right + 1
            && th.getBoundingClientRect().right <= window.innerWidth; }""", column)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_instance_and_region_are_in_view_at_1366_and_columns_can_be_hidden_and_stay_hidden(site, data, language):
    page = site(width=1366, language=language)
    page.goto(site.url + "/")
    instance, region = ("Instance", "Region") if language == "en" else ("实例", "地域")
    assert right_edge_within_table_view(page, instance) and right_edge_within_table_view(page, region)
    chooser = page.locator("details#columns")
    chooser.locator("summary").focus()
    page.keyboard.press("Enter")  # the chooser opens from the keyboard
    spot = chooser.get_by_role("checkbox").first
    spot.focus()
    page.keyboard.press("Space")
    expect(page.locator("table.offers thead th").nth(3)).to_be_hidden()
    expect(page.locator("table.offers tbody tr").first.locator("td").nth(3)).to_be_hidden()
    page.locator("table.offers thead th a").first.click()  # an htmx sort swaps the results: still hidden
    expect(page).to_have_url(re.compile(r"ordering=provider"))
    expect(page.locator("table.offers thead th").nth(3)).to_be_hidden()
    page.reload()  # remembered in this browser
    expect(page.locator("table.offers thead th").nth(3)).to_be_hidden()
    expect(page.locator("details#columns input[name=column]").first).not_to_be_checked()
    screenshot(page, f"offers-columns-{language}")


def test_without_javascript_every_column_shows_and_the_chooser_is_absent(site, data):
    page = site(width=1366, javascript=False)
    page.goto(site.url + "/")
    expect(page.locator("details#columns")).to_be_hidden()
    expect(page.locator("table.offers thead th")).to_have_count(11)
    expect(page.locator("table.offers thead th").nth(3)).to_be_visible()


def test_monthly_cost_toggle_swaps_prices_and_header_in_place(site, data):
    page = site(width=1366)
    page.goto(site.url + "/?provider=acme&gpu_family=H100")
    page.get_by_label("per month (730 hours)").check()
    expect(page).to_have_url(re.compile(r"period=month"))
    expect(page.locator("table.offers thead th").nth(2)).to_contain_text("Price / GPU-month")
    expect(page.locator("table.offers td.price").first).to_have_text(re.compile(r"^\$1,825\.00(?![0-9,.])"))
    assert right_edge_within_table_view(page, "Region")
