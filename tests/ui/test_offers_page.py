"""The offers page (home): the shared FilterSet's filters, htmx fragments and canonical URLs, sorting, price
display (unit, currency at dated rates), freshness and capability badges, errors, links, and query counts."""

import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from providers import offer_reads, selectors
from providers.filters import OfferFilterSet
from providers.models import ExchangeRate
from tests.ui import builders
from web import guides, offer_rows

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": "http://testserver/"}


@pytest.fixture
def data():
    return builders.catalog()


def instance_types(response) -> list[str]:
    return re.findall(r'<code>([^<]+)</code></a></td>', response.content.decode())


def test_offers_page_lists_active_offers_cheapest_first(client, data):
    response = client.get("/")
    assert response.status_code == 200
    assert instance_types(response) == ["acme.l4", "metal.a100", "metal.h100", "old.h100", "acme.h100x8", "dear.h100"]
    assert "6 offers match." in response.content.decode()


def test_the_question_from_the_issue_finds_exactly_the_matching_offers(client, data):
    """H100 with MIG and InfiniBand on a managed control plane under $3 per GPU-hour."""
    response = client.get("/?gpu_family=H100&mig=yes&rdma=infiniband&offering=managed&price_per_gpu_hour_max=3")
    assert response.status_code == 200
    assert instance_types(response) == ["acme.h100x8"]


@pytest.mark.parametrize("name", sorted(OfferFilterSet.base_filters))
def test_every_filter_of_the_shared_filterset_is_in_the_panel(client, data, name):
    html = client.get("/").content.decode()
    assert f'name="{name}"' in html


def test_capability_filters_link_to_their_guide_section(client, data):
    html = client.get("/").content.decode()
    for name, (slug, anchor) in guides.FILTER_GUIDES.items():
        if name in OfferFilterSet.base_filters:
            assert f'href="/guides/{slug}/#{anchor}"' in html, name


@pytest.mark.parametrize("query, field", [
    ("price_per_gpu_hour_max=cheap", "price_per_gpu_hour_max"),
    ("gpu=no-such-gpu", "gpu"),
    ("country=USA", "country"),
    ("spot=maybe", "spot"),
])
def test_a_bad_filter_value_shows_the_form_error_not_a_500(client, data, query, field):
    response = client.get(f"/?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Some filters could not be used" in html
    assert f'href="#id_{field}"' in html
    assert 'aria-invalid="true"' in html
    assert instance_types(response) == []


def test_bad_filter_value_in_an_htmx_request_returns_the_error_fragment(client, data):
    response = client.get("/?gpu_count_min=-1", **HX)
    assert response.status_code == 400
    assert "Some filters could not be used" in response.content.decode()
    assert "<html" not in response.content.decode()


def test_plain_form_submission_redirects_to_the_short_shareable_url(client, data):
    response = client.get("/?gpu_family=H100&price_per_gpu_hour_max=&spot=unknown&region=&mig=yes")
    assert response.status_code == 302
    assert response["Location"] == "/?gpu_family=H100&mig=yes"


def test_a_choice_read_as_another_redirects_to_the_url_naming_it(client, data):
    """`rdma=yes` (a buyer's first guess) is read as `any`, and an earlier release's choice as today's: the page
    answers with the URL that names the choice it shows checked."""
    assert client.get("/?rdma=yes,efa&mig=yes")["Location"] == "/?rdma=any&rdma=efa&mig=yes"
    response = client.get("/?rdma=yes&mig=yes")
    assert response.status_code == 302 and response["Location"] == "/?rdma=any&mig=yes"
    html = client.get(response["Location"]).content.decode()
    assert re.search(r'name="rdma" value="any"[^>]* checked', html)
    assert client.get("/?rdma=gpudirect_tcpxo")["Location"] == "/?rdma=tcpx"


def test_a_catalog_value_typed_in_other_capitals_redirects_to_the_catalogs_spelling_with_its_box_ticked(client, data):
    """`?provider=ACME&gpu_family=h100` (typed from a provider's page) filters as `acme` and `H100`; the page answers
    with the URL naming them as its checkboxes do, so the panel shows them ticked. No match is still a 400."""
    response = client.get("/?provider=ACME&gpu_family=h100")
    assert response.status_code == 302 and response["Location"] == "/?provider=acme&gpu_family=H100"
    answer = client.get(response["Location"])
    html = answer.content.decode()
    assert re.search(r'name="provider" value="acme"[^>]* checked', html)
    assert re.search(r'name="gpu_family" value="H100"[^>]* checked', html)
    assert instance_types(answer) == ["acme.h100x8"]
    assert client.get("/?provider=ACMEX").status_code == 400


def test_a_comma_list_from_an_api_link_shows_its_boxes_ticked(client, data):
    """`?gpu_family=H100,A100` (the API's form, e.g. its "same query" link pasted back) filters the same, and the page
    answers with one key per value, as its own form sends them, so the panel shows the boxes ticked and applying the
    form again keeps the filter."""
    response = client.get("/?gpu_family=H100,A100&price_per_gpu_hour_max=9")
    assert response.status_code == 302
    assert response["Location"] == "/?gpu_family=H100&gpu_family=A100&price_per_gpu_hour_max=9"
    html = client.get(response["Location"]).content.decode()
    for family in ("H100", "A100"):
        assert re.search(rf'name="gpu_family" value="{family}"[^>]* checked', html)
    listed = instance_types(client.get(response["Location"]))
    assert listed and listed == instance_types(
        client.get("/?gpu_family=H100,A100&price_per_gpu_hour_max=9", HTTP_HX_TRIGGER="filters", **HX))


def test_htmx_request_returns_the_results_fragment_and_pushes_the_canonical_url(client, data):
    response = client.get("/?gpu_family=H100&price_per_gpu_hour_max=&mig=yes", HTTP_HX_TRIGGER="filters", **HX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and '<table class="offers">' in html
    assert response["HX-Push-Url"] == "/?gpu_family=H100&mig=yes"
    assert 'id="filters"' not in html  # typing in the panel never replaces it
    assert 'id="lang-next"' in html and 'value="/?gpu_family=H100&amp;mig=yes"' in html


def test_a_results_fragment_does_not_draw_the_filter_panel_it_leaves_out(client, data, monkeypatch):
    """The panel's groups are drawn only where the response shows them (about a third of a page's time)."""
    from web import views

    drawn = []
    monkeypatch.setattr(views, "filter_groups", lambda form: drawn.append(form) or [])
    assert client.get("/?gpu_family=H100&mig=yes", HTTP_HX_TRIGGER="filters", **HX).status_code == 200
    assert drawn == []
    assert client.get("/?ordering=-price_per_gpu_hour", **HX).status_code == 200  # a sort link re-sends the panel
    assert client.get("/?gpu_family=H100").status_code == 200
    assert len(drawn) == 2


def test_htmx_sort_link_also_refreshes_the_panel_out_of_band(client, data):
    response = client.get("/?ordering=-price_per_gpu_hour", **HX)
    html = response.content.decode()
    assert 'id="filters"' in html and 'hx-swap-oob="true"' in html
    assert '<option value="-price_per_gpu_hour" selected>' in html


def test_sorting_by_a_header_link_reverses_the_order(client, data):
    html = client.get("/").content.decode()
    link = re.search(r'aria-sort="ascending"><a href="([^"]+)"', html).group(1)
    assert "ordering=-price_per_gpu_hour" in link
    response = client.get("/" + link.replace("&amp;", "&"))
    assert instance_types(response)[0] == "dear.h100"
    assert 'aria-sort="descending"' in response.content.decode()


def test_sorting_by_provider(client, data):
    assert instance_types(client.get("/?ordering=provider"))[0] in {"acme.l4", "acme.h100x8"}


def test_per_instance_toggle_shows_the_instance_price(client, data):
    html = client.get("/?gpu_family=H100&provider=acme&unit=instance").content.decode()
    assert "$20.00<" in html and "$20.000" not in html  # 8 GPUs at 2.50, an instance price to the cent (#42)
    assert "Price / hour" in html
    assert "Prices in USD per instance-hour." in html


def test_monthly_toggle_shows_730_hours_of_the_price_and_leaves_filters_and_api_per_hour(client, data):
    html = client.get("/?gpu_family=H100&provider=acme&period=month").content.decode()
    assert '<td class="num price">$1,825.00<br>' in html  # 2.50 per GPU-hour x 730
    assert '<td class="num" data-label="Spot">$803.00</td>' in html  # spot 1.10 x 730
    assert "Price / GPU-month" in html and "Price / GPU-hour" not in html
    assert "Costs in USD per GPU for a month of 730 hours at the hourly price." in html
    assert 'name="period" value="month" id="id_period_1" checked' in html
    assert 'href="/api/v1/offers/?gpu_family=H100&amp;provider=acme"' in html  # the API stays per hour
    html = client.get("/?gpu_family=H100&provider=acme&period=month&unit=instance").content.decode()
    assert "$14,600.00" in html and "Price / month" in html  # 8 GPUs x 2.50 x 730
    # Filters stay per hour: a cap of $3 per GPU-hour keeps the $2.50 offer whatever the display.
    assert "acme.h100x8" in client.get("/?period=month&price_per_gpu_hour_max=3&provider=acme").content.decode()
    assert client.get("/?period=hour&provider=acme").status_code == 302  # the default: dropped from the URL
    assert client.get("/?period=year").status_code == 400


def test_currency_without_a_loaded_rate_says_so_instead_of_converting(client, data):
    html = client.get("/").content.decode()
    assert re.search(r'<option value="EUR" disabled>EUR: no exchange rate loaded</option>', html)
    response = client.get("/?currency=EUR")
    assert response.status_code == 400
    html = response.content.decode()
    assert "No EUR exchange rate is loaded yet, so prices are shown in USD." in html
    assert "$0.700" in html  # still USD, never a made-up number


def test_currency_conversion_uses_the_latest_ecb_rates_and_shows_their_date(client, data):
    builders.rates()
    html = client.get("/?currency=EUR&provider=acme").content.decode()
    assert "€0.560" in html  # 0.70 USD / 1.25
    assert "converted from USD at the ECB reference rate of 2026-11-27" in builders.shown(html)
    html = client.get("/?currency=CNY&provider=acme").content.decode()
    assert "¥5.040" in html  # 0.70 / 1.25 * 9
    assert "CNY (ECB rate of 2026-11-27)" in html


def test_a_new_ecb_day_is_used_at_once(client, data):
    """A new day of ECB rates converts the very next page (nothing may keep the day read before)."""
    builders.rates()
    assert "€0.560" in client.get("/?currency=EUR&provider=acme").content.decode()
    ExchangeRate.objects.create(currency="USD", date=date(2026, 11, 30), per_eur=Decimal("1.40"),
                                source_url="https://www.ecb.europa.eu/")
    html = client.get("/?currency=EUR&provider=acme&gpu_family=L4").content.decode()
    assert "€0.500" in html and "2026-11-30" in builders.shown(html)  # 0.70 USD / 1.40


def test_rows_flag_old_prices_by_their_own_date_never_by_the_run_that_read_them(client, data):
    """"old" marks a price dated more than pricing.OLD_AFTER_DAYS ago, under the price (on screen at any width); a
    source with no recent run no longer flags its rows "stale", and an undated price says "undated", not "old"."""
    from datetime import timedelta

    from django.utils import timezone

    from providers import pricing
    from providers.models import Offer

    now = timezone.now()
    Offer.objects.filter(pk=data["acme_h100"].pk).update(
        price_as_of=now - timedelta(days=pricing.OLD_AFTER_DAYS + 1), price_dated_by="source")
    Offer.objects.filter(pk=data["acme_l4"].pk).update(
        price_as_of=now - timedelta(days=pricing.OLD_AFTER_DAYS - 1), price_dated_by="source")
    html = client.get("/?provider=acme").content.decode()
    rows = {name: row for row in html.split("<tr>")[1:] for name in re.findall(r"<code>([^<]+)</code>", row)}
    price_cell = re.search(r'<td class="num price">(.*?)</td>', rows["acme.h100x8"], re.S).group(1)
    assert '<strong class="old"' in price_cell and "as of" in price_cell
    assert 'class="old"' not in rows["acme.l4"]
    html = client.get("/?provider=oldie").content.decode()
    assert "stale" not in html.split("<tbody>")[1]


def test_each_row_carries_its_own_kubernetes_answers_in_one_disclosure(client, data):
    """One compact cell per row (managed node, MIG, fabric), the offer's own answers; every answer with its reason
    and source links inside a <details> that keyboards and screen readers reach, fetched when it is first opened,
    and a link to the offer's page (which lists them all) until then or without JavaScript."""
    html = client.get("/?provider=acme").content.decode()
    rows = {name: row for row in html.split("<tr>")[1:] for name in re.findall(r"<code>([^<]+)</code>", row)}
    big, small = rows["acme.h100x8"], rows["acme.l4"]
    assert '<summary aria-label="managed control plane: yes; MIG: yes; RDMA fabric: yes">' in big
    assert '<span class="b y">IB</span>' in big
    assert "docs.acme.example.com" not in big  # the reasons and sources come on demand
    offer = re.search(r'<a href="(/offers/\d+/)"><code>acme.h100x8</code>', big).group(1)
    assert f'<a href="{offer}#kubernetes">Every answer with its reason and sources</a>' in big
    big_answers = builders.answer_list(client, big)
    assert 'href="https://docs.acme.example.com/mig" rel="noopener">docs.acme.example.com</a>' in big_answers
    small_answers = builders.answer_list(client, small)
    assert "MIG: no</strong> The NVIDIA L4 24GB has no MIG: it has no MIG profiles." in small_answers
    assert "RDMA fabric: offered, but not on this machine</strong>" in small_answers
    assert 'id="kubernetes"' in client.get(offer).content.decode()  # where the link without JavaScript lands
    html = client.get("/?provider=metal&gpu_family=A100").content.decode()
    assert "managed control plane: no" in html
    [row] = [row for row in html.split("<tr>")[1:] if "<code>" in row]
    assert "bring your own cluster: yes" in builders.answer_list(client, row)


def test_the_answer_list_of_an_unknown_profile_is_a_404(client, data):
    assert client.get("/offers/kubernetes/999999/").status_code == 404


def test_availability_is_shown_where_known(client, data):
    html = client.get("/?provider=acme&gpu_family=H100").content.decode()
    assert "Available (3)" in html
    html = client.get("/?provider=dearco").content.decode()
    assert '<span class="u">unknown</span>' in html


def test_download_api_chart_and_digest_links_carry_the_filters_but_not_display_options(client, data):
    html = client.get("/?gpu_family=H100&mig=yes&currency=CNY&unit=instance&page=1").content.decode()
    assert 'href="/api/v1/offers/?format=csv&amp;gpu_family=H100&amp;mig=yes" download' in html
    assert 'href="/charts/?gpu_family=H100&amp;mig=yes"' in html
    assert 'href="/digest/subscribe/?gpu_family=H100&amp;mig=yes"' in html


def test_pagination_keeps_the_filters(client, data, monkeypatch):
    monkeypatch.setattr(offer_rows, "PER_PAGE", 2)
    html = client.get("/?gpu_family=H100").content.decode()
    assert "page 1 of 2" in html
    assert 'href="?gpu_family=H100&amp;page=2"' in html
    assert instance_types(client.get("/?gpu_family=H100&page=2")) == ["acme.h100x8", "dear.h100"]


def test_past_the_exact_count_the_page_says_more_than_and_pages_on_without_a_last_page(client, data, monkeypatch):
    """Counted exactly up to COUNT_EXACT_UP_TO offers or the end of the page asked for: past that the page says "more
    than", names its page without a total, and still links the next page; the last page knows its count again."""
    monkeypatch.setattr(offer_rows, "PER_PAGE", 1)
    monkeypatch.setattr(offer_reads, "COUNT_EXACT_UP_TO", 2)
    html = client.get("/").content.decode()
    assert "More than 2 offers match." in html and "6 offers match." not in html
    assert re.search(r"page 1\s*</span>", html) and "page 1 of" not in html
    assert 'href="?page=2" hx-get' in html
    html = client.get("/?page=4").content.decode()
    assert "More than 4 offers match." in html and 'href="?page=5" hx-get' in html
    last = client.get("/?page=6").content.decode()
    assert "6 offers match." in last and "More than" not in last and "page 6 of 6" in last and 'rel="next"' not in last
    past = client.get("/?page=60")  # past the end: a 404 naming the last page, as the API's 404 does
    assert past.status_code == 404 and "page: 60 is past the last page (6)." in past.content.decode()
    assert client.get("/api/v1/offers/?page=60").status_code == 404
    client.cookies["django_language"] = "zh-hans"
    html = client.get("/zh-hans/").content.decode()
    assert "超过 2 个报价符合条件。" in html and re.search(r"第 1 页\s*</span>", html)


def test_offers_page_runs_the_same_number_of_queries_whatever_the_number_of_rows(client, data):
    def count_queries():
        offer_rows.CELLS.clear()  # the worst case: nothing kept from an earlier request
        offer_reads._ANSWERS.clear()
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/").status_code == 200
        return len(queries)

    few = count_queries()
    for index in range(30):
        prov = builders.provider(f"extra-{index}", caps={"mig": "yes"})
        builders.offer(prov, builders.source(prov), data["h100"], f"x{index}", "3.00")
    from providers.kubernetes_profiles import offer_kubernetes_refresh

    offer_kubernetes_refresh()
    assert count_queries() == few
    assert few <= 12


def test_pages_without_charts_load_no_plotly_and_no_third_party_asset(client, data):
    html = client.get("/").content.decode()
    assert "plotly" not in html
    for url in re.findall(r'<(?:script|link)(?![^>]*rel="alternate")[^>]+(?:src|href)="([^"]+)"', html):
        assert url.startswith("/static/"), url


def test_staleness_is_one_rule_in_sql_and_in_python(client, data):
    """The offer page flags an offer stale by the annotation offer_list adds; the Python twin agrees with it."""
    offer = data["old_h100"]
    annotated = selectors.offer_list().get(pk=offer.pk)
    assert annotated.is_stale is selectors.is_stale(offer.source.last_success_at) is True
    assert selectors.is_stale(None)
    assert not selectors.is_stale(timezone.now() - timedelta(hours=23))
    # Pages no longer call an offer "stale" for its source's runs: its price's own date says how old it is.
    assert "stale" not in client.get(f"/offers/{offer.pk}/").content.decode()


def test_the_csv_download_link_returns_the_same_offers_as_csv(client, data):
    html = client.get("/?gpu_family=H100&offering=managed").content.decode()
    link = re.search(r'href="(/api/v1/offers/\?format=csv[^"]*)" download', html).group(1).replace("&amp;", "&")
    response = client.get(link)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    body = b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()
    for instance in ("acme.h100x8", "dear.h100"):
        assert instance in body
    # old.h100's provider is managed but nothing says the type can be a node: unknown stays out of "managed"
    assert "metal.h100" not in body and "acme.l4" not in body and "old.h100" not in body
    assert "kubernetes.mig.answer" in body.splitlines()[0]


def test_offer_rows_escape_what_providers_send(client):
    """Rows are written in Python (web.offer_rows.RowFormat): every text that comes from a provider is escaped."""
    prov = builders.provider("evil", name='Evil <b>"Cloud"</b>', name_zh="")
    src = builders.source(prov)
    builders.offer(prov, src, None, "<script>alert(1)</script>", "1.5", region='us"&<east>',
                   availability="available", available_count=3)
    html = client.get("/").content.decode()
    assert "<script>alert(1)</script>" not in html and "<b>" not in html
    assert "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>" in html
    assert "Evil &lt;b&gt;&quot;Cloud&quot;&lt;/b&gt;" in html
    assert '<span translate="no">us&quot;&amp;&lt;east&gt;</span> <small>US</small>' in html
    assert 'title="GPU name not in our catalog">Mystery GPU ?</span>' in html
    assert '<span class="av av-available">Available (3)</span>' in html


def test_rows_show_the_price_date_apart_from_when_we_read_it_and_the_home_page_says_what_the_data_is(client, data):
    from datetime import UTC, datetime

    from providers.models import DataSource, Offer

    Offer.objects.filter(pk=data["acme_h100"].pk).update(price_as_of=datetime(2026, 7, 20, tzinfo=UTC))
    DataSource.objects.update(last_success_at=None)  # a replay: no live run confirms the undated rows
    html = client.get("/?provider=acme").content.decode()
    assert "as of 2026-07-20" in builders.shown(html) and ">undated</span>" in html
    assert 'href="/sources/"' in html


def test_a_fractional_offer_says_it_is_a_share_and_spot_advice_is_not_a_price(client, data):
    from decimal import Decimal

    from providers.models import Offer

    Offer.objects.filter(pk=data["acme_h100"].pk).update(
        gpu_fraction=Decimal("0.125"), gpu_count=Decimal("0.125"), spot_price_hour_usd=None,
        spot_price_per_gpu_hour_usd=None, spot_savings_pct=52, spot_interruption=">20%")
    html = client.get("/?provider=acme").content.decode()
    assert 'title="share of one GPU; the per-GPU price is per whole GPU">0.125</abbr>' in html
    assert "−52% spot, interruptions &gt;20%" in html


@pytest.mark.parametrize(("days_ago", "old"), [(30, False), (200, True)])
def test_spot_advice_says_the_day_of_its_data_and_old_past_the_prices_threshold(client, data, days_ago, old):
    """The Advisor's share is dated by its own feed (spot_as_of), which may be far older than the price beside it."""
    from datetime import timedelta

    from django.utils import timezone

    from providers.models import Offer

    day = (timezone.now() - timedelta(days=days_ago)).date()
    Offer.objects.filter(pk=data["acme_h100"].pk).update(
        spot_price_hour_usd=None, spot_price_per_gpu_hour_usd=None, spot_savings_pct=55, spot_interruption="<5%",
        spot_as_of=day)
    cell = re.search(r'<small title="AWS Spot Advisor savings share, not a price">(.*?)</small>',
                     client.get("/?provider=acme").content.decode()).group(1)
    assert f'data of <time datetime="{day.isoformat()}">' in cell
    assert ('title="Spot Advisor data dated more than 180 days ago">old</strong>' in cell) is old
    chinese = client.get("/zh-hans/?provider=acme").content.decode()  # not a price: neither 价格日期 nor 旧价格
    spot = re.search(r'55%[^<]*<br><span class="as-of">(.*?)</span></small>', chinese).group(1)
    assert "数据日期" in spot and "价格" not in spot and ("旧数据" in spot) is old


def test_an_undated_offer_of_a_live_source_is_as_fresh_as_the_run_that_read_it(client, data):
    from django.utils import timezone

    from providers.models import DataSource, Offer

    offer = data["acme_h100"]
    Offer.objects.filter(pk=offer.pk).update(price_as_of=None)
    DataSource.objects.filter(pk=offer.source_id).update(last_success_at=timezone.now())
    html = client.get("/?provider=acme").content.decode()
    assert "(read live)" in html
    assert "(read live)" in client.get(f"/offers/{offer.pk}/").content.decode()


def test_an_undated_file_pinned_at_a_commit_is_not_dated_by_the_run_that_read_it(client, data):
    """A catalog file at a pinned commit (SkyPilot's, when GitHub did not give the commit's date) is as old as its
    commit: read live a minute ago, its rows still say the price date is not stated, and the home page counts it."""
    from django.utils import timezone

    from providers.models import DataSource, Offer

    offer = data["acme_h100"]
    Offer.objects.filter(pk=offer.pk).update(price_as_of=None)
    DataSource.objects.filter(pk=offer.source_id).update(
        last_success_at=timezone.now(), revision="0f4070387edc953d7004cff197940e1918a1d6aa")
    html = client.get("/?provider=acme").content.decode()
    assert "(read live)" not in html and ">undated</span>" in html
    detail = client.get(f"/offers/{offer.pk}/").content.decode()
    assert "(read live)" not in detail and ">undated</span>" in detail
    note = re.search(r'<p class="data-note">(.*?)</p>', client.get("/").content.decode(), re.S).group(1)
    assert "come from copies that state no date" in " ".join(note.split())
    DataSource.objects.filter(pk=offer.source_id).update(revision="")
    note = re.search(r'<p class="data-note">(.*?)</p>', client.get("/").content.decode(), re.S).group(1)
    assert "come from copies that state no date" not in " ".join(note.split())


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_legend_explains_every_symbol_the_kubernetes_cells_use(client, data, language):
    """The legend under the filters names each state glyph a row's cell can show (web.badges.STATE_GLYPHS), and
    none the cells never use (the provider matrix's half circle once stood there for "not on this machine")."""
    from web.badges import STATE_GLYPHS

    html = client.get("/", HTTP_ACCEPT_LANGUAGE=language, follow=True).content.decode()
    legend = re.search(r'<details class="legend"><summary><small>(.*?)</small></summary>', html, re.S).group(1)
    assert all(glyph in legend for glyph in STATE_GLYPHS.values())
    assert "◐" not in legend


def test_offer_rows_show_the_catalogs_gpu_qualifiers_in_the_pages_language(client, data):
    """A catalog GPU whose form factor is not stated: the row says so in Chinese on Chinese pages, as the GPU pages
    and the filter panel's choices do."""
    from providers.models import GpuModel

    gpu = GpuModel.objects.filter(offers__is_active=True).first()
    GpuModel.objects.filter(pk=gpu.pk).update(name=f"{gpu.name} (form factor not stated)")
    english = client.get("/", HTTP_ACCEPT_LANGUAGE="en", follow=True).content.decode()
    chinese = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert f"{gpu.name} (form factor not stated)</a>" in english
    assert f"{gpu.name} （未注明规格）</a>" in chinese or f"{gpu.name}（未注明规格）</a>" in chinese
    assert "(form factor not stated)</a>" not in chinese


def test_an_offer_whose_machine_states_its_form_factor_never_says_not_stated(client, data):
    """A p4d's A100 is SXM by the machine's sourced facts (Offer.form_factor); the catalog's GPU row does not say.
    The row and the offer page name the machine's form factor instead of "not stated" beside it."""
    from providers.models import GpuModel, Offer

    offer = Offer.objects.filter(is_active=True, gpu__isnull=False).first()
    GpuModel.objects.filter(pk=offer.gpu_id).update(name=f"{offer.gpu.name} (form factor not stated)")
    Offer.objects.filter(gpu_id=offer.gpu_id).update(form_factor="sxm")
    english = client.get("/", HTTP_ACCEPT_LANGUAGE="en", follow=True).content.decode()
    assert f"{offer.gpu.name} SXM</a>" in english and "(form factor not stated)</a>" not in english
    page = client.get(f"/offers/{offer.pk}/", follow=True).content.decode()
    assert f"{offer.gpu.name} SXM</a>" in page and "form factor not stated" not in page
    # Without a stated form factor the catalog's qualifier stays.
    Offer.objects.filter(gpu_id=offer.gpu_id).update(form_factor="")
    assert "(form factor not stated)</a>" in client.get("/", HTTP_ACCEPT_LANGUAGE="en", follow=True).content.decode()


def test_the_filter_panel_names_providers_in_the_pages_language(client, data):
    from providers.models import Provider

    provider = Provider.objects.filter(offers__is_active=True).first()
    Provider.objects.filter(pk=provider.pk).update(name_zh="测试云")
    chinese = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    english = client.get("/", HTTP_ACCEPT_LANGUAGE="en", follow=True).content.decode()
    label = re.compile(rf'name="provider" value="{provider.slug}"[^>]*>\s*([^<]+)</label>')
    assert label.search(chinese).group(1).strip() == "测试云"
    assert label.search(english).group(1).strip() == provider.name


@pytest.mark.parametrize(("language", "undated_note"), [
    ("en", "1 of 6 offers come from copies that state no date for their prices."),
    ("zh-hans", "6 条报价中有 1 条来自未注明价格日期的副本。"),
])
def test_the_data_note_says_how_many_offers_state_no_price_date(client, data, language, undated_note):
    """The home page's line on what the data is does not claim every row is dated: it counts the ones that are not
    (the SkyPilot catalog copies in the bundled snapshot), and says nothing of them once all are dated."""
    from datetime import UTC, datetime

    from providers.models import DataSource, Offer

    Offer.objects.filter(is_active=True).update(price_as_of=datetime(2026, 8, 3, tzinfo=UTC))
    Offer.objects.filter(pk=data["acme_h100"].pk).update(price_as_of=None)
    # a replayed copy (never read live), as the bundled snapshot's are; an undated live answer is "read live"
    DataSource.objects.filter(pk=data["acme_h100"].source_id).update(last_success_at=None)
    note = re.search(r'<p class="data-note">(.*?)</p>', client.get("/", HTTP_ACCEPT_LANGUAGE=language, follow=True)
                     .content.decode(), re.S).group(1)
    assert undated_note in " ".join(note.split())
    Offer.objects.filter(pk=data["acme_h100"].pk).update(price_as_of=datetime(2026, 8, 3, tzinfo=UTC))
    note = re.search(r'<p class="data-note">(.*?)</p>', client.get("/", HTTP_ACCEPT_LANGUAGE=language, follow=True)
                     .content.decode(), re.S).group(1)
    assert undated_note not in " ".join(note.split())


@pytest.mark.parametrize("language, words", [
    ("en", ("K8s:", "IB InfiniBand", "EFA (×n", "TCPX", "~ inferred", "“old”: dated more than", "³ marks",
            "“Region per a catalog”")),
    ("zh-hans", ("K8s：", "IB 即 InfiniBand", "~ 表示", "“旧价格”", "³ 表示", "“区域来自目录”")),
])
def test_the_legend_explains_every_mark_a_row_can_show(client, language, words):
    """#42 item 4: every symbol and word a row uses is in the legend under the results: the answer glyphs (its
    summary line), the badges and fabric abbreviations, "~", "old", "undated", ³ and the catalog-region mark."""
    builders.catalog()
    client.cookies["django_language"] = language
    html = client.get("/", follow=True).content.decode()
    legend = builders.shown(html[html.index('<details class="legend">'):html.index("</details>", html.index(
        '<details class="legend">'))])
    assert [word for word in words if word not in legend] == []


def test_sorting_by_a_commitment_price_shows_it_under_the_on_demand_price_per_gpu_or_per_instance(client, data):
    from decimal import Decimal

    from providers.models import Offer

    # acme.h100x8: 8 GPUs; 1-year 16.00 per instance-hour (2.00 per GPU), 3-year 8.00 (1.00 per GPU)
    Offer.objects.filter(pk=data["acme_h100"].pk).update(
        commit_1y_price_hour_usd=Decimal("16"), commit_1y_price_per_gpu_hour_usd=Decimal("2"),
        commit_3y_price_hour_usd=Decimal("8"), commit_3y_price_per_gpu_hour_usd=Decimal("1"))
    response = client.get("/?commitment=1y&ordering=commit_1y_price_per_gpu_hour")
    assert instance_types(response) == [data["acme_h100"].instance_type]
    html = response.content.decode()
    assert "1-yr commitment $2.000 · 3-yr commitment $1.000" in html
    per_instance = client.get("/?commitment=3y&unit=instance").content.decode()
    assert "1-yr commitment $16.00 · 3-yr commitment $8.00" in per_instance
    assert html.count('class="commitment"') == 1  # no line for offers without one
    assert 'class="commitment"' not in client.get("/?provider=metal").content.decode()  # no commitment line


@pytest.mark.parametrize(("query", "message"), [
    ("page=abc", "page: abc is not a page number (a whole number from 1)."),
    ("page=0", "page: 0 is not a page number"),
    ("page=-1", "page: -1 is not a page number"),
    ("gpu_count_min=8&gpu_count_min=1", "gpu_count_min: given more than once; this parameter takes one value."),
    ("currency=EUR&currency=CNY", "currency: given more than once"),
])
def test_a_bad_page_or_a_single_value_parameter_given_twice_is_a_400_naming_it(client, data, query, message):
    """The page refuses what the API refuses, rather than showing page 1 or keeping the last value silently."""
    response = client.get(f"/?{query}")
    html = response.content.decode()
    assert response.status_code == 400 and message in html
    assert "Correct the highlighted filters; no offers are listed until then." in html
    # several values of a filter that takes several stay one query
    assert client.get("/?gpu_family=H100&gpu_family=A100").status_code == 200


def test_an_empty_result_for_a_provider_in_a_place_says_where_we_hold_its_prices(client, data):
    """Azure's prices here come from a catalog of US regions only: asked for West Europe, the page must not read as
    "Azure sells nothing there" but say where we hold its prices, in both languages."""
    response = client.get("/?provider=acme&continent=EU")
    html = response.content.decode()
    assert response.status_code == 200 and "acme.h100x8" not in html
    assert "Where we hold Acme Cloud prices: US (2 offers)." in " ".join(html.split())
    assert "does not mean the provider does not sell there" in html
    # an empty result without a place filter, or with results, says nothing of the kind
    assert "Where we hold" not in client.get("/?provider=acme&gpu_family=A100").content.decode()
    assert "Where we hold" not in client.get("/?provider=acme&continent=NA").content.decode()
    client.cookies["django_language"] = "zh-hans"
    html = " ".join(client.get("/zh-hans/?provider=acme&continent=EU").content.decode().split())
    assert "我们掌握 阿克米云 价格的地点： US (2 个报价)。此处没有列出的地点" in html  # Chinese punctuation


def test_an_offer_replayed_from_a_recording_is_not_shown_as_seen_a_minute_ago(client, data):
    """The bundled snapshot replays recordings: its rows were loaded, not seen live, and say so (the page and the
    offer's own page), while a live source's rows keep their "ago"."""
    replay = builders.provider("replayco", "Replay Co")
    src = builders.source(replay)
    src.last_success_at = None
    src.save(update_fields=["last_success_at"])
    item = builders.offer(replay, src, data["h100"], "replay.h100", "0.50", seen_hours=0)
    html = client.get("/?provider=replayco").content.decode()
    cell = re.search(r'data-label="Last seen"><span class="fresh" title="([^"]*)">([^<]*)</span>', html)
    assert cell.group(2) == "from a recording" and cell.group(1).startswith("Loaded from a recorded copy")
    live = client.get("/?provider=acme").content.decode()
    assert "from a recording" not in live and " ago</span>" in live
    detail = client.get(f"/offers/{item.id}/").content.decode()
    assert "not when the provider last listed it" in detail
    client.cookies["django_language"] = "zh-hans"
    assert "来自录制副本" in client.get("/zh-hans/?provider=replayco").content.decode()


def test_a_region_named_as_its_continent_is_not_written_twice(client, data):
    """CoreWeave prices by "Europe" and "North America": the row says Europe once, and a region id still gets its
    continent beside it."""
    euro = builders.provider("euroco", "Euro Co")
    src = builders.source(euro)
    builders.offer(euro, src, data["h100"], "euro.h100", "3.00", region="Europe").__class__.objects.filter(
        instance_type="euro.h100").update(country="", continent="EU")
    builders.offer(euro, src, data["h100"], "euro2.h100", "3.10", region="eu-west-9").__class__.objects.filter(
        instance_type="euro2.h100").update(country="", continent="EU")
    html = " ".join(client.get("/?provider=euroco").content.decode().split())
    assert '<span translate="no">Europe</span> <small>Europe</small>' not in html
    assert '<span translate="no">Europe</span>' in html
    assert '<span translate="no">eu-west-9</span> <small>Europe</small>' in html
    from providers.models import Offer

    for instance_type, continent_shown in (("euro.h100", False), ("euro2.h100", True)):  # the offer's own page
        offer_html = client.get(f"/offers/{Offer.objects.get(instance_type=instance_type).id}/").content.decode()
        assert ("(Europe)</dd>" in offer_html) is continent_shown
