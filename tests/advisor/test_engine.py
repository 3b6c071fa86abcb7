"""The advisor's engine on plain data: cost arithmetic, GPU packing, break-even, requirement rules and ranking.

Every expected number is worked out by hand in the comment next to it (730 hours a month).
"""

from dataclasses import replace
from decimal import Decimal as D

import pytest

from advisor import engine, inputs, placement, requirements
from advisor.cost import break_even, monthly_cost, monthly_hours
from advisor.types import Cell, GpuData, ModelNeed, Note, OfferAnswer, OfferData, Requirement, WorkloadSpec

H100_PROFILES = ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")
H100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80), mig_profiles=H100_PROFILES)
L4 = GpuData(slug="l4", name="NVIDIA L4 24GB", memory_gb=D(24))


def offer(id=1, provider="p", price="2.00", spot=None, gpus="1", gpu=H100, memory=None, **extra):
    return OfferData(id=id, provider_slug=provider, provider_name=provider.upper(), instance_type=f"i{id}",
                     region="r", gpu_count=D(gpus), price_hour_usd=D(price) if price is not None else None,
                     spot_price_hour_usd=D(spot) if spot else None, gpu=gpu, gpu_memory_gb=memory, **extra)


def cells(**values):
    """cells(offering="managed", control_plane_fee=("paid", "0.10", "USD")) -> {key: Cell} with source URLs."""
    out = {}
    for key, value in values.items():
        if isinstance(value, tuple):
            value, amount, currency = value
            out[key] = Cell(key, value, amount=D(amount), currency=currency, source_url=f"https://doc/{key}")
        else:
            out[key] = Cell(key, value, source_url=f"https://doc/{key}")
    return out


MANAGED_PAID = cells(offering="managed", control_plane_fee=("paid", "0.10", "USD"), scale_to_zero="yes",
                     spot_nodes="yes")


def cost(o, c, *, instances=1, hours=D(730), kubernetes=True, spot_ok=False, per_eur=None, min_nodes_kept=1):
    return monthly_cost(offer=o, instances=instances, hours=hours, kubernetes=kubernetes, spot_ok=spot_ok,
                        cells=c, per_eur=per_eur or {}, min_nodes_kept=min_nodes_kept)


# --- cost -----------------------------------------------------------------------------------------------------------


def test_cost_adds_the_control_plane_fee_for_the_whole_month():
    result = cost(offer(price="2.00"), MANAGED_PAID, instances=2)
    assert result.gpu_nodes_usd == D("2920.00")  # 2 nodes x 730 h x 2.00
    assert result.control_plane_usd == D("73.00")  # 0.10 x 730 cluster-hours
    assert result.total_usd == D("2993.00")
    assert result.complete and result.flags == ()


def test_cost_converts_a_fee_in_another_currency_with_the_ecb_rate():
    c = {**MANAGED_PAID, "control_plane_fee": Cell("control_plane_fee", "paid", amount=D("0.10"), currency="EUR")}
    result = cost(offer(price="1.00"), c, per_eur={"USD": D("1.10")})
    assert result.control_plane_usd == D("80.30")  # 0.10 EUR x 1.10 = 0.11 USD x 730
    assert result.total_usd == D("810.30")  # 730 x 1.00 + 80.30


def test_cost_without_a_rate_for_the_fee_currency_is_incomplete():
    c = {**MANAGED_PAID, "control_plane_fee": Cell("control_plane_fee", "paid", amount=D("0.60"), currency="CNY")}
    result = cost(offer(price="1.00"), c, per_eur={"USD": D("1.10")})
    assert result.control_plane_usd is None and not result.complete
    assert [f.code for f in result.flags] == ["fee_no_rate"]


def test_unknown_fee_is_flagged_and_never_counted_as_zero():
    c = cells(offering="managed", scale_to_zero="yes")  # no control_plane_fee cell at all
    result = cost(offer(price="3.00"), c, instances=2)
    assert result.control_plane_usd is None
    assert not result.complete
    assert result.total_usd == D("4380.00")  # only the known part: 2 x 730 x 3.00
    assert [f.code for f in result.flags] == ["fee_unknown"]


def test_free_control_plane_costs_nothing_and_byo_is_flagged_as_self_managed():
    free = cost(offer(price="1.00"), cells(offering="managed", control_plane_fee="free", scale_to_zero="yes"))
    assert (free.control_plane_usd, free.complete) == (D(0), True)
    byo = cost(offer(price="1.00"), cells(offering="byo", control_plane_fee="n/a", scale_to_zero="n/a"))
    assert byo.control_plane_usd == D(0) and byo.complete
    assert "self_managed_control_plane" in [f.code for f in byo.flags]


@pytest.mark.parametrize("scale_to_zero, idle_nodes, flag", [
    ("yes", 0, None),
    ("no", 1, "no_scale_to_zero"),
    ("unknown", 1, "scale_to_zero_unknown"),
])
def test_nodes_stay_up_for_the_idle_hours_unless_the_pool_scales_to_zero(scale_to_zero, idle_nodes, flag):
    c = cells(offering="managed", control_plane_fee="free", scale_to_zero=scale_to_zero)
    result = cost(offer(price="4.00"), c, instances=3, hours=D(200))
    assert result.gpu_nodes_usd == D("2400.00")  # 3 nodes x 200 h x 4.00
    assert result.idle_hours == D(530)  # 730 - 200
    assert result.idle_nodes == idle_nodes
    assert result.idle_usd == D(idle_nodes) * D("2120.00")  # 1 node x 530 h x 4.00
    assert result.total_usd == D("2400.00") + D(idle_nodes) * D("2120.00")
    assert [f.code for f in result.flags] == ([flag] if flag else [])


def test_minimum_nodes_kept_is_an_input_and_never_exceeds_the_nodes_rented():
    c = cells(offering="managed", control_plane_fee="free", scale_to_zero="no")
    result = cost(offer(price="1.00"), c, instances=2, hours=D(330), min_nodes_kept=5)
    assert result.idle_nodes == 2
    assert result.total_usd == D("1460.00")  # 2 x 330 x 1 + 2 x 400 x 1


def test_spot_price_is_used_only_where_tolerated_and_spot_nodes_are_documented():
    spot_offer = offer(price="3.00", spot="1.20")
    assert cost(spot_offer, MANAGED_PAID).price_kind == "on_demand"  # not tolerated
    used = cost(spot_offer, MANAGED_PAID, spot_ok=True)
    assert (used.price_kind, used.gpu_nodes_usd) == ("spot", D("876.00"))  # 730 x 1.20
    unknown = cost(spot_offer, {**MANAGED_PAID, "spot_nodes": Cell("spot_nodes", "unknown")}, spot_ok=True)
    assert (unknown.price_kind, unknown.gpu_nodes_usd) == ("on_demand", D("2190.00"))  # 730 x 3.00
    assert [f.code for f in unknown.flags] == ["spot_not_usable"]


def test_plain_instance_has_no_fee_no_idle_nodes_and_may_use_spot():
    result = cost(offer(price="3.00", spot="1.00"), {}, hours=D(100), kubernetes=False, spot_ok=True)
    assert (result.price_kind, result.control_plane_usd, result.idle_usd) == ("spot", D(0), D(0))
    assert result.total_usd == D("100.00") and result.complete


# --- GPU sharing arithmetic -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile, profiles, expected", [
    ("1g.10gb", H100_PROFILES, 7),
    ("1g.20gb", H100_PROFILES, 4),  # memory-bound: 2 of 8 memory slices each
    ("2g.20gb", H100_PROFILES, 3),
    ("3g.40gb", H100_PROFILES, 2),
    ("4g.40gb", H100_PROFILES, 1),
    ("7g.80gb", H100_PROFILES, 1),
    ("3g.71gb", ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"), 2),  # H200
    ("1g.6gb", ("1g.6gb", "2g.12gb", "4g.24gb"), 4),  # A30: 4 compute slices
    ("1g.24gb", ("1g.24gb", "2g.48gb", "4g.96gb"), 4),  # RTX PRO 6000
])
def test_mig_instances_per_gpu_match_nvidias_profile_tables(profile, profiles, expected):
    assert placement.mig_instances_per_gpu(profile, profiles) == expected


def test_packing_counts_gpus_for_whole_mig_time_slicing_and_mps():
    plan = placement.pack_models((ModelNeed(6, D(9)), ModelNeed(2, D(35))), D(80), H100_PROFILES)
    assert plan.replicas == 8
    assert plan.whole_gpus == 8  # one GPU per replica
    # MIG: 9 GB -> 1g.10gb, 7 per GPU -> 1 GPU for 6; 35 GB -> 3g.40gb, 2 per GPU -> 1 GPU for 2
    assert plan.mig_gpus == 2
    assert [(u.profile, u.replicas, u.per_gpu, u.gpus) for u in plan.mig_uses] == [
        ("1g.10gb", 6, 7, 1), ("3g.40gb", 2, 2, 1)]
    assert [u.resource_name for u in plan.mig_uses] == ["nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"]
    # time-slicing, first-fit decreasing: GPU 1 = 35 + 35 + 9 (79 GB), GPU 2 = 5 x 9 (45 GB)
    assert (plan.time_slicing_gpus, plan.time_slicing_replicas) == (2, 5)
    # MPS: equal shares sized by the largest replica: floor(80 / 35) = 2 per GPU -> 8 / 2 = 4 GPUs
    assert (plan.mps_gpus, plan.mps_replicas) == (4, 2)


def test_packing_a_model_larger_than_a_gpu_spans_whole_gpus_in_every_mode():
    plan = placement.pack_models((ModelNeed(1, D(100)), ModelNeed(7, D(10))), D(80), H100_PROFILES)
    assert plan.oversized == 1
    assert plan.whole_gpus == 9  # ceil(100 / 80) = 2, plus 7 x 1
    assert plan.mig_gpus == 3  # 2 + 7 x 1g.10gb on 1 GPU
    assert plan.time_slicing_gpus == 3  # 2 + 70 GB on 1 GPU
    assert plan.mps_gpus == 3  # 2 + floor(80 / 10) = 8 per GPU -> 1


def test_gpu_without_mig_profiles_has_no_mig_count():
    plan = placement.pack_models((ModelNeed(2, D(10)),), D(24), ())
    assert plan.mig_gpus is None and plan.mig_uses == ()
    assert plan.time_slicing_gpus == 1  # 20 GB on a 24 GB GPU


def test_effective_price_per_mig_slice_hour():
    plan = placement.pack_models((ModelNeed(6, D(9)), ModelNeed(2, D(35))), D(80), H100_PROFILES)
    prices = placement.slice_prices(plan, D("2.80"))
    assert [(p.profile, p.usd_per_slice_hour) for p in prices] == [
        ("1g.10gb", D("0.4000")),  # 2.80 / 7
        ("3g.40gb", D("1.4000")),  # 2.80 / 2
    ]


# --- rent versus own ------------------------------------------------------------------------------------------------


def test_break_even_months_against_the_best_rental():
    result = break_even(purchase_usd=D(250000), own_monthly_usd=D(3000), rent_monthly_usd=D(20000))
    assert result.months == D("14.7")  # 250000 / (20000 - 3000) = 14.705...


def test_break_even_never_when_owning_costs_as_much_per_month():
    result = break_even(purchase_usd=D(1000), own_monthly_usd=D(500), rent_monthly_usd=D(500))
    assert result.months is None and result.note.code == "never"


def test_break_even_without_a_complete_rental_cost_says_so():
    result = break_even(purchase_usd=D(1000), own_monthly_usd=D(0), rent_monthly_usd=None)
    assert result.months is None and result.note.code == "no_rental"


# --- requirement rules ----------------------------------------------------------------------------------------------


def _rules(spec):
    return {r.key: r.importance for r in requirements.requirements_for(spec)}


def test_inference_favours_autoscaling_scale_to_zero_and_sharing():
    assert _rules(WorkloadSpec(kind="inference", gpu="h100")) == {
        "kubernetes": "required", "node_autoscaling": "preferred", "scale_to_zero": "preferred",
        "gpu_sharing": "preferred"}


def test_multi_node_training_needs_rdma_gang_scheduling_and_shared_storage():
    assert _rules(WorkloadSpec(kind="training", gpu="h100", nodes=4, gpus_per_node=8)) == {
        "kubernetes": "required", "rdma": "required", "gang_scheduling": "required", "rwx_storage": "required"}


def test_single_node_training_needs_no_rdma_fabric_and_says_why():
    spec = WorkloadSpec(kind="training", gpu="h100", nodes=1, gpus_per_node=8)
    assert _rules(spec) == {"kubernetes": "required", "rwx_storage": "required"}
    assert engine.advise(spec, offers=[], cells={}, per_eur={}).kind_note.code == "training_single_node"


def test_batch_favours_spot_nodes_and_scale_to_zero():
    assert _rules(WorkloadSpec(kind="batch", gpu="l4")) == {
        "kubernetes": "required", "spot_nodes": "preferred", "scale_to_zero": "preferred"}


def test_notebook_needs_no_kubernetes_and_the_advice_says_so():
    spec = WorkloadSpec(kind="notebook", gpu="l4")
    assert _rules(spec) == {}
    advice = engine.advise(spec, offers=[offer(gpu=L4, price="0.80")], cells={"p": {}}, per_eur={})
    assert not advice.kubernetes_needed and advice.kind_note.code == "notebook"
    assert advice.options[0].cost.total_usd == D("584.00")  # 730 x 0.80, no fee, no idle nodes


def test_must_haves_become_required_and_chosen_sharing_is_required():
    spec = WorkloadSpec(kind="batch", gpu="l4", must_haves=("managed_control_plane", "spot_nodes"))
    assert _rules(spec)["managed_control_plane"] == "required"
    assert _rules(spec)["spot_nodes"] == "required"  # a must-have outranks the batch preference
    shared = WorkloadSpec(kind="inference", models=(ModelNeed(2, D(5)),), sharing="time_slicing")
    assert _rules(shared)["time_slicing"] == "required"
    assert "gpu_sharing" not in _rules(shared)


# --- judgements -----------------------------------------------------------------------------------------------------


def _judge(key, c, gpu=H100):
    return requirements.judge(Requirement(key, "required", Note("t", "t")), c, gpu)


def test_rdma_is_met_by_any_sourced_fabric_and_cites_it():
    judgement = _judge("rdma", cells(infiniband="unknown", efa="yes"))
    assert judgement.status == "met"
    assert [(c.key, c.source_url) for c in judgement.evidence] == [("efa", "https://doc/efa")]


def test_rdma_is_missing_only_when_every_fabric_is_sourced_as_no():
    assert _judge("rdma", cells(infiniband="no", roce="no", efa="n/a", gpudirect_tcpx="n/a")).status == "missing"
    assert _judge("rdma", cells(infiniband="no", roce="no", efa="n/a")).status == "unknown"  # tcpx absent


@pytest.mark.parametrize("value, status", [("yes", "met"), ("no", "missing"), ("n/a", "missing"),
                                           ("unknown", "unknown")])
def test_capability_answers_map_to_met_missing_unknown(value, status):
    assert _judge("gang_scheduling", cells(gang_scheduling=value)).status == status


def test_absent_cell_is_unknown_never_met():
    assert _judge("scale_to_zero", {}).status == "unknown"
    assert _judge("kubernetes", {}).status == "unknown"


def test_mig_on_a_gpu_without_profiles_is_missing_with_the_mig_guide_as_source():
    judgement = _judge("mig", cells(mig="yes"), gpu=L4)
    assert judgement.status == "missing"
    assert judgement.note.source_url == placement.MIG_USER_GUIDE_URL


# --- ranking --------------------------------------------------------------------------------------------------------


def test_ranking_puts_met_before_unknown_and_leaves_out_missing():
    spec = WorkloadSpec(kind="batch", gpu="h100", must_haves=("spot_nodes",))
    offers = [offer(1, "cheap_unknown", price="1.00"), offer(2, "dear_met", price="5.00"),
              offer(3, "missing", price="0.50")]
    all_cells = {
        "cheap_unknown": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes"),
        "dear_met": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes", spot_nodes="yes"),
        "missing": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes", spot_nodes="no"),
    }
    advice = engine.advise(spec, offers=offers, cells=all_cells, per_eur={})
    assert [(o.offer.provider_slug, o.tier) for o in advice.options] == [("dear_met", 0)]
    # the cheaper offer whose must-have is unknown is listed apart, never above the verified one
    assert [(o.offer.provider_slug, o.unverified) for o in advice.unverified] == [("cheap_unknown", ("spot_nodes",))]
    assert advice.excluded_missing == {"spot_nodes": 1}
    statuses = {j.requirement.key: j.status for j in advice.unverified[0].judgements}
    assert statuses["spot_nodes"] == "unknown"


def test_an_unknown_fee_puts_the_offer_in_the_unverified_group():
    spec = WorkloadSpec(kind="batch", gpu="h100", gpus_per_node=2, nodes=2)
    offers = [offer(1, "known", price="4.00", gpus="2"), offer(2, "fee_unknown", price="3.00", gpus="2")]
    all_cells = {"known": MANAGED_PAID, "fee_unknown": cells(offering="managed", scale_to_zero="yes")}
    advice = engine.advise(spec, offers=offers, cells=all_cells, per_eur={})
    assert [o.offer.provider_slug for o in advice.options] == ["known"]
    assert advice.options[0].cost.total_usd == D("5913.00")  # 2 x 730 x 4.00 + 73
    assert [o.offer.provider_slug for o in advice.unverified] == ["fee_unknown"]
    assert advice.unverified[0].cost.total_usd == D("4380.00")  # 2 x 730 x 3.00, fee unknown
    assert advice.unverified[0].unverified == ("control_plane_fee",)
    assert advice.chosen.offer.id == 1


def test_verified_options_are_ranked_by_total_cost_whatever_the_unknowns_elsewhere():
    # The case: a $73 fee known on a dear offer never outranks a cheaper verified one, and an unknown fee
    # never lifts an offer above a cheaper verified one either.
    spec = WorkloadSpec(kind="batch", gpu="h100", gpus_per_node=8, nodes=1)
    offers = [offer(1, "dear", price="98.32", gpus="8"), offer(2, "cheap", price="23.60", gpus="8"),
              offer(3, "unknown", price="20.00", gpus="8")]
    all_cells = {"dear": MANAGED_PAID,
                 "cheap": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes"),
                 "unknown": cells(offering="managed", scale_to_zero="yes")}
    advice = engine.advise(spec, offers=offers, cells=all_cells, per_eur={})
    assert [(o.rank, o.offer.provider_slug, o.cost.total_usd) for o in advice.options] == [
        (1, "cheap", D("17228.00")),  # 730 x 23.60
        (2, "dear", D("71846.60")),  # 730 x 98.32 + 73
    ]
    assert [o.offer.provider_slug for o in advice.unverified] == ["unknown"]


def test_one_row_per_sku_in_its_cheapest_region_with_the_other_regions_counted():
    spec = WorkloadSpec(kind="batch", gpu="h100", gpus_per_node=8)
    c = {"p": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes"),
         "q": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes")}
    offers = [replace(offer(i, "p", price=price, gpus="8"), instance_type="BM.GPU.H100.8", region=region)
              for i, (price, region) in enumerate([("80", "a"), ("70", "b"), ("80", "c")], start=1)]
    offers.append(offer(9, "q", price="75", gpus="8"))
    advice = engine.advise(spec, offers=offers, cells=c, per_eur={})
    assert [(o.offer.provider_slug, o.offer.region, o.also_in) for o in advice.options] == [
        ("p", "b", ("a", "c")), ("q", "r", ())]
    assert advice.options[0].also_in_regions == 2
    assert advice.ranked == 4  # every offer was costed; the rows are grouped


def test_inference_packing_sets_the_instances_to_rent():
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(6, D(9)), ModelNeed(2, D(35))), sharing="mig")
    c = {"p": {**MANAGED_PAID, "mig": Cell("mig", "yes", source_url="https://doc/mig")}}
    advice = engine.advise(spec, offers=[offer(price="2.80", gpus="1")], cells=c, per_eur={})
    option = advice.options[0]
    assert (option.gpus_needed, option.cost.instances) == (2, 2)
    assert option.cost.total_usd == D("4161.00")  # 2 x 730 x 2.80 + 73
    assert [p.usd_per_slice_hour for p in advice.slice_prices] == [D("0.4000"), D("1.4000")]


def test_memory_minimum_uses_the_catalog_when_the_source_reported_none():
    spec = WorkloadSpec(kind="batch", gpu_memory_min_gb=D(40))
    offers = [offer(1, gpu=H100, memory=None), offer(2, gpu=L4, memory=None), offer(3, gpu=None, memory=None)]
    c = {"p": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes")}
    advice = engine.advise(spec, offers=offers, cells=c, per_eur={})
    assert [o.offer.id for o in advice.options] == [1]
    assert (advice.excluded_too_small, advice.excluded_memory_unknown) == (1, 1)


def test_break_even_uses_the_best_complete_tier_zero_option():
    spec = WorkloadSpec(kind="batch", gpu="h100", purchase_price_usd=D(30000), power_usd_month=D(200),
                        operations_usd_month=D(300))
    c = {"p": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes")}
    advice = engine.advise(spec, offers=[offer(price="3.00")], cells=c, per_eur={})
    # rent 730 x 3.00 = 2190; own 500 a month -> 30000 / 1690 = 17.75... months
    assert advice.break_even.rent_monthly_usd == D("2190.00")
    assert advice.break_even.months == D("17.8")


# --- input rules ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, field", [
    (WorkloadSpec(kind="batch"), "gpu"),
    (WorkloadSpec(kind="batch", gpu="h100", hours_per_month=D(10), utilisation_percent=D(50)), "hours_per_month"),
    (WorkloadSpec(kind="batch", gpu="h100", models=(ModelNeed(1, D(1)),)), "models"),
    (WorkloadSpec(kind="training", gpu="h100", sharing="mig"), "sharing"),
    (WorkloadSpec(kind="inference", gpu="h100", sharing="mps"), "sharing"),
    (WorkloadSpec(kind="batch", gpu="h100", purchase_price_usd=D(1)), "power_usd_month"),
    (WorkloadSpec(kind="batch", gpu="h100", gpu_family="H100"), "gpu_family"),
])
def test_spec_errors_name_the_field(spec, field):
    assert field in inputs.spec_errors(spec)


def test_valid_spec_has_no_errors_and_utilisation_sets_the_hours():
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(1, D(8)),), utilisation_percent=D(50))
    assert inputs.spec_errors(spec) == {}
    assert monthly_hours(spec) == D(365)  # 50% of 730
    assert monthly_hours(replace(spec, utilisation_percent=None)) == D(730)


def test_mig_gets_no_count_when_no_profile_holds_a_replica():
    # an H100 offer reporting 94 GB (the NVL variant) with the 80 GB profile table: an 85 GB replica fits the GPU
    # but no MIG profile, so MIG is not offered instead of failing
    plan = placement.pack_models((ModelNeed(1, D(85)),), D(94), H100_PROFILES)
    assert plan.mig_gpus is None and plan.whole_gpus == 1
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(1, D(85)),), sharing="mig")
    c = {"p": {**MANAGED_PAID, "mig": Cell("mig", "yes")}}
    advice = engine.advise(spec, offers=[offer(memory=D(94))], cells=c, per_eur={})
    assert advice.options == () and advice.excluded_too_small == 1


def test_a_replica_larger_than_a_gpu_takes_a_tensor_parallel_degree_on_one_node():
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(2, D(140)),))
    c = {"p": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes")}
    one = offer(1, gpus="1", gpu=L4, memory=D(48), price="1.00")
    four = offer(2, gpus="4", gpu=L4, memory=D(48), price="4.00")
    advice = engine.advise(spec, offers=[one, four], cells=c, per_eur={})
    # 140 GB over 48 GB GPUs: 3 hold it, the degree is 4; one replica per 4-GPU node, two nodes
    assert [(o.offer.id, o.gpus_needed, o.cost.instances) for o in advice.options] == [(2, 8, 2)]
    assert advice.excluded_too_small == 1  # the one-GPU VM never holds a replica
    assert engine.advise(spec, offers=[one], cells=c, per_eur={}).assumptions[-1].code == "allow_multi_node"
    # Only when replicas may span nodes: pipeline stages of one whole node each, ceil(140 / 48) = 3 nodes a replica
    # (on a provider with a multi-node fabric)
    c = {"p": {**c["p"], "infiniband": Cell("infiniband", "yes")}}
    advice = engine.advise(replace(spec, multi_node=True), offers=[one], cells=c, per_eur={})
    (option,) = advice.options
    (layout,) = option.layouts
    assert (layout.gpus_per_pod, layout.pods_per_replica, option.cost.instances) == (1, 3, 6)


def test_a_fractional_gpu_is_never_offered_for_a_whole_gpu_workload():
    spec = WorkloadSpec(kind="batch", gpu="h100")
    c = {"p": cells(offering="managed", control_plane_fee="free", scale_to_zero="yes")}
    advice = engine.advise(spec, offers=[offer(1, gpus="0.5", price="1.00"), offer(2, gpus="1", price="2.00")],
                           cells=c, per_eur={})
    assert [o.offer.id for o in advice.options] == [2]
    assert advice.excluded_too_small == 1


def test_mig_and_time_slicing_only_where_the_offer_answers_yes():
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(4, D(9)),), sharing="mig")
    provider = {**MANAGED_PAID, "mig": Cell("mig", "yes", source_url="https://doc/mig")}
    offers = [offer(1, price="2.00"), offer(2, price="1.00")]
    answers = {1: {"mig": OfferAnswer("mig", "yes", "MIG node pools", ("https://doc/offer-mig",))},
               # the provider offers MIG, but not on this machine
               2: {"mig": OfferAnswer("mig", "not_on_this_machine", "no MIG on this VM")}}
    advice = engine.advise(spec, offers=offers, cells={"p": provider}, per_eur={}, answers=answers)
    assert [o.offer.id for o in advice.options] == [1]
    assert advice.excluded_missing == {"mig": 1}
    (judgement,) = [j for j in advice.options[0].judgements if j.requirement.key == "mig"]
    assert [c.source_url for c in judgement.evidence] == ["https://doc/offer-mig"]
    time_sliced = replace(spec, sharing="time_slicing")
    unknown = {1: {"time_slicing": OfferAnswer("time_slicing", "unknown")}}
    advice = engine.advise(time_sliced, offers=offers[:1], cells={"p": provider}, per_eur={}, answers=unknown)
    assert advice.options == () and [o.unverified for o in advice.unverified] == [("time_slicing",)]


def _first_fit_decreasing(pods: list[int], node_gpus: int) -> int:
    """The textbook packing, one pod at a time: the reference nodes_for must agree with."""
    free: list[int] = []
    for gpus in sorted(pods, reverse=True):
        for index, room in enumerate(free):
            if room >= gpus:
                free[index] -= gpus
                break
        else:
            free.append(node_gpus - gpus)
    return len(free)


def test_nodes_for_packs_groups_of_pods_exactly_as_first_fit_decreasing_one_pod_at_a_time():
    import random

    from advisor.placement import nodes_for

    rng = random.Random(20261204)
    for _ in range(2000):
        node_gpus = rng.choice([1, 2, 4, 8, 16])
        sizes = [size for size in (1, 2, 4, 8, 16) if size <= node_gpus]
        groups = {rng.choice(sizes): rng.randint(0, 40) for _ in range(rng.randint(1, 4))}
        pods = [size for size, count in groups.items() for _ in range(count)]
        assert nodes_for(groups, node_gpus) == _first_fit_decreasing(pods, node_gpus), (groups, node_gpus)


def test_nodes_for_gives_up_past_the_node_limit_instead_of_placing_a_million_pods():
    from advisor.placement import MAX_NODES, nodes_for

    assert nodes_for({8: MAX_NODES}, 8) == MAX_NODES
    assert nodes_for({8: MAX_NODES + 1}, 8) is None
    # A replica spread over a million pods (a 10M-token context) is refused at once, not packed pod by pod.
    assert nodes_for({8: 1_000_000}, 8) is None


def test_inference_leaves_out_gpus_below_the_pinned_vllm_minimum_compute_capability():
    # vLLM 0.8.1 needs compute capability 7.0 (advisor/data/vllm.toml); the K80 is 3.7 and the M60 5.2 in
    # nodesoftware/data/cuda.toml, the T4 7.5. A GPU the table does not know is not ruled out.
    k80 = GpuData(slug="k80", name="NVIDIA K80", memory_gb=D(12))
    m60 = GpuData(slug="m60", name="NVIDIA M60", memory_gb=D(8))
    t4 = GpuData(slug="t4", name="NVIDIA T4", memory_gb=D(16))
    mystery = GpuData(slug="not-in-the-table", name="Some GPU", memory_gb=D(16))
    offers = [offer(1, gpu=k80, price="0.10"), offer(2, gpu=m60, price="0.20"), offer(3, gpu=t4, price="0.50"),
              offer(4, gpu=mystery, price="0.60")]
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(1, D(6)),))
    advice = engine.advise(spec, offers=offers, cells={"p": MANAGED_PAID}, per_eur={})
    assert [o.offer.id for o in advice.options] == [3, 4]
    assert advice.excluded_missing == {"engine_gpu": 2}
    # Training does not run vLLM: the same old GPUs stay in.
    training = engine.advise(WorkloadSpec(kind="batch", gpu="k80"), offers=offers[:1], cells={"p": MANAGED_PAID},
                             per_eur={})
    assert [o.offer.id for o in training.options] == [1]


def test_accelerators_the_manifests_cannot_request_are_left_out_on_kubernetes():
    # A TPU (vendor "other") or Gaudi (vendor "intel") would otherwise get nvidia.com/gpu and a CUDA image.
    tpu = GpuData(slug="tpu-v5p", name="TPU v5p", memory_gb=D(95), vendor="other")
    gaudi = GpuData(slug="gaudi2", name="Intel Gaudi 2", memory_gb=D(96), vendor="intel")
    mi300 = GpuData(slug="mi300x", name="AMD MI300X", memory_gb=D(192), vendor="amd")
    offers = [offer(1, gpu=tpu, price="1.00"), offer(2, gpu=gaudi, price="1.50"), offer(3, gpu=mi300, price="4.00"),
              offer(4, price="3.00")]
    advice = engine.advise(WorkloadSpec(kind="batch"), offers=offers, cells={"p": MANAGED_PAID}, per_eur={})
    assert [o.offer.id for o in advice.options] == [4, 3]
    assert advice.excluded_missing == {"gpu_resource": 2}
    # A notebook is a plain instance (no Kubernetes manifest): the TPU stays.
    notebook = engine.advise(WorkloadSpec(kind="notebook"), offers=offers[:1], cells={"p": MANAGED_PAID}, per_eur={})
    assert [o.offer.id for o in notebook.options] == [1]


def test_infiniband_can_be_required_by_name():
    # Provider "ib" documents InfiniBand; "efa" documents only EFA (an RDMA fabric, but not InfiniBand); "unk" has
    # no answer. An offer whose own answer says it has no RDMA fabric misses it even on the InfiniBand provider.
    c = {"ib": {**MANAGED_PAID, "infiniband": Cell("infiniband", "yes", source_url="https://doc/ib")},
         "efa": {**MANAGED_PAID, "infiniband": Cell("infiniband", "no"), "efa": Cell("efa", "yes")},
         "unk": MANAGED_PAID}
    offers = [offer(1, provider="ib", price="3.00"), offer(2, provider="efa", price="1.00"),
              offer(3, provider="unk", price="2.00"), offer(4, provider="ib", price="2.50")]
    answers = {4: {"rdma": OfferAnswer("rdma", "not_on_this_machine", "no fabric on this VM")}}
    spec = WorkloadSpec(kind="batch", must_haves=("infiniband",))
    advice = engine.advise(spec, offers=offers, cells=c, per_eur={}, answers=answers)
    assert [o.offer.id for o in advice.options] == [1]
    assert [o.offer.id for o in advice.unverified] == [3]
    assert advice.unverified[0].unverified == ("infiniband",)
    assert advice.excluded_missing == {"infiniband": 2}
    (judgement,) = [j for j in advice.options[0].judgements if j.requirement.key == "infiniband"]
    assert [e.source_url for e in judgement.evidence] == ["https://doc/ib"]


def test_infiniband_is_judged_by_the_machines_own_fabric_not_by_the_providers_other_machines():
    # The provider documents InfiniBand on some of its machine types; each offer's own answer decides: its fabric
    # InfiniBand (met), another fabric (missing: RoCE is RDMA, not InfiniBand), or not known (unknown, never met).
    c = {"ib": {**MANAGED_PAID, "infiniband": Cell("infiniband", "yes", source_url="https://doc/some-ib")}}
    offers = [offer(1, provider="ib", price="3.00"), offer(2, provider="ib", price="1.00"),
              offer(3, provider="ib", price="2.00"), offer(4, provider="ib", price="4.00")]
    answers = {1: {"rdma": OfferAnswer("rdma", "yes", "", ("https://doc/a",)),
                   "fabric": OfferAnswer("fabric", "infiniband", "", ("https://doc/a",))},
               2: {"rdma": OfferAnswer("rdma", "unknown", "ask the provider"),
                   "fabric": OfferAnswer("fabric", "unknown", "")},
               3: {"rdma": OfferAnswer("rdma", "yes", ""), "fabric": OfferAnswer("fabric", "roce", "")}}
    advice = engine.advise(WorkloadSpec(kind="batch", must_haves=("infiniband",)), offers=offers, cells=c,
                           per_eur={}, answers=answers)
    # offer 4 has no answer of its own: the provider's cell is all there is
    assert [o.offer.id for o in advice.options] == [1, 4]
    assert [(o.offer.id, o.unverified) for o in advice.unverified] == [(2, ("infiniband",))]
    assert advice.excluded_missing == {"infiniband": 1}
    (judgement,) = [j for j in advice.unverified[0].judgements if j.requirement.key == "infiniband"]
    assert judgement.status == "unknown" and [e.value for e in judgement.evidence] == ["unknown", "unknown"]


def test_a_replica_across_nodes_needs_a_multi_node_fabric():
    # ceil(140 / 48) = 3 one-GPU nodes per replica. "none" answers no for every RDMA fabric: left out, counted under
    # the fabric; "unk" does not say: unverified, never ranked as verified; "ib" documents InfiniBand.
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(1, D(140)),), multi_node=True)
    base = cells(offering="managed", control_plane_fee="free", scale_to_zero="yes")
    no_fabric = {key: Cell(key, "no") for key in ("infiniband", "roce", "efa", "gpudirect_tcpx")}
    c = {"none": {**base, **no_fabric}, "unk": base, "ib": {**base, "infiniband": Cell("infiniband", "yes")}}
    offers = [offer(1, provider="none", gpu=L4, memory=D(48), price="0.50"),
              offer(2, provider="unk", gpu=L4, memory=D(48), price="0.60"),
              offer(3, provider="ib", gpu=L4, memory=D(48), price="1.00"),
              offer(4, provider="none", gpus="4", gpu=L4, memory=D(48), price="5.00")]
    advice = engine.advise(spec, offers=offers, cells=c, per_eur={})
    # The 4-GPU node holds the replica on one node, so it needs no fabric and stays (verified).
    assert [o.offer.id for o in advice.options] == [3, 4]
    assert [(o.offer.id, o.unverified) for o in advice.unverified] == [(2, ("rdma",))]
    assert advice.excluded_missing == {"rdma": 1}
