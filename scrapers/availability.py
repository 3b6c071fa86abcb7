"""What an availability poll returns: the stock state of offers, read from the cheap stock endpoints providers
publish (Linode `/regions/availability`, Vultr `/regions/{id}/availability`, Verda `/instance-availability`, and
the single listing calls of Lambda, RunPod, Vast.ai and DigitalOcean, whose rows carry stock). Plain Python, no ORM.

A client that can be polled has `fetch_availability(known)`, where `known` is the set of (instance_type, region)
keys of the offers we store for the source (plain data handed over by the service), and returns an
`AvailabilityResult`. A state is stated only where the source says something: a key the answer says nothing about
is left out, so the service keeps its last known state ("unknown" stays unknown). Errors are the ScrapeErrors of
scrapers.base, raised before anything is returned, so a broken answer never turns into "sold out".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from .base import SchemaScrapeError, ScrapedOffer

IN_STOCK = ("available", "limited")
STATES = ("available", "limited", "unavailable")


@dataclass(frozen=True, slots=True)
class ScrapedAvailability:
    instance_type: str
    region: str
    availability: str  # available | limited | unavailable
    available_count: int | None = None


@dataclass(slots=True)
class AvailabilityResult:
    states: list[ScrapedAvailability]
    rejected: list[str] = field(default_factory=list)


def from_listing(offers: Iterable[ScrapedOffer], known: Collection[tuple[str, str]]) -> AvailabilityResult:
    """States from a full listing whose rows carry stock (Lambda, RunPod, Vast.ai, DigitalOcean).

    Each listed offer with a known state is stated as the listing says. A stored offer of an instance type the
    listing names, in a region it no longer lists, is sold out there: these listings name every region with
    capacity (Lambda's `regions_with_capacity_available`, DigitalOcean's `regions`, Vast.ai's slots). An instance
    type the listing does not name at all is left alone. An empty listing is refused.
    """
    offers = list(offers)
    if not offers:
        raise SchemaScrapeError("the listing is empty; refusing it as a broken answer")
    stated: dict[tuple[str, str], ScrapedAvailability] = {}
    for offer in offers:
        if offer.availability in STATES:
            stated[(offer.instance_type, offer.region)] = ScrapedAvailability(
                offer.instance_type, offer.region, offer.availability, offer.available_count)
    listed_types = {offer.instance_type for offer in offers if offer.availability in STATES}
    for instance_type, region in known:
        if instance_type in listed_types and (instance_type, region) not in stated:
            stated[(instance_type, region)] = ScrapedAvailability(instance_type, region, "unavailable")
    if not stated:
        raise SchemaScrapeError("the listing states no stock for any offer")
    return AvailabilityResult(states=sorted(stated.values(), key=lambda s: (s.instance_type, s.region)))


class StockFromPriceListing:
    """For a client whose price listing already states stock (Lambda, RunPod, Vast.ai): its availability poll is
    the same request as its price run, read with `from_listing`, and replays the same recording."""

    @classmethod
    def recorded_availability(cls) -> dict:
        return cls.recorded()

    def fetch_availability(self, known) -> AvailabilityResult:
        result = self.fetch()
        states = from_listing(result.offers, known)
        states.rejected = result.rejected
        return states
