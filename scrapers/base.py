"""What every provider client returns and raises. Plain Python: nothing under scrapers/ touches the database.

A client is a class with a `slug`, built around an injected `httpx.Client`, whose `fetch()` returns a
`ScrapeResult` (offers, a list or a generator, plus what it noticed) or raises one of the errors below. The ingestion
service (providers.ingest.offers_sync) is the only consumer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import ClassVar

import httpx


class ScrapeError(Exception):
    """The source could not be read; nothing it returned is trusted. The run fails, stored offers stay."""


class TransientScrapeError(ScrapeError):
    """Worth retrying later: timeouts, connection errors, 429 and 5xx answers."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class AuthScrapeError(ScrapeError):
    """The provider refused our credentials (401/403): retrying cannot help."""


class SchemaScrapeError(ScrapeError):
    """The response is not what the provider's contract says (not JSON/CSV, a field missing or renamed)."""


class NotConfiguredError(ScrapeError):
    """The source needs an API key that is not set; the run is recorded as not configured."""


@dataclass(frozen=True, slots=True)
class ScrapedOffer:
    """One rentable configuration in one region, in the source's own currency, units already converted.

    gpu_memory_gb is per GPU; prices are per instance-hour; None means the source did not say.
    """

    instance_type: str
    region: str
    gpu_name: str
    gpu_count: Decimal
    currency: str
    price_hour: Decimal | None
    spot_price_hour: Decimal | None = None
    gpu_memory_gb: Decimal | None = None
    vcpus: Decimal | None = None
    ram_gb: Decimal | None = None
    availability: str = "unknown"  # available | limited | unavailable | unknown
    available_count: int | None = None
    # When the data itself says the price held: the date stated in the file, or its commit's date. None lets the
    # ingestion service decide: the fetch time of a live run, or the source's stated as-of date for a replay.
    price_as_of: datetime | None = None
    # The file (repository, path, commit) this row's price came from, where a source reads several.
    price_source_url: str = ""
    # Share of one GPU when the instance has less than a whole one (AWS g6f, Azure NVv4); gpu_count then holds the
    # same share, so the per-GPU price is per whole-GPU equivalent.
    gpu_fraction: Decimal | None = None
    form_factor: str = ""  # sxm | pcie | nvl when the instance name or the source states it
    efa_interfaces: int | None = None  # AWS Elastic Fabric Adapter interfaces (the RDMA fabric), when stated
    # AWS Spot Instance Advisor: savings versus on-demand (percent) and the interruption-frequency bucket label,
    # with the feed's own date. Not a spot price.
    spot_savings_pct: int | None = None
    spot_interruption: str = ""
    spot_as_of: date | None = None
    # 1- and 3-year commitment prices per instance-hour (Google's committed use discounts), in `currency`, with the
    # date and file they come from when another file than the on-demand price's.
    commit_1y_price_hour: Decimal | None = None
    commit_3y_price_hour: Decimal | None = None
    commitment_as_of: date | None = None
    commitment_source_url: str = ""


@dataclass(frozen=True, slots=True)
class ScrapedCapability:
    """A Kubernetes fact a provider API states (e.g. the EKS control-plane fee), keyed like providers.capabilities.

    The ingestion service lets it replace the curated value and records the change; `source_url` is the API URL.
    A dated dataset (CNCF AI conformance at a commit) sets `verified_on` to the data's own date (otherwise the fetch
    date is used) and may carry its own Simplified Chinese texts.
    """

    key: str
    value: str
    source_url: str
    label: str = ""
    detail: str = ""
    amount: Decimal | None = None
    currency: str = ""
    verified_on: date | None = None
    label_zh: str = ""
    detail_zh: str = ""


@dataclass(slots=True)
class ScrapeResult:
    # Any iterable, read once and in order by the ingestion service: a list, or a generator that parses as it goes
    # (then the lists below may grow while it is read), so a large response never has to be held whole.
    offers: Iterable[ScrapedOffer]
    # Rows the client refused (absurd values, unparsable numbers), with the reason: counted on the run.
    rejected: list[str] = field(default_factory=list)
    # Rows kept with a value the client corrected from the row's own facts, with the reason (counted on the run).
    corrections: list[str] = field(default_factory=list)
    # (instance_type, region) of the refused rows the client could still name: the source lists them, so the offers
    # stored for them are left as they are instead of being deactivated as gone.
    rejected_keys: set[tuple[str, str]] = field(default_factory=set)
    # Instance types the client refused as a whole (every region of them): their stored offers are left as they are.
    rejected_instance_types: set[str] = field(default_factory=set)
    capabilities: list[ScrapedCapability] = field(default_factory=list)
    # Facts shown beside the capabilities but not one of the questions (Kubernetes versions, regions with
    # managed Kubernetes): free-form name -> JSON-able value.
    kubernetes_facts: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Static facts about a source, mirrored into the DataSource table."""

    slug: str
    provider: str
    name: str
    kind: str  # api | catalog | curated
    url: str
    license: str = ""
    revision: str = ""
    as_of: str = ""  # ISO date, when the source states one
    api_key_env: str = ""


class ProviderClient:
    """What every provider client is: built around an injected `httpx.Client` (the network, or recorded payloads in
    tests) and, for a source that needs one, an API key; `fetch()` returns a ScrapeResult. A client states `info`
    and, as `recordings`, the real recorded payloads (URL -> file under scrapers/recorded/) that `scrape --offline`
    and tests replay; a client whose files are computed overrides `recorded()` instead."""

    info: ClassVar[SourceInfo]
    recordings: ClassVar[dict[str, Path]] = {}
    # True for clients whose API states Kubernetes facts (fees, versions): the offline snapshot replays them even
    # where a catalog covers the provider's prices.
    provides_kubernetes_facts: ClassVar[bool] = False
    # Optional (default False): the source is a dataset at a commit whose recorded copy says what a live fetch says,
    # so offline replays store its capability cells too (scrapers/cncf_ai_conformance.py).
    # capability_dataset: ClassVar[bool]

    def __init__(self, http: httpx.Client, api_key: str | None = None) -> None:
        self.http = http
        self.api_key = api_key

    @classmethod
    def recorded(cls) -> dict[str, Path]:
        """URL -> recorded payload file (under scrapers/recorded/) that `scrape --offline` and tests replay."""
        return dict(cls.recordings)

    def fetch(self) -> ScrapeResult:
        raise NotImplementedError


class EditionedClient(ProviderClient):
    """A source published in dated editions (CoreWeave's daily scrapes): `editions()` lists the recorded ones,
    oldest first, and the client is built with `edition=` one of them (None: the newest). The bundled snapshot
    replays them in order, so the price history is the source's own."""

    @classmethod
    def editions(cls) -> list[str]:
        raise NotImplementedError
