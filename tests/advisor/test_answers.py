"""The per-offer Kubernetes answers the advisor reads: the providers app's when it has them (issue 12's
`offer_kubernetes_answers`), else derived from the provider's cells and the GPU's MIG profiles, in the same shape."""

from dataclasses import dataclass
from decimal import Decimal as D

from advisor import answers as advisor_answers
from advisor.types import Cell, GpuData, OfferData

H100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80), mig_profiles=("1g.10gb", "7g.80gb"))
L4 = GpuData(slug="l4", name="NVIDIA L4 24GB", memory_gb=D(24))


def offer(id=1, provider="p", gpu=H100):
    return OfferData(id=id, provider_slug=provider, provider_name="P", instance_type="i", region="r",
                     gpu_count=D(8), price_hour_usd=D(1), gpu=gpu)


def cells(**values):
    return {key: Cell(key, value, source_url=f"https://doc/{key}") for key, value in values.items()}


def test_derived_answers_have_the_contracts_keys_and_cite_the_cells():
    answers = advisor_answers.derived_answers(offer(), cells(offering="managed", mig="yes", efa="yes", roce="no",
                                                             gpu_operator="preinstalled", scale_to_zero="no"))
    assert set(answers) >= {"managed_node", "byo", "mig", "rdma", "fabric", "time_slicing", "mps", "scale_to_zero",
                            "spot_nodes", "node_autoscaling", "gpu_operator"}
    assert (answers["managed_node"].state, answers["managed_node"].sources) == ("yes", ("https://doc/offering",))
    assert (answers["rdma"].state, answers["fabric"].reason) == ("yes", "efa")
    assert answers["gpu_operator"].state == "yes" and answers["scale_to_zero"].state == "no"
    assert answers["time_slicing"].state == "unknown"  # no cell: unknown, never guessed
    assert answers["mig"].state == "yes"


def test_mig_is_not_on_this_machine_for_a_gpu_without_profiles():
    answers = advisor_answers.derived_answers(offer(gpu=L4), cells(offering="byo", mig="yes"))
    assert answers["mig"].state == "not_on_this_machine"
    assert (answers["managed_node"].state, answers["byo"].state) == ("no", "yes")


def test_rdma_is_no_only_when_every_fabric_is_answered_no():
    no = advisor_answers.derived_answers(offer(), cells(infiniband="no", roce="no", efa="n/a", gpudirect_tcpx="n/a"))
    partial = advisor_answers.derived_answers(offer(), cells(infiniband="no", roce="no"))
    assert (no["rdma"].state, partial["rdma"].state) == ("no", "unknown")


@dataclass
class TheirAnswer:
    state: str
    reason: str
    sources: list


def test_the_providers_apps_answers_are_used_when_it_has_them(monkeypatch):
    calls = []

    def offer_kubernetes_answers(*, offer_ids):
        calls.append(list(offer_ids))
        return {1: {"rdma": TheirAnswer("no", "this VM type has no InfiniBand", ["https://doc/vm"])}}

    monkeypatch.setattr(advisor_answers.provider_selectors, "offer_kubernetes_answers", offer_kubernetes_answers,
                        raising=False)
    result = advisor_answers.offer_answers([offer()], {"p": cells(infiniband="yes")})
    assert calls == [[1]]
    (answer,) = result[1].values()
    assert (answer.key, answer.state, answer.reason, answer.sources) == (
        "rdma", "no", "this VM type has no InfiniBand", ("https://doc/vm",))


def test_without_the_providers_apps_answers_they_are_derived(monkeypatch):
    monkeypatch.delattr(advisor_answers.provider_selectors, "offer_kubernetes_answers", raising=False)
    result = advisor_answers.offer_answers([offer()], {"p": cells(infiniband="yes")})
    assert result[1]["rdma"].state == "yes"
