"""Per-offer Kubernetes answers for the advisor, as the engine reads them: the providers app's own answers for each
offer's machine type (`providers.selectors.offer_kubernetes_answers`), converted once per machine type into the
advisor's plain OfferAnswer. The one read of the providers app here."""

from __future__ import annotations

from providers import selectors as provider_selectors

from .types import OfferAnswer, OfferData


def _sources(raw) -> tuple[str, ...]:
    out = []
    for source in raw or ():
        out.append(source if isinstance(source, str) else getattr(source, "url", "") or str(source))
    return tuple(url for url in out if url)


def offer_answers(offers: list[OfferData]) -> dict[int, dict[str, OfferAnswer]]:
    """offer id -> key -> OfferAnswer."""
    raw = provider_selectors.offer_kubernetes_answers(offer_ids=[offer.id for offer in offers])
    converted: dict[int, dict[str, OfferAnswer]] = {}  # offers of one machine type share their answers' dict
    for keyed in raw.values():
        if id(keyed) not in converted:
            converted[id(keyed)] = {key: OfferAnswer(key, answer.state, str(answer.reason or ""),
                                                     _sources(answer.sources)) for key, answer in keyed.items()}
    return {offer_id: converted[id(keyed)] for offer_id, keyed in raw.items()}
