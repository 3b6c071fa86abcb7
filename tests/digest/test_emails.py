"""The rendered digest: escaping of provider-supplied strings, language, and each subscriber's own links."""

from datetime import date, timedelta

import pytest

from digest.emails import confirmation_message, digest_message, digest_render
from digest.selectors import digest_build, week_changes
from digest.tokens import manage_token_read, unsubscribe_token_read
from providers.models import CapabilityChange, Offer
from tests.digest.conftest import START, WEEK, subscriber

pytestmark = pytest.mark.django_db
MID = START + timedelta(days=3)
SCRIPT = '<script>alert("x")</script>'
IMG = '"><img src=x onerror=alert(1)>'


def test_provider_supplied_strings_are_escaped_in_the_html_email(world):
    world.provider.name = f"Evil {SCRIPT}"
    world.provider.save()
    world.change(world.offer(f"box{IMG}", gpu=None, price="2.00"), at=MID, price="1.00")
    CapabilityChange.objects.create(provider=world.provider, key="mig", old_value="no", new_value="yes",
                                    new_label=f"MIG {SCRIPT}", origin="provider_api", changed_at=MID,
                                    source_url="javascript:alert(1)")
    digest = digest_build(query="", changes=week_changes(week=WEEK))
    html = digest_render(digest, language="en").html
    assert SCRIPT not in html and IMG not in html and "<img" not in html
    assert "Evil &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "javascript:" not in html and "no source given" in html


def test_the_chinese_digest_uses_chinese_texts_and_provider_names(world):
    world.provider.name_zh = "拉姆达云"
    world.provider.save()
    world.change(world.offer("h100", price="2.00"), at=MID, price="1.00")
    rendered = digest_render(digest_build(query="gpu=h100", changes=week_changes(week=WEEK)), language="zh-hans")
    assert rendered.subject.startswith("GPU 周报") and "1 项变化" in rendered.subject
    assert "降价" in rendered.html and "拉姆达云" in rendered.html and "退订" in rendered.text
    assert "-50.0%" in rendered.text


def test_each_message_carries_its_subscribers_own_signed_links_and_the_filter_link(world):
    world.change(world.offer("h100", price="2.00"), at=MID, price="1.00")
    rendered = digest_render(digest_build(query="gpu=h100", changes=week_changes(week=WEEK)), language="en")
    assert rendered.subject == "GPU digest: 1 change in the week to 2026-11-23"
    ann, bo = subscriber("ann@example.org", query="gpu=h100"), subscriber("bo@example.org", query="gpu=h100")
    for person in (ann, bo):
        message = digest_message(rendered, subscription=person, week_key=WEEK.key)
        html = message.alternatives[0][0]
        assert rendered.manage_placeholder not in html + message.body
        assert "http://127.0.0.1:8000/?gpu=h100" in message.body and 'href="http://127.0.0.1:8000/?gpu=h100"' in html
        manage = message.body.split("/digest/manage/")[1].split("/")[0]
        unsubscribe = message.extra_headers["List-Unsubscribe"].split("/digest/unsubscribe/")[1].split("/")[0]
        assert manage_token_read(manage) == person.key and unsubscribe_token_read(unsubscribe) == person.key


def answers(offer, language: str) -> str:
    """The offer's Kubernetes answers as its email line ends with them (digest_format.kubernetes_summary)."""
    from django.utils import translation

    from digest.templatetags.digest_format import kubernetes_summary

    offer.refresh_from_db()
    with translation.override(language):
        return kubernetes_summary(offer)


def test_answers_stock_states_and_questions_are_in_the_sites_words_in_both_languages(world):
    scarce_offer = world.offer("scarce", availability="available")
    world.change(scarce_offer, at=MID, availability="unavailable")
    CapabilityChange.objects.create(provider=world.provider, key="offering", old_value="byo", new_value="managed",
                                    origin="curated", changed_at=MID, source_url="https://docs.example.org/k8s")
    CapabilityChange.objects.create(provider=world.provider, key="scale_to_zero", old_value="", new_value="yes",
                                    origin="curated", changed_at=MID, source_url="https://docs.example.org/zero")
    digest = digest_build(query="gpu=h100", changes=week_changes(week=WEEK))

    en = digest_render(digest, language="en")
    lines = en.text.splitlines()
    assert "- Lambda · Kubernetes offering: bring your own cluster -> managed control plane" in lines
    assert "- Lambda · Scale to zero: — -> yes" in lines
    # Each offer's line ends with its own Kubernetes answers, in the email's language.
    scarce = "Lambda · NVIDIA H100 80GB (form factor not stated) x1 · scarce · us-east-1"
    assert f"- {scarce} · {answers(scarce_offer, 'en')}: Available -> Unavailable" in lines
    assert "bring your own cluster → <strong>managed control plane</strong>" in en.html
    assert "Available → <strong>Unavailable</strong>" in en.html
    assert "byo" not in en.text + en.html and ">managed<" not in en.html

    zh = digest_render(digest, language="zh-hans")
    lines = zh.text.splitlines()
    assert "- Lambda · Kubernetes 服务形态：自带集群 -> 托管控制平面" in lines
    assert "- Lambda · 缩容到零：— -> 是" in lines
    scarce_zh = "Lambda · NVIDIA H100 80GB （未注明规格） x1 · scarce · us-east-1"  # the qualifier in Chinese
    assert f"- {scarce_zh} · {answers(scarce_offer, 'zh-hans')}：可用 -> 不可用" in lines
    assert "可用 → <strong>不可用</strong>" in zh.html and "Kubernetes 服务形态" in zh.html


def test_the_plain_text_reads_naturally_in_each_language(world):
    world.provider.name_zh = "拉姆达云"
    world.provider.save()
    h100 = world.offer("h100", price="2.00", spot="1.00")
    world.change(h100, at=MID, price="1.00", spot="0.50")
    Offer.objects.filter(pk=h100.pk).update(price_as_of=date(2026, 11, 20), price_dated_by="inferred")
    CapabilityChange.objects.create(provider=world.provider, key="mig", old_value="no", new_value="yes",
                                    new_label="MIG on H100 pools", origin="curated", changed_at=MID, source_url="")
    digest = digest_build(query="gpu=h100&spot=true", changes=week_changes(week=WEEK))

    en = digest_render(digest, language="en")
    assert en.text.splitlines()[:5] == [
        "Your weekly GPU digest", "2026-11-16 08:00 – 2026-11-23 08:00 UTC", "",
        "Your filter: GPU model: NVIDIA H100 80GB (form factor not stated); Spot price available: yes",
        "See these offers on the site: http://127.0.0.1:8000/?gpu=h100&spot=true",
    ]
    line = f"Lambda · NVIDIA H100 80GB (form factor not stated) x1 · h100 · us-east-1 · {answers(h100, 'en')}"
    assert f"\n\nPRICE DROPS (2)\n- {line}: 2.000 -> 1.000 USD / GPU-hour (-50.0%)\n" \
           f"- {line} (spot): 1.000 -> 0.500 USD / GPU-hour (-50.0%)\n\n" in en.text
    assert "\n\nKUBERNETES CAPABILITY CHANGES (1)\n- Lambda · MIG: no -> yes (MIG on H100 pools)\n" \
           "  source: none given\n\nCHEAPEST OFFERS FOR YOUR FILTER NOW\n" in en.text
    assert en.subject == "GPU digest: 3 changes in the week to 2026-11-23"
    # The cheapest offers say the day their price holds (~: inferred from the source's content), as the site does.
    assert f"- {line}: 1.000 USD / GPU-hour (price as of ~2026-11-20)\n" in en.text
    assert "price as of ~2026-11-20</span>" in en.html
    assert "Price drops (2)</h2>" in en.html and '<html lang="en">' in en.html

    zh = digest_render(digest, language="zh-hans")
    assert zh.text.splitlines()[:5] == [
        "您的 GPU 每周摘要", "2026年11月16日 08:00 至 2026年11月23日 08:00（UTC）", "",
        "您的筛选条件：GPU 型号：NVIDIA H100 80GB （未注明规格）；有抢占式价格：是",
        "在网站上查看这些报价：http://127.0.0.1:8000/zh-hans/?gpu=h100&spot=true",  # the Chinese page
    ]
    offer = f"拉姆达云 · NVIDIA H100 80GB （未注明规格） x1 · h100 · us-east-1 · {answers(h100, 'zh-hans')}"
    assert f"\n\n【降价】（2）\n- {offer}：2.000 -> 1.000 USD / GPU·小时（-50.0%）\n" \
           f"- {offer}（竞价实例）：1.000 -> 0.500 USD / GPU·小时（-50.0%）\n\n" in zh.text
    # the heading keeps its own capitals: Chinese headings are not upper-cased like English ones
    assert "\n\n【Kubernetes 能力变化】（1）\n- 拉姆达云 · MIG：否 -> 是（MIG on H100 pools）\n" \
           "  来源：未提供\n\n【当前最便宜的报价】\n" in zh.text
    assert zh.subject == "GPU 周报：截至 2026年11月23日 的一周有 3 项变化"
    assert "美元 / GPU·小时 (价格日期 ~2026年11月20日)\n" in zh.text
    assert "降价（2）</h2>" in zh.html and '<html lang="zh-Hans">' in zh.html and "拉姆达云</a>" in zh.html


def test_the_confirmation_email_in_both_languages():
    en = confirmation_message(email="ann@example.org", language="en", confirm_url="https://example.org/c/1",
                              filter_query="", already_subscribed=False)
    assert en.subject == "Confirm your weekly GPU digest"
    assert "Confirm: https://example.org/c/1\n\nSaved filter: all offers\n" in en.body
    assert "already receives" not in en.body and "The link works for 3 days." in en.body
    zh = confirmation_message(email="ann@example.org", language="zh-hans", confirm_url="https://example.org/c/1",
                              filter_query="mig=yes&spot=true", already_subscribed=True)
    assert zh.subject == "请确认订阅 GPU 每周摘要"
    assert "确认订阅：https://example.org/c/1\n\n此地址已在接收摘要。" in zh.body
    assert "保存的筛选条件：MIG：是；" in zh.body and "链接在 3 天内有效。" in zh.body
    html = zh.alternatives[0][0]
    assert '<html lang="zh-Hans">' in html and ">确认订阅</a>" in html
    assert "<strong>保存的筛选条件：</strong>MIG：是；" in html


def test_digest_rows_carry_the_offers_own_kubernetes_answers(world):
    """The same per-offer answers as the site: a Lambda on-demand instance is no managed-Kubernetes node."""
    from providers.facts_sync import instance_facts_sync
    from providers.kubernetes import Fact
    from tests.api.conftest import capabilities

    capabilities(world.provider, offering="managed", mig="yes")
    world.change(world.offer("gpu_1x_h100", price="2.00"), at=MID, price="1.00")
    instance_facts_sync(provider_slug="lambda", origin="curated", facts=[Fact(
        "gpu_*", "managed_node", "no", source_url="https://docs.lambdalabs.com/private-cloud/managed-kubernetes",
        verified_on=START.date(), confidence="documented")])
    rendered = digest_render(digest_build(query="", changes=week_changes(week=WEEK)), language="en")
    summary = "managed control plane: offered, but not on this machine · MIG: offered, but not on this machine"
    assert summary in rendered.text and summary in rendered.html
