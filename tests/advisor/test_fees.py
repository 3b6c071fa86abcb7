"""Issue #39 item 4: control-plane fees from a sourced table per service and tier, applied as the provider states
them (GKE's free-tier credit, OKE's cap and basic clusters, EKS's extended support), the cheapest tier named."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from advisor import engine, fees
from advisor.cost import control_plane_fee
from advisor.types import Cell, GpuData, WorkloadSpec

from .test_engine import offer


@pytest.fixture(autouse=True)
def english():
    """Tier names follow the active language; a page test earlier in this thread may have left Chinese active."""
    from django.utils import translation

    with translation.override("en"):
        yield

MANAGED = {"offering": Cell("offering", "managed"),
           "control_plane_fee": Cell("control_plane_fee", "paid", amount=D("0.10"), currency="USD")}
HOURS = D(730)


@pytest.mark.parametrize("provider, fee, tier", [
    ("gcp", D("0.00"), "zonal or Autopilot cluster with the free-tier credit"),  # 73.00 less the 74.40 credit
    ("aws", D("73.00"), "standard support"),  # 0.10 x 730
    ("azure", D("0.00"), "Free tier"),
    ("oci", D("0.00"), "basic cluster"),
    ("digitalocean", D("0.00"), "standard control plane"),
    ("alibaba", D("0.00"), "ACK managed Basic"),
])
def test_a_managed_service_costs_its_cheapest_tier_and_names_it(provider, fee, tier):
    usd, flag = control_plane_fee(MANAGED, {}, provider)
    assert usd == fee
    assert flag.code == "fee_tier" and flag.params["tier"] == tier and flag.source_url.startswith("https://")
    # the other tiers are named beside it with their monthly price, so a user who needs an SLA sees what it costs
    assert flag.params["others"] != "-"
    assert flag.params["fee"] == fee


def test_tier_arithmetic_follows_the_providers_words():
    by_name = {(t.service, t.name): t for tiers in fees.table().values() for t in tiers}
    assert by_name[("Amazon EKS", "extended support")].monthly_usd(HOURS) == D("438.00")  # 0.60 x 730
    assert by_name[("Google Kubernetes Engine", "regional cluster")].monthly_usd(HOURS) == D("73.00")  # no credit
    assert by_name[("Oracle Container Engine for Kubernetes", "enhanced cluster")].monthly_usd(D(1000)) == D("74.40")
    assert by_name[("DigitalOcean Kubernetes", "high-availability control plane")].monthly_usd(HOURS) == D("40")
    # A tier no first-party page priced for us is named, never priced.
    assert by_name[("Azure Kubernetes Service", "Standard tier")].monthly_usd(HOURS) is None


def test_a_provider_outside_the_table_keeps_its_capability_cell_and_self_run_clusters_stay_free():
    assert control_plane_fee(MANAGED, {}, "p") == (D("73.00"), None)
    usd, flag = control_plane_fee({"offering": Cell("offering", "byo")}, {}, "aws")
    assert (usd, flag.code) == (D(0), "self_managed_control_plane")


def test_the_advice_no_longer_charges_73_dollars_where_gkes_free_tier_applies():
    h100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80))
    spec = WorkloadSpec(kind="batch", gpu="h100", gpus_per_node=8, nodes=1)
    advice = engine.advise(spec, offers=[offer(1, provider="gcp", gpu=h100, gpus="8", price="10")],
                           cells={"gcp": MANAGED}, per_eur={})
    (option,) = advice.options + advice.unverified
    assert option.cost.control_plane_usd == D("0.00")
    assert option.cost.total_usd == D("7300.00")
    assert [flag.code for flag in option.cost.flags] == ["fee_tier"]
    assert "regional cluster, USD 73.00 a month" in option.cost.flags[0].params["others"]


@pytest.mark.parametrize("row, problem", [
    ({"name": "x", "source_url": "http://insecure"}, "https source_url"),
    ({"name": "x", "source_url": "https://a", "usd_per_hour": "0.1", "usd_per_month": "5"}, "not both"),
    ({"name": "x", "source_url": "https://a", "usd_per_hour": "-1"}, "negative"),
    ({"name": "x", "source_url": "https://a", "usd_per_hour": "ten"}, "not a number"),
    ({"name": "x", "source_url": "https://a", "usd_per_hour": "1", "typo": 1}, "unknown keys"),
    ({"name": "x", "source_url": "https://a"}, "no tier with an amount"),
])
def test_a_bad_fee_row_stops_the_load_naming_it(row, problem):
    with pytest.raises(fees.FeeDataError, match=problem):
        fees.parse({"service": [{"provider": "p", "name": "P", "tier": [row]}]})


def test_the_tier_and_its_note_are_shown_in_the_readers_language():
    from django.utils import translation

    with translation.override("zh-hans"):
        _usd, flag = control_plane_fee(MANAGED, {}, "oci")
        text = str(flag)
    assert flag.params["tier"] == "基本集群" and "增强集群，每月 73.00 美元" in flag.params["others"]
    assert text.startswith("控制平面：")
    with translation.override("en"):
        _usd, flag = control_plane_fee(MANAGED, {}, "oci")
    assert flag.params["tier"] == "basic cluster"


def test_the_tier_table_agrees_with_each_providers_control_plane_fee_answer():
    # Two places state a fee: the provider's capability (one answer, shown on its pages) and this table (its tiers,
    # which the advice charges). A paid answer must be one of the provider's tiers (or a tier named unpriced here),
    # a free one its cheapest tier: a price change made in one place and not the other fails here.
    from providers.curated import load_providers

    answers = {record.slug: record.capabilities.get("control_plane_fee") for record in load_providers()}
    for provider, tiers in fees.table().items():
        answer = answers[provider]
        assert answer is not None, provider
        if answer.value == "paid" and answer.amount is not None:
            assert answer.currency == "USD"
            assert any(tier.usd_per_hour == answer.amount or not tier.priced for tier in tiers), provider
        elif answer.value == "free":
            assert fees.cheapest(provider, HOURS)[1] == 0, provider
