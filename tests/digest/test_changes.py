"""The weekly change computation against the real test database, with history written at chosen moments."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from digest.selectors import digest_build, week_changes
from providers.models import CapabilityChange
from tests.digest.conftest import END, START, WEEK

pytestmark = pytest.mark.django_db
MID = START + timedelta(days=3)


@pytest.fixture
def history(world):
    w = world
    offers = {
        "drop": w.change(w.offer("drop", price="2.00"), at=MID, price="1.80"),  # -10%
        "rise": w.change(w.offer("rise", price="1.00", gpu="a100-80gb"), at=MID, price="1.06"),  # +6%
        "small": w.change(w.offer("small", price="1.00"), at=MID, price="0.96"),  # -4%: below the threshold
        "exact": w.change(w.offer("exact", price="1.00"), at=MID, price="1.05"),  # exactly +5%
        "there_and_back": w.change(w.change(w.offer("back", price="1.00"), at=MID, price="0.50"),
                                   at=MID + timedelta(days=1), price="1.00"),
        "spot": w.change(w.offer("spot", price="4.00", spot="2.00"), at=MID, spot="1.50"),  # spot -25%
        "scarce": w.change(w.offer("scarce", availability="available"), at=MID, availability="unavailable"),
        "at_start": w.change(w.offer("at-start", price="3.00"), at=START, price="2.00"),  # on the boundary: in
        "at_end": w.change(w.offer("at-end", price="3.00"), at=END, price="2.00"),  # on the next boundary: out
        "new": w.offer("new", price="0.90", at=MID),
        "old": w.offer("old", price="5.00"),
    }
    offers["gone"] = w.vanish(w.offer("gone"), last_listed=START - timedelta(hours=2), removed_by_run_at=MID)
    offers["gone_before"] = w.vanish(w.offer("gone-before"), last_listed=START - timedelta(days=3),
                                     removed_by_run_at=START - timedelta(days=2))
    return offers


def test_price_changes_beyond_the_threshold_are_reported_with_old_and_new(history):
    changes = week_changes(week=WEEK)
    moves = {offer_id: [(m.kind, m.old, m.new) for m in ms] for offer_id, ms in changes.prices.items()}
    assert moves == {
        history["drop"].id: [("on_demand", Decimal("2.00"), Decimal("1.80"))],
        history["rise"].id: [("on_demand", Decimal("1.00"), Decimal("1.06"))],
        history["exact"].id: [("on_demand", Decimal("1.00"), Decimal("1.05"))],
        history["spot"].id: [("spot", Decimal("2.00"), Decimal("1.50"))],
        history["at_start"].id: [("on_demand", Decimal("3.00"), Decimal("2.00"))],
    }


def test_availability_new_and_gone_offers(history):
    changes = week_changes(week=WEEK)
    assert changes.availability == {history["scarce"].id: ("available", "unavailable")}
    assert changes.new == {history["new"].id}
    assert changes.gone == {history["gone"].id}


def test_the_threshold_is_a_setting(history, settings):
    settings.DIGEST_PRICE_CHANGE_THRESHOLD = Decimal("0.03")
    assert history["small"].id in week_changes(week=WEEK).prices


def test_capability_changes_keep_their_source_and_collapse_within_the_week(world):
    def change(old, new, at):
        CapabilityChange.objects.create(provider=world.provider, key="scale_to_zero", old_value=old, new_value=new,
                                        new_label="Node pools scale to zero", origin="curated", changed_at=at,
                                        source_url="https://docs.example.org/autoscaling")

    change("no", "unknown", START + timedelta(hours=1))
    change("unknown", "yes", MID)
    change("yes", "no", END + timedelta(minutes=1))  # next week
    (only,) = week_changes(week=WEEK).capabilities
    assert (only.old_value, only.new_value, only.source_url) == ("no", "yes", "https://docs.example.org/autoscaling")


def test_a_filter_sees_only_its_offers_and_its_providers_capability_changes(history, world):
    from tests.factories import DataSourceFactory

    other = DataSourceFactory(slug="other-api", provider__slug="other-cloud", provider__name="Other Cloud")
    CapabilityChange.objects.create(provider=world.provider, key="mig", old_value="no", new_value="yes",
                                    origin="curated", changed_at=MID, source_url="https://docs.example.org/mig")
    CapabilityChange.objects.create(provider=other.provider, key="mig", old_value="no", new_value="yes",
                                    origin="curated", changed_at=MID, source_url="https://other.example.org/mig")
    world.offer("other-a100", gpu="a100-80gb", source=other)
    changes = week_changes(week=WEEK)

    h100 = digest_build(query="gpu=h100", changes=changes)
    # biggest drop first: -33%, -25% (spot), -10%
    assert [row.offer.instance_type for row in h100.price_drops.rows] == ["at-start", "spot", "drop"]
    assert h100.price_rises.total == 1 and h100.price_rises.rows[0].offer.instance_type == "exact"
    assert [offer.instance_type for offer in h100.new_offers.rows] == ["new"]
    assert [offer.instance_type for offer in h100.gone_offers.rows] == ["gone"]
    assert [row.offer.instance_type for row in h100.availability.rows] == ["scarce"]
    assert [row.change.provider.slug for row in h100.capabilities.rows] == ["lambda"]
    assert [offer.instance_type for offer in h100.cheapest[:3]] == ["new", "small", "back"]

    a100 = digest_build(query="gpu=a100-80gb&provider=other-cloud", changes=changes)
    assert not a100.price_rises.total and not a100.price_drops.total
    assert [row.change.source_url for row in a100.capabilities.rows] == ["https://other.example.org/mig"]
    assert a100.has_changes


def test_a_quiet_filter_has_no_changes_but_still_its_cheapest_offers(history):
    digest = digest_build(query="gpu=b200", changes=week_changes(week=WEEK))
    assert not digest.has_changes and digest.cheapest == []


def test_sections_are_capped_and_count_the_rest(history, settings):
    settings.DIGEST_MAX_ROWS_PER_SECTION = 1
    digest = digest_build(query="gpu=h100", changes=week_changes(week=WEEK))
    assert len(digest.price_drops.rows) == 1 and digest.price_drops.total == 3 and digest.price_drops.more == 2


def _queries(func) -> int:
    with CaptureQueriesContext(connection) as captured:
        func()
    return len(captured)


def test_query_counts_do_not_grow_with_offers_or_changes(world):
    def build():
        changes = week_changes(week=WEEK)
        digest_build(query="gpu=h100&mig=yes,unknown", changes=changes)

    for index in range(3):
        world.change(world.offer(f"few-{index}", price="2.00"), at=MID, price="1.00")
    few = _queries(build)
    for index in range(40):
        world.change(world.offer(f"many-{index}", price="2.00"), at=MID, price="1.00", availability="limited")
        world.offer(f"fresh-{index}", at=MID)
    assert _queries(build) == few


def test_back_in_stock_and_sold_out_come_from_the_stock_checks_net_over_the_week(world):
    from digest.emails import digest_render
    from providers.models import AvailabilityChange

    def states(offer, *moments):
        for at, state in moments:
            AvailabilityChange.objects.create(offer=offer, changed_at=at, availability=state)
        return offer

    before = START - timedelta(days=2)
    back = states(world.offer("back-in"), (before, "unavailable"), (MID, "limited"))
    sold = states(world.offer("sold-out"), (before, "available"), (MID, "unavailable"))
    states(world.offer("first-known"), (MID, "unavailable"))  # no state at the start: not news
    states(world.offer("flicker"), (before, "unavailable"), (MID, "available"), (MID + timedelta(hours=1),
                                                                               "unavailable"))
    recorded = world.offer("recorded")
    states(recorded, (before, "available"))
    AvailabilityChange.objects.create(offer=recorded, changed_at=MID, availability="unavailable", recorded=True)
    states(world.offer("later"), (before, "available"), (END, "unavailable"))  # the next week's news

    changes = week_changes(week=WEEK)
    assert changes.back_in_stock == {back.id: MID} and changes.sold_out == {sold.id: MID}
    digest = digest_build(query="gpu=h100", changes=changes)
    assert [row.offer.id for row in digest.back_in_stock.rows] == [back.id]
    assert [row.offer.id for row in digest.sold_out.rows] == [sold.id] and digest.has_changes
    assert not digest_build(query="gpu=b200", changes=changes).back_in_stock.total
    for language, words in (("en", ("BACK IN STOCK (1)", "SOLD OUT (1)", "Back in stock (1)")),
                            ("zh-hans", ("【重新有货】（1）", "【已售罄】（1）", "重新有货（1）"))):
        rendered = digest_render(digest, language=language)
        assert words[0] in rendered.text and words[1] in rendered.text and words[2] in rendered.html
        # One date format per language: ISO in English, Django's zh_Hans long form in Chinese.
        since = f"{MID:%Y-%m-%d %H:%M}" if language == "en" else f"{MID.year}年{MID.month}月{MID.day}日 {MID:%H:%M}"
        assert f"{since} UTC" in rendered.text
    html = digest_render(digest, language="en").html
    back_row, sold_row = html.index(f"in stock since {MID:%Y-%m-%d %H:%M} UTC"), html.index(
        f"sold out since {MID:%Y-%m-%d %H:%M} UTC")
    assert html.index("Back in stock (1)") < back_row < html.index("Sold out (1)") < sold_row
    assert html.count("since ") == 2 and html.index("back-in") < back_row and html.index("sold-out") > back_row


def test_node_software_changes_of_the_week_reach_filters_with_that_providers_offers(world):
    """EKS's AL2023 default moved 570 -> 580 for Kubernetes 1.34+ on 2025-10-21 (amazon-eks-ami 3cb8b058): the
    digest of a week holding that day lists it for a filter with AWS offers, not for one with Lambda's only."""
    from datetime import UTC, datetime

    from digest.weeks import digest_week
    from tests.factories import DataSourceFactory

    week = digest_week(datetime(2025, 10, 27, 9, 0, tzinfo=UTC))  # 2025-10-20 08:00 to 2025-10-27 08:00 UTC
    aws = DataSourceFactory(slug="aws-pricing", provider__slug="aws", provider__name="Amazon Web Services")
    world.offer("p5.48xlarge", source=aws)
    world.offer("gpu_1x_h100")
    changes = week_changes(week=week)
    on_aws = digest_build(query="provider=aws", changes=changes)
    texts = [row.change.text for row in on_aws.node_software.rows]
    assert any("Amazon Linux 2023" in text and "570 -> 580 (Kubernetes 1.34+)" in text for text in texts)
    assert all(row.change.provider == "aws" for row in on_aws.node_software.rows)
    assert not any("1.33" in text and "Amazon Linux" in text for text in texts)  # 2025-10-27: the next week
    assert on_aws.has_changes
    assert digest_build(query="provider=lambda", changes=changes).node_software.total == 0
