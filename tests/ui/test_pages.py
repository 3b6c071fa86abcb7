"""Provider, compare, GPU, charts, offer, guide and source pages: what they show, their errors, and that none
runs a query per row."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from providers.models import KubernetesFact, LinkCheck
from tests.ui import builders
from web import guides

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return builders.catalog()


def queries_for(client, url) -> int:
    from providers import offer_reads
    from web import offer_rows

    offer_rows.CELLS.clear()  # the worst case: nothing kept from an earlier request
    offer_reads._ANSWERS.clear()
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def add_offers(data, count):
    for index in range(count):
        builders.offer(data["acme"], data["acme_h100"].source, data["h100"], f"more-{index}", f"{3 + index}.00")


def test_provider_page_explains_managed_kubernetes_and_lists_capabilities_with_sources(client, data):
    html = client.get("/providers/acme/").content.decode()
    assert "<strong>Managed.</strong> Acme Cloud runs the Kubernetes control plane" in html
    assert "(Acme Kubernetes)" in html
    assert 'href="https://docs.acme.example.com/mig"' in html
    assert "2026-11-01" in html
    assert 'href="/guides/gpu-sharing/#mig"' in html
    assert "acme.h100x8" in html


def test_provider_page_explains_bring_your_own_and_unknown(client, data):
    assert "<strong>Bring your own cluster.</strong>" in client.get("/providers/metal/").content.decode()
    builders.provider("mystery")
    assert "<strong>Unknown.</strong>" in client.get("/providers/mystery/").content.decode()


def test_provider_page_shows_api_facts_source_health_and_broken_links(client, data):
    source = data["acme_h100"].source
    KubernetesFact.objects.create(provider=data["acme"], source=source, name="Kubernetes versions",
                                  value=["1.31", "1.32"], source_url="https://api.acme.example.com/k8s",
                                  fetched_at=source.last_success_at)
    LinkCheck.objects.create(url="https://docs.acme.example.com/mig", ok=False, status_code=404,
                             checked_at=source.last_success_at, failing_since=source.last_success_at)
    html = client.get("/providers/acme/").content.decode()
    assert "Kubernetes versions" in html and "1.31, 1.32" in html
    assert "Acme Cloud API" in html
    assert "Broken source links:" in html and "404" in html


def test_provider_page_query_count_does_not_grow_with_offers(client, data):
    few = queries_for(client, "/providers/acme/")
    add_offers(data, 20)
    assert queries_for(client, "/providers/acme/") == few


def test_provider_index_matrix_links_columns_to_guides(client, data):
    html = client.get("/providers/").content.decode()
    assert 'href="/guides/before-you-commit/#interconnect"' in html
    assert "Acme Cloud" in html


def test_compare_puts_providers_side_by_side_and_highlights_differences(client, data):
    response = client.get("/compare/?provider=acme&provider=metal")
    assert response.status_code == 200
    html = response.content.decode()
    offering_row = re.search(r'<tr class="differs"><th scope="row"><a href="/guides/kubernetes-support/'
                             r'#managed-vs-byo"[^>]*>Kubernetes offering</a> <span class="differs-mark">differs', html)
    assert offering_row
    # cheapest H100 per provider, the cheaper one highlighted
    h100_row = html.split('href="/gpus/h100-sxm/"')[1].split("</tr>")[0]
    assert "$1.900" in h100_row and "$2.500" in h100_row
    assert h100_row.index("best") < h100_row.index("$1.900")


def test_compare_accepts_comma_lists_and_shows_the_same_answers_unhighlighted(client, data):
    html = client.get("/compare/?provider=acme,dearco").content.decode()
    mig_row = html.split(">MIG</a>")[0].rsplit("<tr", 1)[1]
    assert "differs" not in mig_row


def test_compare_with_one_provider_chosen_asks_for_one_more(client, data):
    """The provider page's "compare with other providers" link chooses that provider: the picker shows it chosen."""
    response = client.get("/compare/?provider=acme")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Choose at least one more provider below, then Compare." in html
    assert re.search(r'<input[^>]*value="acme"[^>]*checked', html)
    assert 'id="compare-capabilities"' not in html


@pytest.mark.parametrize("query", ["provider=acme,dearco,metal,oldie,nope", "provider=a,b,c,d,e", "provider=nope"])
def test_compare_refuses_fewer_than_two_or_more_than_four(client, data, query):
    # One known provider alone is not an error: it is chosen and the page asks for one more (test_never_blank).
    response = client.get(f"/compare/?{query}")
    assert response.status_code == 400
    assert 'role="alert"' in response.content.decode()


def test_compare_query_count_does_not_grow_with_offers(client, data):
    few = queries_for(client, "/compare/?provider=acme&provider=metal")
    add_offers(data, 20)
    assert queries_for(client, "/compare/?provider=acme&provider=metal") == few


def test_gpu_page_shows_memory_mig_profiles_spread_and_offers(client, data):
    response = client.get("/gpus/h100-sxm/")
    html = response.content.decode()
    assert "80 GB HBM3" in html
    assert "<code>1g.10gb</code>" in html and "mig-user-guide" in html
    assert "metal.h100" in html and "dear.h100" in html
    assert 'data-figure="fig-spread"' in html and 'data-figure="fig-history"' in html
    assert "/static/vendor/plotly-box-3.1.1.min.js" in html  # loaded by charts.js when a chart comes into view
    spread = html.split('<table class="spread">')[1].split("</table>")[0]
    assert spread.index("Metal Rentals") < spread.index("Dear Co")  # cheapest provider first


def test_gpu_page_says_when_a_gpu_has_no_mig(client, data):
    assert "This GPU does not support MIG." in client.get("/gpus/l4/").content.decode()


def test_gpu_index_lists_models_with_counts_and_cheapest(client, data):
    html = client.get("/gpus/").content.decode()
    row = html.split('href="/gpus/h100-sxm/"')[1].split("</tr>")[0]
    assert "$1.900" in row


def test_gpu_page_query_count_does_not_grow_with_offers(client, data):
    few = queries_for(client, "/gpus/h100-sxm/")
    add_offers(data, 20)
    assert queries_for(client, "/gpus/h100-sxm/") == few


def test_charts_page_uses_the_same_filters_and_embeds_a_figure_with_a_table(client, data):
    html = client.get("/charts/?gpu_family=H100").content.decode()
    assert 'data-figure="fig-distribution"' in html
    assert '<script type="application/json" id="fig-distribution">' in html
    assert "NVIDIA L4" not in html.split('<table class="spread">')[1]
    assert "4 priced offers" in html


def test_charts_page_preloads_plotly_beyond_phone_width_and_says_when_boxes_are_summaries(client, data, monkeypatch):
    html = client.get("/charts/").content.decode()
    head = html.split("</head>")[0]
    assert re.search(r'<link rel="preload" as="script" href="/static/vendor/plotly-box-3\.1\.1\.min\.js" '
                     r'media="\(min-width: 761px\)">', head)
    assert "drawn as its box and whiskers" not in html  # every box small enough to show each offer
    from web import charts

    monkeypatch.setattr(charts, "MAX_POINTS_PER_BOX", 2)  # H100 has four offers: drawn from its summary
    html = client.get("/charts/").content.decode()
    assert "A GPU model with more than 2 offers is drawn as its box and whiskers" in html
    assert '"q1":[' in html
    html = client.get("/charts/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    assert "报价超过 2 个的 GPU 型号只画箱线图" in html


def test_charts_page_with_a_bad_filter_shows_the_error(client, data):
    response = client.get("/charts/?price_per_gpu_hour_max=x")
    assert response.status_code == 400
    assert "Some filters could not be used" in response.content.decode()


def test_offer_page_shows_history_chart_and_table(client, data):
    html = client.get(f"/offers/{data['acme_h100'].pk}/").content.decode()
    assert 'data-figure="fig-offer-history"' in html
    assert "$2.500" in html and "$1.100" in html
    assert "Available (3)" in html


def test_an_offer_listed_with_no_price_at_all_draws_no_empty_chart(client, data):
    """Its history rows say "—"; a chart with no point was an empty frame."""
    from providers.models import Offer, PriceObservation

    offer = data["acme_h100"]
    PriceObservation.objects.filter(offer=offer).update(price_hour_usd=None, spot_price_hour_usd=None)
    Offer.objects.filter(pk=offer.pk).update(price_hour_usd=None, spot_price_hour_usd=None,
                                             price_per_gpu_hour_usd=None, spot_price_per_gpu_hour_usd=None)
    html = client.get(f"/offers/{offer.pk}/").content.decode()
    assert 'data-figure="fig-offer-history"' not in html and "<td class=\"num\">—</td>" in html


def test_guides_exist_in_both_languages_with_every_linked_anchor(client):
    for slug in guides.GUIDES:
        for language in ("en", "zh-hans"):
            template = guides.guide_template(slug, language)
            assert template == f"guides/{language}/{slug}.html"
    anchors = {(slug, anchor) for slug, anchor in [*guides.CAPABILITY_GUIDES.values(), *guides.FILTER_GUIDES.values()]}
    for slug, anchor in anchors:
        for language in ("en", "zh-hans"):
            client.cookies["django_language"] = language
            html = client.get(f"/guides/{slug}/", follow=True).content.decode()
            assert f'id="{anchor}"' in html, (slug, anchor, language)


def test_guides_link_to_primary_documentation(client):
    html = "".join(client.get(f"/guides/{slug}/").content.decode() for slug in guides.GUIDES)
    for url in ("docs.nvidia.com/datacenter/tesla/mig-user-guide", "gpu-operator", "k8s-device-plugin",
                "kueue.sigs.k8s.io", "volcano.sh"):
        assert url in html


def test_unknown_guide_is_404(client):
    assert client.get("/guides/nope/").status_code == 404


def test_sources_page_renders(client, data):
    assert "Acme Cloud API" in client.get("/sources/").content.decode()


def test_every_page_serves_assets_from_the_site_only(client, data):
    urls = ["/", "/charts/", "/gpus/", "/gpus/h100-sxm/", "/providers/", "/providers/acme/",
            "/compare/?provider=acme&provider=metal", f"/offers/{data['acme_h100'].pk}/", "/guides/",
            "/guides/gpu-sharing/", "/sources/"]
    for url in urls:
        html = client.get(url).content.decode()
        for asset in re.findall(r'<(?:script|link)(?![^>]*rel="alternate")[^>]+(?:src|href)="([^"]+)"', html):
            assert asset.startswith("/static/"), (url, asset)


def test_chinese_pages_show_our_chinese_label_and_detail_and_english_pages_the_english(client, data):
    from providers.models import Capability

    Capability.objects.filter(provider=data["acme"], key="mig").update(
        label="Dynamic MIG", label_zh="动态 MIG", detail="Label the node for MIG.", detail_zh="为节点打 MIG 标签。")
    Capability.objects.filter(provider=data["acme"], key="offering").update(detail="Acme runs the control plane.")
    english = client.get("/providers/acme/", follow=True).content.decode()
    assert "Dynamic MIG" in english and "Label the node for MIG." in english and "动态 MIG" not in english
    client.cookies["django_language"] = "zh-hans"
    for url in ("/providers/acme/", "/compare/?provider=acme&provider=dearco"):
        chinese = builders.shown(client.get(url, follow=True).content.decode())
        assert "动态 MIG" in chinese and "Dynamic MIG" not in chinese, url
    html = client.get("/providers/acme/", follow=True).content.decode()
    chinese = builders.shown(html)
    assert "为节点打 MIG 标签。" in chinese and "Label the node for MIG." not in chinese
    # No translation stored: the English, not nothing, marked as English for screen readers and the crawl.
    assert '<span lang="en">Acme runs the control plane.</span>' in html


def _checked(data, states, *, minutes_ago):
    """Record one stock check of the acme source `minutes_ago` minutes ago: instance type -> (state, count)."""
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    from providers import availability_sync
    from scrapers.availability import ScrapedAvailability

    with transaction.atomic():
        availability_sync.availability_apply(
            source=data["acme_h100"].source, now=timezone.now() - timedelta(minutes=minutes_ago),
            states=[ScrapedAvailability(key, "us-east-1", *value) for key, value in states.items()])


def test_offer_page_says_available_now_with_the_check_age_and_draws_stock_over_time(client, data):
    _checked(data, {"acme.h100x8": ("unavailable", None)}, minutes_ago=60)
    _checked(data, {"acme.h100x8": ("available", 3)}, minutes_ago=12)
    html = client.get(f"/offers/{data['acme_h100'].pk}/").content.decode()
    assert "available now (3) (checked 12\xa0minutes ago)" in html
    assert 'data-figure="fig-offer-stock"' in html and "Stock over time" in html
    assert "50% of checks over 7 days, 50% over 30 days" in html
    assert "longest stock-out in 30 days: 48 min" in html


def test_offer_page_says_sold_out_since_and_unknown_stays_unknown(client, data):
    _checked(data, {"acme.l4": ("unavailable", None)}, minutes_ago=30)
    html = client.get(f"/offers/{data['acme_l4'].pk}/").content.decode()
    assert "sold out since" in html and "(checked 30\xa0minutes ago)" in html
    never = client.get(f"/offers/{data['dear_h100'].pk}/").content.decode()
    assert "Unknown" in never and "not checked in the last 30 days" in never and "fig-offer-stock" not in never


def test_gpu_and_provider_pages_show_in_stock_shares_per_provider_and_gpu(client, data):
    _checked(data, {"acme.h100x8": ("available", 3)}, minutes_ago=40)
    _checked(data, {"acme.h100x8": ("unavailable", None)}, minutes_ago=20)
    for url in ("/gpus/h100-sxm/", "/providers/acme/"):
        html = client.get(url).content.decode()
        table = html.split('id="stock-title"')[1].split("</table>")[0]
        assert "Acme Cloud" in table and "50%" in table and "20 min" in table, url


def test_offers_table_cell_gives_the_check_age_and_7_day_share(client, data):
    _checked(data, {"acme.h100x8": ("available", 3)}, minutes_ago=12)
    html = client.get("/").content.decode()
    assert '<span class="av av-available">Available (3)</span> <small class="av-when">' in html
    assert "checked 12\xa0minutes ago · 100% in stock over 7 days</small>" in html


def test_sources_page_shows_data_dates_refused_rows_corrections_and_unknown_gpu_names(client, data):
    from datetime import UTC, datetime

    from django.utils import timezone

    from providers.models import Offer, ScrapeRun

    source = data["acme_h100"].source
    Offer.objects.filter(source=source).update(price_as_of=datetime(2026, 8, 3, tzinfo=UTC))
    ScrapeRun.objects.create(source=source, started_at=timezone.now(), status="succeeded", skipped=2, corrected=1,
                             unknown_gpus={"Z9": 4}, rejections=["row 7: GPU count '0'", "x: spot equals on-demand"])
    html = client.get("/sources/").content.decode()
    assert "2026-08-03" in html
    assert "2 rows refused, 1 corrected, 1 unknown GPU name" in html
    assert "<code>Z9</code> (4)" in html and "row 7: GPU count &#x27;0&#x27;" in html


def test_offer_gpu_and_compare_pages_show_the_offers_own_kubernetes_answers(client, data):
    """The same per-offer answers as the offers table: the offer page opens them, GPU and compare pages list them."""
    html = client.get(f"/offers/{data['acme_h100'].pk}/").content.decode()
    assert '<details class="k8s full" open>' in html
    assert "acme.h100x8 can be a node of Acme Cloud&#x27;s managed Kubernetes." in html
    html = client.get(f"/offers/{data['acme_l4'].pk}/").content.decode()
    assert "The NVIDIA L4 24GB has no MIG: it has no MIG profiles." in html
    gpu_page = client.get("/gpus/h100-sxm/").content.decode()
    metal = next(row for row in gpu_page.split("<tr>") if "metal.h100" in row)
    assert "managed control plane: no" in metal and "bring your own cluster: yes" in builders.answer_list(client, metal)
    compare = client.get("/compare/?provider=acme&provider=metal").content.decode()
    assert 'aria-label="managed control plane: yes; MIG: yes; RDMA fabric: yes"' in compare
    assert "aria-label=\"managed control plane: no; MIG: unknown; RDMA fabric: unknown\"" in compare


def test_compare_answers_open_to_their_detail_and_source(client, data):
    from providers.models import Capability

    Capability.objects.filter(provider=data["acme"], key="mig").update(detail="Seven instances per H100.")
    html = client.get("/compare/?provider=acme&provider=metal").content.decode()
    table = html.split('id="compare-capabilities"')[1].split("</table>")[0]
    cell = next(c for c in table.split('<details class="cell">')[1:] if "Seven instances per H100." in c)
    assert "<strong>MIG</strong> · Acme Cloud" in cell and 'href="https://docs.acme.example.com/mig"' in cell
    answers = [td.split("</td>")[0] for td in table.split("</thead>")[1].split("<td>")[1:]]
    assert answers and not [td for td in answers if 'title="' in td]  # nothing only in a tooltip


def test_the_offer_page_shows_the_listed_price_in_the_sites_one_money_format(client, data):
    """The per-instance price as listed read "21.60000 USD": the site's money format for an instance price, to the
    cent (#42: prices to cents, per-GPU-hour prices to three decimals)."""
    import re

    from providers.presentation import money

    offer = data["acme_h100"]
    html = client.get(f"/offers/{offer.pk}/").content.decode()
    listed = re.search(r"as listed: ([\d.,]+) USD", html).group(1)
    assert offer.price_hour is not None and listed == money(offer.price_hour, total=True)
    assert len(listed.split(".")[1]) == 2


def test_offer_page_sets_commitment_prices_beside_on_demand_with_saving_date_and_file(client, data):
    from datetime import date
    from decimal import Decimal

    from providers.models import Offer

    gcp = builders.provider("gcp", "Google Cloud", kind="hyperscaler", caps={"offering": "managed"})
    offer = builders.offer(gcp, data["acme_h100"].source, data["h100"], "a3-highgpu-8g", "11.00", count=8,
                           commit_1y_price_per_gpu_hour_usd=Decimal("7.70"),
                           commit_1y_price_hour_usd=Decimal("61.60"), commitment_as_of=date(2026, 7, 30),
                           commitment_source_url="https://github.com/o/r/blob/c/pricing.yml")
    html = client.get(f"/offers/{offer.pk}/").content.decode()
    one_year = html[html.index("<dt>1-year commitment</dt>"):html.index("<dt>3-year commitment</dt>")]
    assert "$7.700" in one_year and "30% below on-demand" in one_year  # 7.70 against 11.00 per GPU-hour
    assert "committed use discount" in one_year and 'datetime="2026-07-30"' in one_year
    assert 'href="https://github.com/o/r/blob/c/pricing.yml"' in one_year
    three_years = html[html.index("<dt>3-year commitment</dt>"):]
    assert "no source we read states one for this machine" in three_years.split("</dd>")[0]
    zh = client.get(f"/offers/{offer.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True).content.decode()
    note = re.sub(r"<[^>]+>", "", zh[zh.index("<dt>1 年承诺</dt>"):]).split("\n")[0]
    assert "；" in note and "; " not in note, note  # a Chinese note joins its parts with the full-width semicolon
    other = Offer.objects.get(pk=data["acme_h100"].pk)
    html = client.get(f"/offers/{other.pk}/").content.decode()
    assert html.count("no source we read states one for this machine") == 2


def test_sources_page_counts_commitment_prices_per_big_cloud_and_says_why_aws_and_azure_have_none(client, data):
    from decimal import Decimal

    gcp = builders.provider("gcp", "Google Cloud", kind="hyperscaler", caps={"offering": "managed"})
    builders.provider("aws", "Amazon Web Services", kind="hyperscaler", caps={"offering": "managed"})
    builders.offer(gcp, data["acme_h100"].source, data["h100"], "a3-highgpu-8g", "11.00",
                   commit_3y_price_hour_usd=Decimal("5"), commit_3y_price_per_gpu_hour_usd=Decimal("5"))
    builders.offer(gcp, data["acme_h100"].source, data["h100"], "a3-highgpu-4g", "11.00")
    html = client.get("/sources/").content.decode()
    section = html[html.index('id="commitments"'):html.index('id="research-log"')]
    assert "0 of 2 live offers have a 1-year price, 1 a 3-year price" in section
    assert "Amazon Web Services</strong>: none: a live run of the AWS Price List reads the standard" in section
