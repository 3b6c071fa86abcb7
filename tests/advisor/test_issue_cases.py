"""The three cases of issue 14, on plain data shaped like the bundled snapshot's offers (prices per instance-hour as
the snapshot has them): in each, the first verified row fits on its node, meets every required item by the offer's
own Kubernetes answers, and is the cheapest verified option; unknowns sit in the unverified group.
"""

from decimal import Decimal as D

from advisor import engine, requirements
from advisor.types import Cell, GpuData, ModelNeed, OfferAnswer, OfferData, WorkloadSpec

H100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80),
               mig_profiles=("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"))
A6000 = GpuData(slug="rtx-a6000", name="NVIDIA RTX A6000", memory_gb=D(48))
MI25 = GpuData(slug="radeon-instinct-mi25", name="AMD Radeon Instinct MI25", memory_gb=D(16), vendor="amd")


def offer(id, provider, instance, price, gpus, gpu=H100, region="r", continent="EU"):
    return OfferData(id=id, provider_slug=provider, provider_name=provider.title(), instance_type=instance,
                     region=region, continent=continent, gpu_count=D(gpus), price_hour_usd=D(price), gpu=gpu)


def provider_cells(fee="free", **extra):
    cells = {"offering": Cell("offering", "managed", source_url="https://doc/offering"),
             "scale_to_zero": Cell("scale_to_zero", "yes"), "gang_scheduling": Cell("gang_scheduling", "yes"),
             "rwx_storage": Cell("rwx_storage", "yes"), "spot_nodes": Cell("spot_nodes", "no"),
             "node_autoscaling": Cell("node_autoscaling", "yes")}
    if isinstance(fee, tuple):
        cells["control_plane_fee"] = Cell("control_plane_fee", "paid", amount=D(fee[0]), currency="USD")
    elif fee is not None:
        cells["control_plane_fee"] = Cell("control_plane_fee", fee)
    cells.update({key: Cell(key, value) for key, value in extra.items()})
    return cells


def answers(rdma="unknown", managed="yes", fabric=None, **extra):
    out = {"managed_node": OfferAnswer("managed_node", managed, "node pool of this type", ("https://doc/node",)),
           "rdma": OfferAnswer("rdma", rdma, "", ("https://doc/rdma",))}
    if fabric:
        out["fabric"] = OfferAnswer("fabric", "yes", fabric, ("https://doc/fabric",))
    out.update({key: OfferAnswer(key, value) for key, value in extra.items()})
    return out


def assert_first_verified_row_is_right(advice, offers_by_id, answers_by_id):
    first = advice.options[0]
    # it fits on its node: no pod asks for more GPUs than the node type has
    assert all(layout.gpus_per_pod <= first.offer.whole_gpus for layout in first.layouts)
    # it meets every required item, and the items the offer answers are judged by the offer's own answers
    for judgement in first.judgements:
        if judgement.requirement.importance == "required":
            assert judgement.status == "met"
            keys = requirements.ANSWER_KEYS.get(judgement.requirement.key, ())
            if any(k in answers_by_id[first.offer.id] for k in keys):
                assert {c.confidence for c in judgement.evidence} == {"offer"}
    # and it is the cheapest verified one
    assert first.cost.complete
    assert first.cost.total_usd == min(o.cost.total_usd for o in advice.options)
    assert all(o.tier == 0 and o.cost.complete for o in advice.options)
    assert all(o.tier == 1 for o in advice.unverified)


def test_70b_inference_with_two_replicas_lives_on_nodes_that_hold_a_replica():
    spec = WorkloadSpec(kind="inference", model="llama-3.1-70b", replicas=2, gpus_per_node=2)
    offers = [
        offer(1, "massedcompute", "A6000x1", "0.57", "1", A6000),  # one GPU per VM: a replica needs 4
        offer(2, "azure", "Standard_NV4as_v4", "0.233", "0.125", MI25),  # an eighth of a GPU
        offer(3, "massedcompute", "A6000x4", "2.28", "4", A6000),
        offer(4, "aws", "p5.48xlarge", "55.04", "8"),
        offer(5, "lambda", "gpu_2x_h100_sxm5", "6.38", "2"),
        offer(6, "byo_unknown", "gpu_2x_h100", "5.00", "2"),  # whether it can join a cluster is unknown
    ]
    cells = {slug: provider_cells() for slug in ("massedcompute", "azure", "aws", "lambda", "byo_unknown")}
    by_id = {o.id: answers() for o in offers}
    by_id[6] = answers(managed="unknown", byo="unknown")
    advice = engine.advise(spec, offers=offers, cells=cells, per_eur={}, answers=by_id)

    # (70.6 x 2 = 141.2 GB + KV 2.7 GB) / 0.9 = 159.9 GB per replica
    assert advice.estimate.memory_gb == D("159.9")
    ids = [o.offer.id for o in advice.options]
    assert 1 not in ids and 2 not in ids  # neither one-GPU VMs nor a fractional GPU hold a replica
    assert_first_verified_row_is_right(advice, {o.id: o for o in offers}, by_id)
    first = advice.options[0]
    # 48 GB A6000: 4 GPUs per replica (3 would hold it; 4 is the tensor-parallel degree), one 4-GPU node each:
    # 2 nodes x 730 x 2.28 = 3328.80; 2 x H100 per replica on 2-GPU nodes: 2 x 730 x 6.38 = 9314.80; one p5 with
    # both replicas: 730 x 55.04 = 40179.20
    assert (first.offer.id, first.cost.instances, first.gpus_needed) == (3, 2, 8)
    assert first.cost.total_usd == D("3328.80")
    (layout,) = first.layouts
    assert (layout.replicas, layout.gpus_per_pod) == (2, 4)
    assert [o.offer.id for o in advice.unverified] == [6]


def test_8_gpu_rdma_fine_tune_ranks_by_total_cost_with_rdma_from_the_offer():
    spec = WorkloadSpec(kind="training", gpu_family="H100", gpus_per_node=8, must_haves=("rdma",))
    offers = [
        offer(1, "azure", "Standard_ND96isr_H100_v5", "98.32", "8", region="eastus", continent="NA"),
        offer(2, "nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", "23.60", "8", region="eu-north1"),
        offer(3, "hyperstack", "n3-H100x8", "15.20", "8", region="CANADA-1", continent="NA"),
        offer(4, "azure", "Standard_NC80adis_H100_v5", "13.96", "8", region="eastus", continent="NA"),
    ]
    cells = {"azure": provider_cells(fee=("0.10",), infiniband="yes"), "nebius": provider_cells(fee="free"),
             "hyperstack": provider_cells(fee=None)}
    by_id = {1: answers("yes", fabric="infiniband"), 2: answers("yes", fabric="infiniband"), 3: answers("unknown"),
             # the provider has InfiniBand, this VM type has none: the offer's answer decides
             4: answers("no")}
    advice = engine.advise(spec, offers=offers, cells=cells, per_eur={}, answers=by_id)
    assert_first_verified_row_is_right(advice, {o.id: o for o in offers}, by_id)
    assert [(o.offer.provider_slug, o.cost.total_usd) for o in advice.options] == [
        ("nebius", D("17228.00")),  # 730 x 23.60, free control plane
        # 730 x 98.32; AKS's Free tier has no control-plane fee (advisor/data/control_plane_fees.toml), not the
        # capability cell's 0.10 an hour
        ("azure", D("71773.60")),
    ]
    assert [(o.offer.id, o.unverified) for o in advice.unverified] == [(3, ("rdma", "control_plane_fee"))]
    assert advice.excluded_missing == {"rdma": 1}


def test_an_unknown_fee_never_lifts_an_offer_above_a_cheaper_verified_one():
    # Nebius's control-plane fee is unknown in the snapshot: its row moves to the unverified group, at its top
    # (only the fee is unknown), and the verified ranking stays by cost.
    spec = WorkloadSpec(kind="training", gpu_family="H100", gpus_per_node=8, must_haves=("rdma",))
    offers = [offer(1, "azure", "ND96isr", "98.32", "8"), offer(2, "nebius", "gpu-h100", "23.60", "8"),
              offer(3, "hyperstack", "n3-H100x8", "15.20", "8")]
    cells = {"azure": provider_cells(fee=("0.10",)), "nebius": provider_cells(fee=None),
             "hyperstack": provider_cells(fee=None)}
    by_id = {1: answers("yes"), 2: answers("yes"), 3: answers("unknown")}
    advice = engine.advise(spec, offers=offers, cells=cells, per_eur={}, answers=by_id)
    assert [o.offer.id for o in advice.options] == [1]
    assert [(o.offer.id, o.unverified) for o in advice.unverified] == [
        (2, ("control_plane_fee",)), (3, ("rdma", "control_plane_fee"))]


def test_two_node_europe_run_shows_one_row_per_shape_and_the_cheapest_verified_first():
    spec = WorkloadSpec(kind="training", gpu_family="H100", gpus_per_node=8, nodes=2, continents=("EU",))
    oci_regions = ["eu-amsterdam-1", "eu-frankfurt-1", "eu-madrid-1", "eu-marseille-1", "eu-milan-1", "eu-paris-1",
                   "eu-stockholm-1", "eu-zurich-1", "uk-cardiff-1", "uk-london-1", "eu-jovanovac-1", "eu-turin-1"]
    offers = [offer(100 + i, "oci", "BM.GPU.H100.8", "80.00", "8", region=r) for i, r in enumerate(oci_regions)]
    offers += [offer(1, "nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", "23.60", "8", region="eu-north1"),
               offer(2, "lambda", "gpu_8x_h100_sxm5", "31.92", "8", region="europe-central-1"),
               offer(3, "coreweave", "gd-8xh100ib-i128", "49.24", "8", region="EU-SOUTH-04")]
    cells = {"oci": provider_cells(), "nebius": provider_cells(), "lambda": provider_cells(),
             "coreweave": provider_cells()}
    by_id = {o.id: answers("unknown") for o in offers}
    by_id[1] = answers("yes", fabric="infiniband")
    by_id[3] = answers("yes", fabric="infiniband")
    advice = engine.advise(spec, offers=offers, cells=cells, per_eur={}, answers=by_id)
    assert_first_verified_row_is_right(advice, {o.id: o for o in offers}, by_id)
    assert [(o.offer.provider_slug, o.cost.instances, o.cost.total_usd) for o in advice.options] == [
        ("nebius", 2, D("34456.00")),  # 2 nodes x 730 x 23.60
        ("coreweave", 2, D("71890.40")),  # 2 x 730 x 49.24
    ]
    unverified = [(o.offer.provider_slug, o.also_in_regions) for o in advice.unverified]
    assert unverified == [("lambda", 0), ("oci", 11)]  # one OCI row in its cheapest region, "also in 11 regions"
    # every required item of a two-node run is there: RDMA, gang scheduling, shared storage
    assert {j.requirement.key for j in advice.options[0].judgements} >= {"rdma", "gang_scheduling", "rwx_storage"}


def test_raw_gb_per_model_stays_for_experts_and_gets_the_same_placement():
    spec = WorkloadSpec(kind="inference", models=(ModelNeed(2, D(140)),))
    offers = [offer(1, "massedcompute", "A6000x1", "0.57", "1", A6000),
              offer(2, "massedcompute", "A6000x4", "2.28", "4", A6000)]
    advice = engine.advise(spec, offers=offers, cells={"massedcompute": provider_cells()}, per_eur={},
                           answers={1: answers(), 2: answers()})
    # 140 GB on 48 GB GPUs: 3 would hold it, the tensor-parallel degree is 4
    assert [(o.offer.id, o.gpus_needed, o.cost.instances) for o in advice.options] == [(2, 8, 2)]
    assert advice.excluded_too_small == 1
