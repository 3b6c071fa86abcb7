"""The per-offer Kubernetes answers the advisor reads: the providers app's answers for each offer's machine type
(`providers.selectors.offer_kubernetes_answers`), in the advisor's plain shape."""

from dataclasses import dataclass
from decimal import Decimal as D

from advisor import answers as advisor_answers
from advisor.types import GpuData, OfferData

H100 = GpuData(slug="h100", name="NVIDIA H100 80GB", memory_gb=D(80), mig_profiles=("1g.10gb", "7g.80gb"))


def offer(id=1, provider="p", gpu=H100):
    return OfferData(id=id, provider_slug=provider, provider_name="P", instance_type="i", region="r",
                     gpu_count=D(8), price_hour_usd=D(1), gpu=gpu)


@dataclass
class TheirAnswer:
    state: str
    reason: str
    sources: list


@dataclass
class Source:
    url: str


def test_the_providers_apps_answers_become_the_advisors_with_their_reasons_and_sources(monkeypatch):
    calls = []
    shared = {"rdma": TheirAnswer("no", "this VM type has no InfiniBand", ["https://doc/vm", Source("https://doc/b"),
                                                                             ""])}

    def offer_kubernetes_answers(*, offer_ids):
        calls.append(list(offer_ids))
        return {1: shared, 2: shared, 3: {"mig": TheirAnswer("yes", None, [])}}  # 1 and 2: one machine type

    monkeypatch.setattr(advisor_answers.provider_selectors, "offer_kubernetes_answers", offer_kubernetes_answers)
    result = advisor_answers.offer_answers([offer(1), offer(2), offer(3)])
    assert calls == [[1, 2, 3]]
    (answer,) = result[1].values()
    assert (answer.key, answer.state, answer.reason, answer.sources) == (
        "rdma", "no", "this VM type has no InfiniBand", ("https://doc/vm", "https://doc/b"))
    assert result[2] is result[1]  # converted once for the machine type, not once per offer
    assert (result[3]["mig"].state, result[3]["mig"].reason, result[3]["mig"].sources) == ("yes", "", ())
