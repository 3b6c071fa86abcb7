"""The AWS catalog source: Karpenter's price tables and instance-type reference, the Vantage-derived regional table
and the Spot Advisor feed, replayed from their recordings; broken copies are refused, never half-read."""

from datetime import UTC, date, datetime
from decimal import Decimal

import httpx
import pytest

from scrapers import aws_catalog, registry
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client
from tests.scrapers.replay import answer

ROUTES = aws_catalog.AwsCatalogClient.recorded()


def client(overrides=None) -> aws_catalog.AwsCatalogClient:
    transport = httpx.MockTransport(lambda request: answer(ROUTES, overrides or {}, str(request.url)))
    return aws_catalog.AwsCatalogClient(build_client(transport=transport))


def text(body: str) -> httpx.Response:
    return httpx.Response(200, text=body)


def recorded_text(file) -> str:
    return ROUTES[file.raw_url].read_text()


@pytest.fixture(scope="module")
def offers():
    result = registry.make_client("aws-catalog", offline=True).fetch()
    return {(o.instance_type, o.region): o for o in result.offers}


def test_p5_in_us_east_1_is_karpenters_price_with_its_gpu_facts_efa_and_spot_advice(offers):
    p5 = offers[("p5.48xlarge", "us-east-1")]
    assert p5.price_hour == Decimal("55.04") and p5.currency == "USD"
    assert (p5.gpu_name, p5.gpu_count, p5.gpu_memory_gb) == ("h100", 8, Decimal("80.0"))
    assert p5.efa_interfaces == 32
    assert p5.price_as_of == datetime(2026, 7, 20, 13, 44, 30, tzinfo=UTC)
    assert "karpenter-provider-aws/blob/1d927085" in p5.price_source_url
    # The Spot Advisor states a savings share and an interruption bucket of its own date, not a price.
    assert (p5.spot_savings_pct, p5.spot_interruption, p5.spot_as_of) == (52, ">20%", date(2025, 6, 28))
    assert p5.spot_price_hour is None


def test_other_regions_come_from_the_vantage_table_with_its_own_date(offers):
    p5 = offers[("p5.48xlarge", "eu-west-2")] if ("p5.48xlarge", "eu-west-2") in offers else next(
        o for (t, r), o in offers.items() if t == "p5.48xlarge" and r != "us-east-1" and not r.startswith("us-gov"))
    assert p5.price_as_of == datetime(2026, 1, 21, tzinfo=UTC)
    assert "tsaol/aws-gpu" in p5.price_source_url
    assert p5.gpu_count == 8 and p5.efa_interfaces == 32


def test_china_is_priced_in_cny_and_govcloud_from_its_own_table(offers):
    china = [o for (t, r), o in offers.items() if r == "cn-north-1"]
    assert china and {o.currency for o in china} == {"CNY"}
    assert {o.price_as_of.date() for o in china} == {date(2024, 11, 6)}
    assert any(r == "us-gov-west-1" for _, r in offers)


def test_fractional_l4_carries_its_share_as_count_and_fraction(offers):
    g6f = offers[("g6f.large", "us-east-1")]
    assert g6f.gpu_fraction == Decimal("0.125") and g6f.gpu_count == Decimal("0.125")
    assert offers[("gr6f.4xlarge", "us-east-1")].gpu_fraction == Decimal("0.5")


def test_every_offer_is_a_gpu_type_with_its_count_from_karpenters_reference(offers):
    facts = aws_catalog.parse_instance_types(recorded_text(aws_catalog.INSTANCE_TYPES))
    for (instance_type, _), offer in offers.items():
        fact = facts[instance_type]
        assert offer.gpu_count == (fact.gpu_count or offer.gpu_fraction)
    assert not any(t.startswith(("inf", "trn", "dl")) for t, _ in offers)


def test_a_truncated_instance_type_reference_is_refused():
    head = recorded_text(aws_catalog.INSTANCE_TYPES)[:5000]  # only CPU families at the start
    with pytest.raises(SchemaScrapeError, match="no instance type"):
        client({aws_catalog.INSTANCE_TYPES.raw_url: text(head)}).fetch()


def test_renamed_gpu_labels_are_refused():
    body = recorded_text(aws_catalog.INSTANCE_TYPES).replace("instance-gpu-count", "instance-gpus")
    with pytest.raises(SchemaScrapeError, match="GPU labels incomplete"):
        client({aws_catalog.INSTANCE_TYPES.raw_url: text(body)}).fetch()


def test_a_price_table_without_its_generated_date_is_refused():
    file = aws_catalog.PRICE_FILES[0][0]
    body = recorded_text(file).replace("generated at", "made on")
    with pytest.raises(SchemaScrapeError, match="generated at"):
        client({file.raw_url: text(body)}).fetch()


def test_a_truncated_vantage_table_is_refused():
    body = recorded_text(aws_catalog.VANTAGE)[:20000]
    with pytest.raises(SchemaScrapeError, match="all_gpu_instances.js"):
        client({aws_catalog.VANTAGE.raw_url: text(body)}).fetch()


def test_a_spot_advisor_feed_with_renamed_fields_is_refused():
    with pytest.raises(SchemaScrapeError, match="spot_advisor"):
        client({aws_catalog.SPOT_ADVISOR.raw_url: {"advisor": {}, "ranges": []}}).fetch()


def test_a_zero_price_is_refused_with_its_reason():
    file = aws_catalog.PRICE_FILES[0][0]
    body = recorded_text(file).replace('"p5.48xlarge": 55.040000', '"p5.48xlarge": 0.000000')
    result = client({file.raw_url: text(body)}).fetch()
    assert any("p5.48xlarge in us-east-1" in reason for reason in result.rejected)
