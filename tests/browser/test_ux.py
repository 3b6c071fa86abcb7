"""Issue 15 in a real browser, in English and Chinese at 1366 and 390 px: empty results that say so and offer a way
out, errors for unknown parameters, the error pages, compare from a provider page, keyboard and screen-reader
behaviour after htmx swaps, the phone layout, and compressed pages. Screenshots go to screenshots/ (git-ignored)."""

import re

import pytest

from tests.browser.conftest import screenshot
from tests.ui import builders

pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)

VIEWS = [("en", 1366), ("en", 390), ("zh-hans", 1366), ("zh-hans", 390)]
TEXT = {
    "en": {"zero": "0 offers match.", "unpriced": "Amazon Web Services meets these Kubernetes requirements",
           "unknown": "gpu_modle: not a parameter of this page", "country": "No country has the ISO code ZZ",
           "404": "Page not found", "500": "Something went wrong", "noprices": "We have no prices for",
           "chosen": "Chosen: Acme Cloud", "one_more": "Choose at least one more provider",
           "provider": "Amazon Web Services"},
    "zh-hans": {"zero": "0 个报价符合条件", "unpriced": "亚马逊云科技 满足这些 Kubernetes 要求",
                "unknown": "gpu_modle：不是本页面的参数", "country": "没有国家使用 ISO 代码 ZZ",
                "404": "找不到页面", "500": "出错了", "noprices": "我们还没有 亚马逊云科技 的价格",
                "chosen": "已选: 阿克米云", "one_more": "请在下方至少再选择一家厂商",
                "provider": "亚马逊云科技"},
}
SOURCE = {"en": "Source", "zh-hans": "来源"}
VERIFIED = {"en": "verified 2026-11-01", "zh-hans": "核实于 2026年11月1日"}


@pytest.fixture
def data():
    objects = builders.catalog()
    builders.rates()
    objects["aws"] = builders.provider("aws", "Amazon Web Services", caps=builders.FULL, name_zh="亚马逊云科技")
    from providers.models import Capability

    Capability.objects.filter(provider=objects["aws"], key="offering").update(  # as long as real ones are
        source_url="https://docs.aws.example.com/eks/latest/userguide/ml-eks-optimized-ami-and-gpu-nodes-amazon-linux.html")
    return objects


def rows(page):
    return page.locator("table.offers tbody code")


def expected_failure(site, status: str) -> None:
    """The browser logs the status of a page we asked for on purpose (400, 404) as a console error: forget just that."""
    site.watch.problems[:] = [p for p in site.watch.problems if status not in p]


def name(test: str, language: str, width: int) -> str:
    return f"{test}-{language}-{width}"


@pytest.mark.parametrize("language, width", VIEWS)
def test_an_empty_result_says_zero_names_unpriced_providers_and_relaxes_in_one_click(site, data, language, width):
    text = TEXT[language]
    page = site(language=language, width=width)
    page.goto(site.url + "/?provider=aws&gpu_family=H100")
    results = page.locator("#results")
    expect(results).to_contain_text(text["zero"])
    expect(results).to_contain_text(text["unpriced"])
    chips = page.locator(".chips a.chip")
    expect(chips).to_have_count(3)  # two filters and "remove all"
    screenshot(page, name("empty-result", language, width))
    # a name, not the slug, in the page's language
    expect(page.locator(".chips a.chip").first).to_contain_text(text["provider"])
    page.locator(".chips a.chip").first.click()  # drops the provider, keeps the GPU family
    expect(page).to_have_url(re.compile(r"/\?gpu_family=H100$"))
    expect(rows(page)).to_have_count(4)


@pytest.mark.parametrize("language, width", VIEWS)
def test_unknown_and_impossible_parameters_are_errors_on_the_page(site, data, language, width):
    text = TEXT[language]
    page = site(language=language, width=width)
    response = page.goto(site.url + "/?gpu_modle=h100")
    assert response.status == 400
    expect(page.locator(".errors")).to_contain_text(text["unknown"])
    screenshot(page, name("unknown-parameter", language, width))
    response = page.goto(site.url + "/?country=zz")
    assert response.status == 400
    expect(page.locator(".errors")).to_contain_text(text["country"])
    expected_failure(site, "400 (Bad Request)")


@pytest.mark.parametrize("language, width", VIEWS)
def test_error_pages_and_provider_pages_without_offers(site, data, language, width, settings):
    text = TEXT[language]
    settings.DEBUG = False
    page = site(language=language, width=width)
    response = page.goto(site.url + "/no-such-page/")
    assert response.status == 404
    expect(page.locator("h1")).to_have_text(text["404"])
    expect(page.locator("header.site")).to_be_attached()
    screenshot(page, name("404", language, width))
    expected_failure(site, "404 (Not Found)")
    page.goto(site.url + "/providers/aws/")
    expect(page.locator("#offers-title + p.empty")).to_contain_text(text["noprices"])


@pytest.mark.parametrize("language, width", VIEWS)
def test_compare_from_a_provider_page_asks_for_one_more(site, data, language, width):
    text = TEXT[language]
    page = site(language=language, width=width)
    page.goto(site.url + "/providers/acme/")
    page.locator("a[href$='/compare/?provider=acme']").click()  # /zh-hans/compare/... in Chinese
    expect(page.locator("#compare-chosen")).to_contain_text(text["chosen"])
    expect(page.locator("#compare-chosen")).to_contain_text(text["one_more"])
    expect(page.locator("input[name=provider][value=acme]")).to_be_checked()
    page.check("input[name=provider][value=metal]")
    page.locator("form.compare-form button[type=submit]").click()
    expect(page.locator("#compare-capabilities")).to_be_visible()
    screenshot(page, name("compare-from-provider", language, width))


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_compare_keeps_its_question_column_in_view_while_the_providers_scroll(site, data, language):
    page = site(language=language, width=390)
    page.goto(site.url + "/compare/?provider=acme&provider=metal&provider=aws")
    expect(page.locator("#compare-capabilities")).to_be_visible()
    page.wait_for_load_state("load")
    # Each table scrolled to its right edge, measured in the same frame: its first column stays at the left edge.
    tables = page.locator(".table-wrap:has(table.compare)").evaluate_all(
        """wraps => wraps.map(wrap => {
            const wide = wrap.scrollWidth > wrap.clientWidth;
            wrap.scrollLeft = 10000;
            const first = wrap.querySelector("tbody th[scope=row]").getBoundingClientRect();
            return {id: wrap.querySelector("table").id, wide, gap: first.x - wrap.getBoundingClientRect().x};
        })"""
    )
    assert any(table["wide"] for table in tables), tables  # at 390 px the providers do not fit: they scroll
    assert all(abs(table["gap"]) < 2 for table in tables), tables
    screenshot(page, name("compare-sticky", language, 390))


SKIP = {"en": "Skip to results", "zh-hans": "跳到结果"}
MATCH = {"en": "offers match", "zh-hans": "个报价符合条件"}


@pytest.mark.parametrize("language, width", VIEWS)
def test_skip_to_results_is_the_first_tab_stop_at_every_width(site, data, language, width):
    page = site(language=language, width=width)
    page.goto(site.url + "/")
    page.keyboard.press("Tab")
    focused = page.locator(":focus")
    expect(focused).to_have_text(SKIP[language])
    box = focused.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width  # shown when focused, at every width
    screenshot(page, name("skip-to-results", language, width))
    page.keyboard.press("Enter")
    expect(page.locator("#results-title")).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # the first chip-free result link is a few stops away, not 225
    assert page.evaluate("document.activeElement.closest('#results') !== null")


@pytest.mark.parametrize("language, width", VIEWS)
def test_after_a_swap_focus_and_viewport_return_and_the_count_is_announced(site, data, language, width):
    for index in range(55):  # two pages
        builders.offer(data["acme"], data["acme_h100"].source, data["h100"], f"more-{index}", f"{3 + index}.00")
    page = site(language=language, width=width)
    page.goto(site.url + "/")
    status = page.locator("#results-status")
    expect(status).to_have_attribute("aria-live", "polite")
    # Sort with the keyboard: focus comes back to the same column's (new) sort link.
    price_link = page.locator("table.offers thead th").nth(2).locator("a")
    price_link.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"ordering=-price_per_gpu_hour"))
    expect(page.locator("table.offers thead th").nth(2).locator("a")).to_be_focused()
    expect(status).to_contain_text(MATCH[language])
    # The pager at the bottom: focus goes to the results heading, scrolled into view.
    page.locator(".pager a[rel=next]").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"page=2"))
    expect(page.locator("#results-title")).to_be_focused()
    top = page.evaluate("document.getElementById('results-title').getBoundingClientRect().top")
    assert -1 <= top < 1000
    expect(status).to_contain_text("2")
    screenshot(page, name("after-page-swap", language, width))
    # A filter: focus stays on the checkbox the user ticked; the new count is announced.
    if width < 700:
        page.locator("#filters-panel > summary").click()
    page.check("input[name=gpu_family][value=A100]")
    expect(status).to_contain_text("1")
    expect(page.locator("input[name=gpu_family][value=A100]")).to_be_focused()


@pytest.mark.parametrize("language, width", VIEWS)
def test_phone_navigation_collapses_and_results_come_before_filters(site, data, language, width):
    page = site(language=language, width=width)
    page.goto(site.url + "/")
    nav = page.locator("#site-nav")
    toggle = page.locator(".nav-toggle")
    if width < 700:
        expect(nav).to_be_hidden()
        expect(toggle).to_be_visible()
        toggle.click()
        expect(nav).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        screenshot(page, name("nav-open", language, width))
        toggle.click()
        expect(nav).to_be_hidden()
        # Results first: the filters panel is closed and the first offer is in the first screenful.
        assert page.evaluate("document.getElementById('filters-panel').open") is False
        first_row = page.locator("table.offers tbody tr").first.bounding_box()
        assert first_row["y"] < 1000
    else:
        expect(nav).to_be_visible()
        expect(toggle).to_be_hidden()
        expect(page.locator("#filters")).to_be_visible()
    price = page.locator("table.offers td.price").first.bounding_box()
    assert price["x"] >= 0 and price["x"] + price["width"] <= width  # the price is on screen without scrolling
    screenshot(page, name("offers", language, width))


SPOT = {"en": "Spot", "zh-hans": "抢占式"}


@pytest.mark.parametrize("language, width", VIEWS)
def test_on_phones_each_offer_is_a_card_that_fits_the_screen(site, data, language, width):
    """At 390 px a row is a card: provider and price on its first line, every cell within the screen (no sideways
    scrolling), the spot cell saying what it is; at 1366 px the table's cells stay side by side on one line."""
    page = site(language=language, width=width)
    page.goto(site.url + "/")
    row = page.locator("table.offers tbody tr").first
    provider, price = row.locator("td").nth(0).bounding_box(), row.locator("td.price").bounding_box()
    cells = [row.locator("td").nth(index).bounding_box() for index in range(row.locator("td").count())]
    if width < 700:
        assert abs(provider["y"] - price["y"]) < 4 and price["x"] > provider["x"]  # one line: provider, price
        assert all(cell["x"] >= 0 and cell["x"] + cell["width"] <= width + 1 for cell in cells if cell)
        label = row.locator("td").nth(3).evaluate("cell => getComputedStyle(cell, '::before').content")
        assert SPOT[language] in label
        screenshot(page, name("offer-cards", language, width))
    else:
        assert len({round(cell["y"]) for cell in cells if cell}) == 1  # a table row
        label = row.locator("td").nth(3).evaluate("cell => getComputedStyle(cell, '::before').content")
        assert label in ("none", "normal")


# What a closed <select> shows of its chosen option: its box less its padding and the drop-down arrow (about 20 px).
OPTION_FITS = """select => {
  const style = getComputedStyle(select), pen = document.createElement("canvas").getContext("2d");
  pen.font = style.font;
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
  return [...select.options].filter(option => pen.measureText(option.text).width > room).map(option => option.text);
}"""


@pytest.mark.parametrize("language, width", VIEWS)
def test_every_order_by_choice_reads_whole_in_the_closed_select(site, data, language, width):
    """The filter column is narrow at 1366 px: each "Order by" choice, the default among them, is short enough to be
    read whole once chosen (it was cut to "Cheapest per GPU-hour first (c")."""
    page = site(language=language, width=width)
    page.goto(site.url + "/")
    select = page.locator("select[name=ordering]")
    assert select.locator("option").count() >= 19
    assert select.evaluate(OPTION_FITS) == []


# The darkest grey (0 black .. 255 white) in a PNG screenshot, read back through a canvas of the page itself.
DARKEST = """async url => {
  const image = new Image();
  image.src = url;
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = image.width; canvas.height = image.height;
  const pen = canvas.getContext("2d");
  pen.drawImage(image, 0, 0);
  const data = pen.getImageData(0, 0, image.width, image.height).data;
  let darkest = 255;
  for (let i = 0; i < data.length; i += 4) darkest = Math.min(darkest, (data[i] + data[i + 1] + data[i + 2]) / 3);
  return darkest;
}"""


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_a_table_wider_than_the_screen_shades_the_side_that_has_more(site, data, language):
    """/gpus/ at 390 px scrolls sideways inside its wrapper: a shadow marks the right edge while columns are hidden
    there, and moves to the left edge once scrolled to the end."""
    import base64

    page = site(language=language, width=390)
    page.goto(site.url + "/gpus/")
    wrap = page.locator(".table-wrap").first
    box = wrap.bounding_box()
    assert wrap.evaluate("w => w.scrollWidth > w.clientWidth + 50")
    row = wrap.locator("tbody tr").first.bounding_box()
    blank = {"y": row["y"] + row["height"] - 6, "height": 4, "width": 12}  # under the text of the first row

    def darkest(x: float) -> float:
        png = page.screenshot(clip={**blank, "x": x})
        return page.evaluate(DARKEST, "data:image/png;base64," + base64.b64encode(png).decode())

    right, left = box["x"] + box["width"] - 12, box["x"]
    assert darkest(right) < 235 and darkest(left) > 250
    wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
    assert darkest(right) > 250 and darkest(left) < 235


TOOLBAR = {"en": "Download plot as a PNG", "zh-hans": "下载图表为PNG格式"}


@pytest.mark.parametrize("language, width", VIEWS)
def test_charts_load_the_partial_plotly_bundle_with_the_page_language_toolbar(site, data, language, width):
    page = site(language=language, width=width)
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(site.url + "/charts/")
    chart = page.locator('[data-figure="fig-distribution"]')
    expect(chart).to_have_class(re.compile("drawn"))
    expect(chart.locator(f'.modebar-btn[data-title="{TOOLBAR[language]}"]')).to_have_count(1)
    plotly = [url for url in requested if "plotly" in url]
    assert any("plotly-box-3.1.1.min.js" in url for url in plotly), plotly
    assert any("plotly-locale-zh-cn" in url for url in plotly) == (language == "zh-hans")
    screenshot(page, name("charts", language, width))
    # Pages without charts never fetch plotly.
    requested.clear()
    page.goto(site.url + "/")
    page.wait_for_load_state("networkidle")
    assert not [url for url in requested if "plotly" in url]


DIGEST = {"en": "Weekly digest", "zh-hans": "每周摘要"}


@pytest.mark.parametrize("language, width", VIEWS)
def test_the_digest_is_a_page_reached_from_the_navigation(site, data, language, width):
    page = site(language=language, width=width)
    page.goto(site.url + "/")
    if width < 700:
        page.locator(".nav-toggle").click()
    page.locator("#site-nav").get_by_role("link", name=DIGEST[language]).click()
    expect(page).to_have_url(re.compile(r"/digest/$"))
    expect(page.locator("h1")).to_have_text(DIGEST[language])
    screenshot(page, name("digest", language, width))


@pytest.mark.parametrize("language, width", VIEWS)
def test_the_matrix_filters_in_one_click_and_keeps_its_header_and_provider_column_in_view(site, data, language, width):
    page = site(language=language, width=width)
    page.goto(site.url + "/providers/")
    page.locator(".presets a.chip").first.click()  # MIG and scale to zero
    expect(page).to_have_url(re.compile(r"mig=yes&scale_to_zero=yes"))
    expect(page.locator("table.matrix tbody th[scope=row]")).to_have_count(3)  # acme, dearco, aws
    page.wait_for_load_state("load")
    # Scroll the table to its far corner and measure in the same frame, so nothing that moves the whole
    # table (a font or a notice above it) can come between the three measurements.
    header, provider, box = page.locator(".matrix-wrap").evaluate(
        """wrap => {
            wrap.scrollTop = 10000; wrap.scrollLeft = 10000;
            const at = el => el.getBoundingClientRect();
            return [at(wrap.querySelector("thead th")), at(wrap.querySelector("tbody th[scope=row]")), at(wrap)]
                .map(r => ({x: r.x, y: r.y}));
        }"""
    )
    assert abs(header["y"] - box["y"]) < 2 and abs(provider["x"] - box["x"]) < 2  # sticky row and column
    screenshot(page, name("matrix-query", language, width))


@pytest.mark.parametrize("language, width", VIEWS)
def test_a_matrix_cell_opens_from_the_keyboard_or_a_tap_and_escape_closes_it(site, data, language, width, browser):
    page = site(language=language, width=width)
    page.goto(site.url + "/providers/")
    acme = page.locator("table.matrix tbody tr").filter(has=page.locator('a[href$="/providers/acme/"]'))
    cell = acme.locator("details.cell").nth(1)
    panel = cell.locator(".cell-pop")
    expect(panel).to_be_hidden()
    cell.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(panel).to_be_visible()
    expect(panel.get_by_role("link", name=SOURCE[language])).to_have_attribute("href", re.compile(r"^https://docs\.acme"))
    expect(panel).to_contain_text(VERIFIED[language])
    axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe().run(page)
    assert axe.violations_count == 0, axe.generate_report()  # the open panel too
    box, wrap = panel.bounding_box(), page.locator(".matrix-wrap").bounding_box()
    assert box["x"] >= wrap["x"] - 1 and box["x"] + box["width"] <= wrap["x"] + wrap["width"] + 1  # inside the table
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    assert page.evaluate("document.activeElement.closest('details.cell') !== null")  # the focus stays on the cell
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing in a cell widens the page
    screenshot(page, name("matrix-cell", language, width))
    # A touch screen: a tap opens one cell, a tap on another swaps them, a tap outside closes.
    touch = browser.new_context(viewport={"width": width, "height": 900}, has_touch=True, is_mobile=width < 500)
    touch.add_cookies([{"name": "django_language", "value": language, "url": site.url}])
    phone = touch.new_page()
    phone.goto(site.url + "/providers/")
    cells = phone.locator("table.matrix tbody tr").first.locator("details.cell")
    cells.nth(0).locator("summary").tap()
    expect(cells.nth(0).locator(".cell-pop")).to_be_visible()
    cells.nth(2).locator("summary").tap()
    expect(cells.nth(2).locator(".cell-pop")).to_be_visible()
    expect(cells.nth(0).locator(".cell-pop")).to_be_hidden()
    phone.locator("h1").tap()
    expect(phone.locator("details.cell[open]")).to_have_count(0)
    touch.close()


@pytest.mark.parametrize("language, width", VIEWS)
def test_the_advisor_form_fields_never_overlap_or_widen_the_page(site, data, language, width):
    page = site(language=language, width=width)
    page.goto(site.url + "/advisor/")
    overlaps = page.evaluate("""() => {
        const boxes = [...document.querySelectorAll('form.advisor .field')].map(field => {
            // A field's extent is what it draws: its own box and every control or label inside it.
            let r = field.getBoundingClientRect(), right = r.right, bottom = r.bottom;
            field.querySelectorAll('*').forEach(el => { const b = el.getBoundingClientRect();
                if (b.width) { right = Math.max(right, b.right); bottom = Math.max(bottom, b.bottom); } });
            return {name: field.querySelector('label').textContent.trim(), left: r.left, top: r.top, right, bottom};
        });
        const found = [];
        boxes.forEach((a, i) => boxes.slice(i + 1).forEach(b => {
            if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) {
                found.push(a.name + ' / ' + b.name); }
        }));
        return found;
    }""")
    assert overlaps == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, name("advisor", language, width))


@pytest.mark.parametrize("language, width", [*VIEWS, ("en", 320), ("zh-hans", 320)])
def test_no_main_page_is_wider_than_the_screen(site, data, language, width):
    """Wide tables scroll inside their wrapper; long source URLs wrap; nothing a cell hides widens the page; forms
    fit (the digest's manage page, with a saved filter's long choices, was 546 px wide on a phone). 320 px is
    WCAG's reflow width."""
    from django.utils import timezone

    from digest.models import Subscription
    from digest.tokens import manage_token_make

    subscription = Subscription.objects.create(
        email="reflow@example.org", confirmed_at=timezone.now(), language=language,
        filter_query="gpu=h100-sxm&provider=acme&provider=metal&mig=yes&rdma=any&offering=managed&continent=EU")
    page = site(language=language, width=width)
    wide = {}
    for url in ("/", "/providers/", "/providers/acme/", "/providers/aws/", "/gpus/", "/gpus/h100-sxm/", "/charts/",
                "/advisor/", "/digest/", "/digest/subscribe/", f"/digest/manage/{manage_token_make(subscription.key)}/",
                "/compare/?provider=acme&provider=metal", "/sources/", "/guides/",
                f"/offers/{data['acme_h100'].pk}/"):
        page.goto(site.url + url)
        scroll = page.evaluate("document.documentElement.scrollWidth")
        if scroll > width:
            wide[url] = scroll
    assert wide == {}


STUCK = """() => {
    const pinned = [...document.querySelectorAll('body *')].filter(el => {
        const style = getComputedStyle(el), box = el.getBoundingClientRect();
        const vertical = style.position === 'fixed'
            || (style.position === 'sticky' && (style.top !== 'auto' || style.bottom !== 'auto'));
        return vertical && box.height > 0 && box.bottom > 0 && box.top < innerHeight;
    });
    // The screen height they cover together: a sticky header row is many cells in one band, counted once.
    const bands = pinned.map(el => el.getBoundingClientRect())
        .map(box => [Math.max(0, box.top), Math.min(innerHeight, box.bottom)]).sort((a, b) => a[0] - b[0]);
    let covered = 0, end = 0;
    for (const [top, bottom] of bands) { if (bottom > end) { covered += bottom - Math.max(top, end); end = bottom; } }
    return covered;
}"""


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_at_200_percent_zoom_no_page_scrolls_both_ways_or_hides_content_under_sticky_bars(site, data, language):
    """WCAG 1.4.10 at 200% zoom of a 1366x768 screen (a 683x384 CSS-pixel page): every page type reflows to one
    column of scrolling, and nothing pinned to the screen (sticky headers, the filter panel's foot) takes more than
    a quarter of its height once scrolled, so no content is lost under it. The 320 and 390 px widths are checked by
    test_no_main_page_is_wider_than_the_screen; zoom also shortens the screen, which they do not."""
    page = site(language=language, width=1366, height=768, zoom=2)
    assert page.evaluate("[innerWidth, innerHeight, devicePixelRatio]") == [683, 384, 2]
    wide, covered = {}, {}
    for url in ("/", "/?gpu_family=H100&offering=managed", f"/offers/{data['acme_h100'].pk}/", "/providers/",
                "/providers/acme/", "/gpus/", "/gpus/h100-sxm/", "/compare/?provider=acme&provider=metal",
                "/charts/", "/sources/", "/guides/", "/guides/gpu-sharing/", "/advisor/",
                "/advisor/?kind=batch&gpu=h100-sxm&gpus_per_node=2&nodes=2", "/digest/", "/digest/subscribe/"):
        page.goto(site.url + url)
        if page.evaluate("document.documentElement.scrollWidth") > 683:
            wide[url] = page.evaluate("document.documentElement.scrollWidth")
        page.evaluate("window.scrollTo(0, document.body.scrollHeight / 2)")
        stuck = page.evaluate(STUCK)
        if stuck > 384 / 4:
            covered[url] = stuck
    assert wide == {} and covered == {}
    screenshot(page, name("zoom-200", language, 683))


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_the_box_plot_keeps_most_of_its_width_for_the_boxes(site, data, language):
    from providers.models import GpuModel

    GpuModel.objects.filter(slug="h100-sxm").update(name="NVIDIA H100 SXM5 80GB (form factor not stated)")
    page = site(language=language, width=390)
    page.goto(site.url + "/charts/")
    chart = page.locator('[data-figure="fig-distribution"]')
    chart.scroll_into_view_if_needed()
    expect(chart).to_have_class(re.compile("drawn"))
    plot = chart.locator(".nsewdrag").first.bounding_box()  # plotly's plot area
    assert plot["width"] > 0.6 * chart.bounding_box()["width"]
    ticks = chart.locator(".ytick text").evaluate_all("els => els.map(el => el.textContent)")
    assert "H100 SXM5 80GB" in ticks and not [tick for tick in ticks if "NVIDIA" in tick or "(" in tick]
    expect(page.locator("table.spread")).to_contain_text("NVIDIA H100 SXM5 80GB")  # the table keeps full names


MATCHING = {"en": re.compile(r"^3,\d{3} offers$"), "zh-hans": re.compile(r"^3\d{3} 个报价$")}
SHOW = {"en": re.compile(r"^Show [\d,]+ offers$"), "zh-hans": re.compile(r"^查看 \d+ 个报价$")}
CARD_LABELS = {"en": ("Memory / GPU", "Availability", "Last seen"), "zh-hans": ("单卡显存", "可用性", "最近出现")}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_the_first_offer_is_on_the_first_screen_of_the_full_snapshot(site, full_snapshot, language):
    """At 390x844 with every offer of the bundled snapshot: the first offer card starts on the first screen, the
    filters are one button that says how many offers match (and says it again, live, after a filter changes), and the
    card's fields say what they are; at 1366x768 the first row is on the first screen too."""
    page = site(language=language, width=390, height=844)
    page.goto(site.url + "/")
    card = page.locator("table.offers tbody tr").first
    assert card.bounding_box()["y"] < 844
    expect(card.locator("td.price")).to_be_in_viewport()  # provider and price, the card's first line, are seen
    button = page.locator("#filters-panel > summary")
    expect(button).to_be_in_viewport()
    expect(page.locator("#filters-results")).to_have_text(MATCHING[language])
    for cell, label in zip(card.locator("td").all()[8:], CARD_LABELS[language], strict=True):
        assert label in cell.evaluate("cell => getComputedStyle(cell, '::before').content")
    screenshot(page, name("first-screen", language, 390))
    button.click()
    page.locator("input[name=gpu_family][value=H100]").check()
    expect(page.locator("#filters-count")).to_have_text("(1)")
    expect(page.locator("#filters-results")).not_to_have_text(MATCHING[language])
    expect(page.locator("#panel-show")).to_have_text(SHOW[language])
    expect(page.locator("#panel-show")).to_be_in_viewport()  # the open panel's sticky foot
    page.locator("#panel-show").click()
    expect(page.locator("#results-title")).to_be_in_viewport()
    desktop = site(language=language, width=1366, height=768)
    desktop.goto(site.url + "/")
    assert desktop.locator("table.offers tbody tr").first.bounding_box()["y"] < 768
    screenshot(desktop, name("first-screen", language, 1366))


MANY_FILTERS = ("gpu_family=H100&offering=managed&continent=NA&gpu_count_min=8&node_autoscaling=yes&mig=yes"
                "&price_per_gpu_hour_max=12&rdma=multinode")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_on_a_phone_many_filters_leave_the_first_offer_on_the_first_screen(site, full_snapshot, language):
    """Eight filters on the full snapshot at 390x844 (a buyer's "8x H100, managed, North America, autoscaling, MIG,
    multi-node fabric, under 12 USD"): the active filters are one row that scrolls sideways, the introduction folds
    to its summary line, and the first offer's provider and price are on the first screen. Before, the chips alone
    were 380 px tall and the first card started below the screen. Every chip stays reachable: the keyboard brings
    the last one into view, and the folded introduction opens with a tap."""
    page = site(language=language, width=390, height=844)
    page.goto(site.url + "/?" + MANY_FILTERS)
    chips = page.locator(".chips a.chip")
    assert chips.count() == 9  # eight filters and "remove all"
    expect(page.locator("table.offers tbody tr").first.locator("td.price")).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    strip = page.locator(".chips ul").bounding_box()
    assert strip["height"] < 60
    last = chips.last
    expect(last).not_to_be_in_viewport()
    last.focus()
    expect(last).to_be_in_viewport()
    intro = page.locator("#intro")
    expect(intro.locator(".data-note")).not_to_be_visible()
    intro.locator("summary").click()
    expect(intro.locator(".data-note")).to_be_visible()
    screenshot(page, name("many-filters", language, 390))
    # Without filters, and on a wide screen, the introduction is open and has no summary line.
    page.goto(site.url + "/")
    expect(page.locator("#intro .data-note")).to_be_visible()
    expect(page.locator("#intro > summary")).not_to_be_visible()
    desktop = site(language=language, width=1366, height=768)
    desktop.goto(site.url + "/?" + MANY_FILTERS)
    expect(desktop.locator("#intro .data-note")).to_be_visible()
    expect(desktop.locator("table.offers tbody tr").first).to_be_in_viewport()
