"""The rendered digest: escaping of provider-supplied strings, language, and each subscriber's own links."""

from datetime import timedelta

import pytest

from digest.emails import digest_message, digest_render
from digest.selectors import digest_build, week_changes
from digest.tokens import manage_token_read, unsubscribe_token_read
from providers.models import CapabilityChange
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
    ann, bo = subscriber("ann@example.org", query="gpu=h100"), subscriber("bo@example.org", query="gpu=h100")
    for person in (ann, bo):
        message = digest_message(rendered, subscription=person, week_key=WEEK.key)
        html = message.alternatives[0][0]
        assert rendered.manage_placeholder not in html + message.body
        assert "http://127.0.0.1:8000/?gpu=h100" in message.body and 'href="http://127.0.0.1:8000/?gpu=h100"' in html
        manage = message.body.split("/digest/manage/")[1].split("/")[0]
        unsubscribe = message.extra_headers["List-Unsubscribe"].split("/digest/unsubscribe/")[1].split("/")[0]
        assert manage_token_read(manage) == person.key and unsubscribe_token_read(unsubscribe) == person.key


def test_digest_rows_carry_the_offers_own_kubernetes_answers(world):
    """The same per-offer answers as the site: a Lambda on-demand instance is no managed-Kubernetes node."""
    from providers.curated import InstanceFactRecord
    from providers.services import instance_facts_sync
    from tests.api.conftest import capabilities

    capabilities(world.provider, offering="managed", mig="yes")
    world.change(world.offer("gpu_1x_h100", price="2.00"), at=MID, price="1.00")
    instance_facts_sync(provider_slug="lambda", origin="curated", facts=[InstanceFactRecord(
        "gpu_*", "managed_node", "no", source_url="https://docs.lambdalabs.com/private-cloud/managed-kubernetes",
        verified_on=START.date(), confidence="documented")])
    rendered = digest_render(digest_build(query="", changes=week_changes(week=WEEK)), language="en")
    summary = "managed control plane: offered, but not on this machine · MIG: offered, but not on this machine"
    assert summary in rendered.text and summary in rendered.html
