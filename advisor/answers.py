"""Per-offer Kubernetes answers for the advisor: the providers app's own (`providers.selectors.
offer_kubernetes_answers`, issue 12) when it exists, else the same shape derived here from the provider's capability
cells and the GPU's MIG profiles, so the engine never depends on which one it gets.

The derived answers are provider-wide (every offer of a provider answers alike, except MIG, which also needs a GPU
with MIG profiles in NVIDIA's MIG User Guide); each says so in its reason. Pure functions apart from `offer_answers`,
which reads the providers app.
"""

from __future__ import annotations

from providers import selectors as provider_selectors
from providers.capabilities import RDMA_FABRICS, UNKNOWN

from .placement import MIG_USER_GUIDE_URL
from .types import Cell, OfferAnswer, OfferData

YES_NO_KEYS = ("time_slicing", "mps", "scale_to_zero", "spot_nodes", "node_autoscaling")
PROVIDER_WIDE = "From the provider's answer (the same for all its offers)."


def _state(value: str) -> str:
    return value if value in ("yes", "no", "n/a") else UNKNOWN


def _answer(key: str, state: str, cells: tuple[Cell, ...], reason: str = PROVIDER_WIDE) -> OfferAnswer:
    return OfferAnswer(key, state, reason, tuple(c.source_url for c in cells if c.source_url))


def derived_answers(offer: OfferData, cells: dict[str, Cell]) -> dict[str, OfferAnswer]:
    """One offer's answers from its provider's cells (the fallback until the providers app answers per offer)."""
    def cell(key: str) -> Cell:
        return cells.get(key) or Cell(key=key, value=UNKNOWN)

    offering = cell("offering")
    managed = {"managed": "yes", "byo": "no", "none": "no"}.get(offering.value, UNKNOWN)
    byo = {"byo": "yes", "none": "no"}.get(offering.value, UNKNOWN)
    answers = {
        "managed_node": _answer("managed_node", managed, (offering,)),
        "byo": _answer("byo", byo, (offering,)),
    }
    for key in YES_NO_KEYS:
        answers[key] = _answer(key, _state(cell(key).value), (cell(key),))
    operator = cell("gpu_operator")
    answers["gpu_operator"] = _answer("gpu_operator", {"preinstalled": "yes", "add_on": "yes", "user_installs": "no",
                                                       "n/a": "n/a"}.get(operator.value, UNKNOWN), (operator,))
    mig = cell("mig")
    if offer.gpu is not None and not offer.gpu.mig_profiles:
        answers["mig"] = OfferAnswer("mig", "not_on_this_machine", f"{offer.gpu.name} has no MIG profiles.",
                                     (MIG_USER_GUIDE_URL,))
    elif offer.gpu is None:
        answers["mig"] = OfferAnswer("mig", UNKNOWN, "The GPU model is not known.")
    else:
        answers["mig"] = _answer("mig", _state(mig.value), (mig,))
    fabrics = [cell(key) for key in RDMA_FABRICS]
    documented = [c for c in fabrics if c.value == "yes"]
    if documented:
        answers["rdma"] = _answer("rdma", "yes", tuple(documented))
        answers["fabric"] = _answer("fabric", "yes", tuple(documented), ", ".join(c.key for c in documented))
    elif all(c.value in ("no", "n/a") for c in fabrics):
        answers["rdma"] = _answer("rdma", "no", tuple(fabrics))
    else:
        answers["rdma"] = _answer("rdma", UNKNOWN, tuple(c for c in fabrics if c.value != "no"))
    return answers


def _sources(raw) -> tuple[str, ...]:
    out = []
    for source in raw or ():
        out.append(source if isinstance(source, str) else getattr(source, "url", "") or str(source))
    return tuple(url for url in out if url)


def offer_answers(offers: list[OfferData], cells: dict[str, dict[str, Cell]]) -> dict[int, dict[str, OfferAnswer]]:
    """offer id -> key -> OfferAnswer, from the providers app when it answers per offer, else derived here."""
    per_offer = getattr(provider_selectors, "offer_kubernetes_answers", None)
    if per_offer is None:
        return {offer.id: derived_answers(offer, cells.get(offer.provider_slug, {})) for offer in offers}
    raw = per_offer(offer_ids=[offer.id for offer in offers])
    converted: dict[int, dict[str, OfferAnswer]] = {}  # offers of one machine type share their answers' dict
    for keyed in raw.values():
        if id(keyed) not in converted:
            converted[id(keyed)] = {key: OfferAnswer(key, answer.state, str(answer.reason or ""),
                                                     _sources(answer.sources)) for key, answer in keyed.items()}
    return {offer_id: converted[id(keyed)] for offer_id, keyed in raw.items()}
