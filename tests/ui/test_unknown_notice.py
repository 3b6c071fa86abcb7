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


def row_count(text: str) -> int:
    return int(re.search(r"(\d+) offers? match", text).group(1))


def test_rdma_any_says_how_many_offers_it_hid_for_an_unknown_fabric_and_links_to_them(client, data):
    text = html.unescape(client.get("/?rdma=any", follow=True).content.decode())
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
    text = html.unescape(client.get("/?rdma=any", follow=True).content.decode())
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', text, re.S).group(1)
    assert "条报价已隐藏" in notice and "是否具备您所要求的节点间网络" in notice and "显示它们" in notice


def test_a_memory_minimum_says_how_many_offers_state_no_memory_per_gpu_in_both_languages(client, data):
    from providers.models import Offer

    builders.offer(data["byo"], data["metal_h100"].source, None, "metal.accelerator", "1.00")  # no GPU, no memory
    unstated = Offer.objects.filter(is_active=True, gpu_memory_gb__isnull=True).count()
    assert unstated > 0
    text = html.unescape(client.get("/?gpu_memory_min=16", follow=True).content.decode())
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', text, re.S).group(1)
    assert re.search(rf"\b{unstated} offers? from", notice)
    assert "hidden because whether they have the memory per GPU you asked for is unknown" in notice
    client.cookies["django_language"] = "zh-hans"
    zh = html.unescape(client.get("/?gpu_memory_min=16", follow=True).content.decode())
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', zh, re.S).group(1)
    assert "单卡显存是否达到您的要求" in notice and "显示它们" in notice


def test_a_price_ceiling_says_how_many_offers_have_no_published_price_in_both_languages(client, data):
    from providers.models import Offer

    on_request = builders.offer(data["byo"], data["metal_h100"].source, data["metal_h100"].gpu, "metal.b300x8",
                                "1.00", count=8)
    Offer.objects.filter(pk=on_request.pk).update(price_hour=None, price_hour_usd=None, price_per_gpu_hour_usd=None)
    unpriced = Offer.objects.filter(is_active=True, price_per_gpu_hour_usd__isnull=True).count()
    text = html.unescape(client.get("/?price_per_gpu_hour_max=1000", follow=True).content.decode())
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', text, re.S).group(1)
    assert re.search(rf"\b{unpriced} offers? from", notice)
    assert "cost no more than your price per GPU-hour (no price is published) is unknown" in notice
    shown = html.unescape(client.get("/?price_per_gpu_hour_max=1000&unknown=include", follow=True).content.decode())
    assert "metal.b300x8" in shown and "metal.b300x8" not in text
    client.cookies["django_language"] = "zh-hans"
    zh = html.unescape(client.get("/?price_hour_max=1000", follow=True).content.decode())
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', zh, re.S).group(1)
    assert "每实例小时价格是否在您的上限之内（未公布价格）" in notice and "显示它们" in notice


def test_in_stock_now_says_how_many_offers_no_stock_check_has_reported_in_both_languages(client, data):
    from providers.models import Offer

    builders.offer(data["byo"], data["metal_h100"].source, data["metal_h100"].gpu, "metal.h100x1-checked", "1.00",
                   availability="unavailable")
    never_checked = Offer.objects.filter(is_active=True, availability="unknown").count()
    assert never_checked > 0
    text = html.unescape(client.get("/?available=false", follow=True).content.decode())
    assert "metal.h100x1-checked" in text  # sold out at its last check
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', text, re.S).group(1)
    assert re.search(rf"\b{never_checked} offers? from", notice)
    assert "are in stock as you asked (no stock check has reported them) is unknown" in notice
    client.cookies["django_language"] = "zh-hans"
    zh = html.unescape(client.get("/?available=true", follow=True).content.decode())
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', zh, re.S).group(1)
    assert "库存状态是否符合您的要求（尚无库存检查结果）" in notice and "显示它们" in notice


def test_past_the_count_limit_the_notice_says_more_than_and_names_the_providers_counted(client, data, monkeypatch):
    from providers import coverage

    exact = html.unescape(client.get("/?rdma=any", follow=True).content.decode())
    hidden = int(re.search(r"(\d+) offers? from", exact).group(1))
    assert hidden >= 2
    monkeypatch.setattr(coverage, "COUNT_EXACT_UP_TO", hidden - 1)
    capped = html.unescape(client.get("/?rdma=any&price_per_gpu_hour_max=1000", follow=True).content.decode())
    notice = re.search(r'<p class="notice unknown-notice"[^>]*>(.*?)</p>', capped, re.S).group(1)
    assert f"More than {hidden - 1:,} offers, among them from " in notice
    assert "unknown=include" in notice
