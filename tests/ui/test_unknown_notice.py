"""The "hidden because unknown" notice (web/unknown_notice.py, templates/_unknown_notice.html) on the offers page:
it counts exactly the offers `unknown=include` brings back, names their providers and the question, in both
languages, and says nothing when no offer was left out for an unknown answer."""

import html
import re

import pytest

from tests.ui import builders

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return builders.catalog()


def notice_in(text: str) -> str:
    """The "hidden because unknown" notice's text on a page."""
    return re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', text, re.S).group(1)


def page(client, query: str) -> str:
    return html.unescape(client.get(f"/?{query}", follow=True).content.decode())


def row_count(text: str) -> int:
    return int(re.search(r"(\d+) offers? match", text).group(1))


def test_rdma_any_says_how_many_offers_it_hid_for_an_unknown_fabric_and_links_to_them(client, data):
    text = page(client, "rdma=any")
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', text, re.S)
    assert notice, "no notice"
    hidden = int(re.search(r"(\d+) offers? from", notice.group(1)).group(1))
    assert hidden > 0
    assert "hidden because whether they have the fabric between nodes you asked for is unknown" in notice.group(1)
    link = re.search(r'href="([^"]*unknown=include[^"]*)"', notice.group(1)).group(1)
    shown = html.unescape(client.get(link, follow=True).content.decode())
    assert row_count(shown) == row_count(text) + hidden
    assert 'class="notice unknown-notice"' not in shown  # nothing is hidden for an unknown answer any more


def test_no_notice_when_no_filter_can_be_unknown(client, data):
    assert 'unknown-notice' not in client.get("/?gpu_family=H100", follow=True).content.decode()


def test_the_notice_in_chinese(client, data):
    client.cookies["django_language"] = "zh-hans"
    text = page(client, "rdma=any")
    notice = notice_in(text)
    assert "条报价已隐藏" in notice and "是否具备您所要求的节点间网络" in notice and "显示它们" in notice


def no_memory(data):
    builders.offer(data["byo"], data["metal_h100"].source, None, "metal.accelerator", "1.00")  # no GPU, no memory
    return "metal.accelerator"


def no_price(data):
    from providers.models import Offer

    on_request = builders.offer(data["byo"], data["metal_h100"].source, data["metal_h100"].gpu, "metal.b300x8",
                                "1.00", count=8)
    Offer.objects.filter(pk=on_request.pk).update(price_hour=None, price_hour_usd=None, price_per_gpu_hour_usd=None)
    return "metal.b300x8"


def spot_savings_only(data):
    from providers.models import Offer

    # as AWS's offers: the Spot Instance Advisor states the savings, not the spot price
    savings = builders.offer(data["byo"], data["metal_h100"].source, data["metal_h100"].gpu, "metal.h100x8-spot",
                             "8.00", count=8)
    Offer.objects.filter(pk=savings.pk).update(spot_savings_pct=67)
    return "metal.h100x8-spot"


def undated(data):
    from django.utils import timezone

    from providers.models import DataSource, Offer

    # every other offer's price dated today; this one's source is a file pinned at a commit that states no date
    Offer.objects.update(price_as_of=timezone.now())
    source = DataSource.objects.create(slug="pinned-file", name="Pinned file", kind="catalog",
                                       provider=data["metal_h100"].provider, url="https://example.com/catalog.csv",
                                       revision="0f4070387edc953d7004cff197940e1918a1d6aa")
    pinned = builders.offer(data["byo"], source, data["metal_h100"].gpu, "metal.h100x2-pinned", "2.00", count=2)
    Offer.objects.filter(pk=pinned.pk).update(price_as_of=None)
    return "metal.h100x2-pinned"


def never_checked(data):
    # every builder offer is never checked; this one was found sold out, so available=false lists it
    builders.offer(data["byo"], data["metal_h100"].source, data["metal_h100"].gpu, "metal.h100x1-checked", "1.00",
                   availability="unavailable")
    return None


@pytest.mark.parametrize(("setup", "unknown", "query", "phrase", "zh_query", "zh_phrase"), [
    (no_memory, {"gpu_memory_gb__isnull": True}, "gpu_memory_min=16",
     "have the memory per GPU you asked for", "gpu_memory_min=16", "单卡显存是否达到您的要求"),
    (no_price, {"price_per_gpu_hour_usd__isnull": True}, "price_per_gpu_hour_max=1000",
     "cost no more than your price per GPU-hour (no on-demand price is published)", "price_hour_max=1000",
     "每实例小时价格是否在您的上限之内（未公布按需价格）"),
    (spot_savings_only, {"spot_price_hour__isnull": True, "spot_savings_pct__isnull": False}, "spot=true",
     "have a spot price (spot is sold, but only its savings are published)", "spot=true",
     "是否有抢占式价格（提供抢占式实例，但只公布节省比例）"),
    (undated, {"price_as_of__isnull": True}, "seen_within_hours=24",
     "have a price dated within the hours you asked for (the source states no date)", "seen_within_hours=8760",
     "价格日期是否在您要求的小时数内（来源未注明日期）"),
    (never_checked, {"availability": "unknown"}, "available=false",
     "are in stock as you asked (no stock check has reported them)", "available=true",
     "库存状态是否符合您的要求（尚无库存检查结果）"),
])
def test_a_filter_on_an_offer_column_says_how_many_offers_leave_it_unstated_in_both_languages(
        client, data, setup, unknown, query, phrase, zh_query, zh_phrase):
    from providers.models import Offer

    hidden_offer = setup(data)
    unstated = Offer.objects.filter(is_active=True, **unknown).count()
    assert unstated > 0
    text = page(client, query)
    notice = notice_in(text)
    assert re.search(rf"\b{unstated} offers? from", notice)
    assert f"hidden because whether they {phrase} is unknown" in notice
    shown = page(client, f"{query}&unknown=include")
    assert row_count(shown) == row_count(text) + unstated
    if hidden_offer:
        assert hidden_offer in shown and hidden_offer not in text
    else:
        assert "metal.h100x1-checked" in text  # sold out at its last check: a known "no", listed
    client.cookies["django_language"] = "zh-hans"
    notice = notice_in(page(client, zh_query))
    assert zh_phrase in notice and "显示它们" in notice


def test_past_the_count_limit_the_notice_says_more_than_and_names_the_providers_counted(client, data, monkeypatch):
    from providers import coverage

    exact = page(client, "rdma=any")
    hidden = int(re.search(r"(\d+) offers? from", exact).group(1))
    assert hidden >= 2
    monkeypatch.setattr(coverage, "COUNT_EXACT_UP_TO", hidden - 1)
    capped = page(client, "rdma=any&price_per_gpu_hour_max=1000")
    notice = notice_in(capped)
    assert f"More than {hidden - 1:,} offers, among them from " in notice
    assert "unknown=include" in notice
