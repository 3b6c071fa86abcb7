"""Reads. Views, the API and the digest ask these functions; they never build querysets of their own."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import BooleanField, Count, ExpressionWrapper, F, Max, Min, Prefetch, Q, QuerySet, Subquery
from django.utils import timezone

from . import pricing
from .models import (
    Capability,
    CapabilityOrigin,
    DataSource,
    ExchangeRate,
    GpuModel,
    HeldPrice,
    KubernetesFact,
    KubernetesProfile,
    LinkCheck,
    Offer,
    PriceObservation,
    Provider,
    ScrapeRun,
    in_language,
)
from .versions import remembered


def exchange_rates_latest() -> dict[str, Decimal]:
    """Units of each currency per 1 EUR from the latest ECB day we have (empty when none is loaded)."""
    return exchange_rates_day()[1]


def exchange_rate_date() -> date | None:
    return exchange_rates_day()[0]


def exchange_rates_day() -> tuple[date | None, dict[str, Decimal]]:
    """The latest ECB day we have and its rates (units per 1 EUR), in one query: every page converts prices. (Kept
    under the data version it earned nothing measurable: docs/performance.md, 2026-12-06.)"""
    return ExchangeRate.objects.latest_day()


def offer_list(*, include_inactive: bool = False, now: datetime | None = None) -> QuerySet[Offer]:
    """Offers cheapest first, each annotated with `is_stale`.

    `is_stale` is True when the offer's source has had no successful run for more than STALE_AFTER_HOURS
    (settings, 24 by default) before `now`, or never had one: its price may no longer hold, so pages and the API
    should say so. `offer.last_seen` is when a successful run last listed the offer. Filtering on it:
    `offer_list().filter(is_stale=False)`.
    """
    offers = (Offer.objects.select_related("provider", "gpu", "source", "kubernetes_profile")
              .annotate(is_stale=stale_expression(now=now)))
    if not include_inactive:
        offers = offers.filter(is_active=True)
    return offers.order_by("price_per_gpu_hour_usd", "id")


def stale_cutoff(*, now: datetime | None = None) -> datetime:
    """Sources whose latest success started before this moment are stale."""
    return (now or timezone.now()) - timedelta(hours=settings.STALE_AFTER_HOURS)


def is_stale(last_success_at: datetime | None, *, now: datetime | None = None) -> bool:
    """stale_expression's rule in Python, for a source or an offer loaded without the annotation: no success of
    its source within STALE_AFTER_HOURS, or never."""
    return last_success_at is None or last_success_at < stale_cutoff(now=now)


def stale_expression(*, now: datetime | None = None, prefix: str = "source__") -> ExpressionWrapper:
    """A boolean expression for annotating any queryset that reaches DataSource through `prefix` (for an Offer
    queryset the default; for DataSource itself `prefix=""`): True when that source is stale (see offer_list)."""
    cutoff = stale_cutoff(now=now)
    stale = Q(**{f"{prefix}last_success_at__isnull": True}) | Q(**{f"{prefix}last_success_at__lt": cutoff})
    return ExpressionWrapper(stale, output_field=BooleanField())


def stale_source_ids(*, now: datetime | None = None) -> set[int]:
    """Ids of the sources whose offers are stale (no successful run within STALE_AFTER_HOURS, or never)."""
    return set(DataSource.objects.annotate(is_stale=stale_expression(now=now, prefix=""))
               .filter(is_stale=True).values_list("id", flat=True))


def provider_list() -> QuerySet[Provider]:
    return (
        Provider.objects.prefetch_related(Prefetch("capabilities", queryset=Capability.objects.order_by("key")))
        .annotate(active_offers=Count("offers", filter=Q(offers__is_active=True)))
        .order_by("name")
    )


def research_logs() -> list[tuple[Capability, list]]:
    """The research rounds behind curated answers (providers.capabilities.research_split), for the sources page: each
    capability whose detail records them, with its entries, in provider and question order. Cells show the reason
    alone."""
    from .capabilities import research_split

    found = []
    for capability in (Capability.objects.filter(origin=CapabilityOrigin.CURATED, detail__contains="Round ")
                       .select_related("provider").order_by("provider__name", "key")):
        entries = research_split(capability.detail)[1]
        if entries:
            found.append((capability, entries))
    return found


def prices_held() -> list:
    """The prices the price guard holds back (providers/pricing.py), for the sources page: each with its source, in
    source and machine order. Few by design: a hold is a price that looks broken."""
    return list(HeldPrice.objects.select_related("source").order_by("source__slug", "instance_type", "region"))


@dataclass(frozen=True)
class CommitmentCoverage:
    provider: Provider
    offers: int  # active offers
    one_year: int  # of them with a 1-year commitment price
    three_years: int
    as_of: date | None
    source_url: str
    missing: str  # why there are none, for a big cloud without them


COMMITMENT_PROVIDERS = ("aws", "azure", "gcp")


def commitment_coverage() -> list[CommitmentCoverage]:
    """Per big cloud, how many live offers carry a 1- and 3-year commitment price, from which file and date, or why
    none do (pricing.COMMITMENTS_MISSING): the sources page names the ones still missing."""
    rows = {row["provider"]: row for row in Offer.objects.filter(
        is_active=True, provider__slug__in=COMMITMENT_PROVIDERS).values("provider").annotate(
        offers=Count("id"), one_year=Count("commit_1y_price_hour_usd"), three_years=Count("commit_3y_price_hour_usd"),
        as_of=Max("commitment_as_of"), source_url=Max("commitment_source_url"))}
    result = []
    for provider in Provider.objects.filter(slug__in=COMMITMENT_PROVIDERS).order_by("name"):
        row = rows.get(provider.pk, {})
        result.append(CommitmentCoverage(
            provider=provider, offers=row.get("offers", 0), one_year=row.get("one_year", 0),
            three_years=row.get("three_years", 0), as_of=row.get("as_of"), source_url=row.get("source_url") or "",
            missing=str(pricing.COMMITMENTS_MISSING.get(provider.slug, ""))))
    return result


def source_status_list(*, now: datetime | None = None,
                       with_dates: bool = True) -> list[tuple[DataSource, ScrapeRun | None]]:
    """Every source with its latest run, in two queries whatever the number of sources and runs.

    Runs are created in time order, so the highest id of a source is its latest run. Each source also carries
    `last_success_at` (start of its latest successful run, None if never), `is_stale` (as in offer_list) and `age`
    (a timedelta since `last_success_at`, None if never), for the status page; with `with_dates` (one more query)
    also `data_oldest` / `data_newest` (the dates its active offers' data states), `active_offers` and
    `undated_offers`.
    """
    now = now or timezone.now()
    sources = list(
        DataSource.objects.select_related("provider")
        .annotate(is_stale=stale_expression(now=now, prefix=""))
        .order_by("slug")
    )
    latest_ids = ScrapeRun.objects.values("source_id").annotate(last=Max("id")).values("last")
    latest = {run.source_id: run for run in ScrapeRun.objects.filter(id__in=latest_ids)}
    # The dates the active offers' data states (price_as_of), oldest and newest per source: "data of <dates>".
    dates = {
        row["source_id"]: row for row in Offer.objects.filter(is_active=True).values("source_id").annotate(
            oldest=Min("price_as_of"), newest=Max("price_as_of"), offers=Count("id"),
            undated=Count("id", filter=Q(price_as_of__isnull=True) & ~LIVE_UNDATED))
    } if with_dates else {}
    for source in sources:
        source.age = now - source.last_success_at if source.last_success_at else None
        row = dates.get(source.id, {})
        source.data_oldest, source.data_newest = row.get("oldest"), row.get("newest")
        source.active_offers, source.undated_offers = row.get("offers", 0), row.get("undated", 0)
    return [(source, latest.get(source.id)) for source in sources]


def availability_polls_latest() -> dict[int, object]:
    """Source id -> its latest AvailabilityPoll (sources never polled are absent), in one query."""
    from .models import AvailabilityPoll

    latest = AvailabilityPoll.objects.values("source_id").annotate(last=Max("id")).values("last")
    return {poll.source_id: poll for poll in AvailabilityPoll.objects.filter(id__in=latest)}


# Offers that state no price date but were read live from a source's own answer: as fresh as the run that read them
# (the pages say "read live"). Not a file pinned at a commit (the source's revision): it is as old as its commit.
LIVE_UNDATED = Q(price_as_of__isnull=True, source__last_success_at__isnull=False, source__revision="")


def snapshot_dates() -> dict[str, object]:
    """What the offers on the site are: whether any source was read live, the oldest and newest date their data
    states and how many state none (for the home page's "bundled snapshot of <dates>" line). Two queries; inside a
    data_version_scope both are kept until the offers or the sources change (reading the dates scans every active
    offer: 26 ms of the home page's time at 100,000 offers)."""
    def read() -> dict[str, object]:
        row = Offer.objects.filter(is_active=True).aggregate(
            oldest=Min("price_as_of"), newest=Max("price_as_of"), offers=Count("id"),
            undated=Count("id", filter=Q(price_as_of__isnull=True) & ~LIVE_UNDATED))
        row["live"] = DataSource.objects.filter(last_success_at__isnull=False).exists()
        return row

    return dict(remembered("snapshot-dates", read))


def link_check_failures() -> list[tuple[LinkCheck, list[str]]]:
    """Curated source links that failed their latest weekly check, each with the names of the providers whose
    capability cells cite it, in two queries. Empty when every link answered (or none was checked yet)."""
    broken = list(LinkCheck.objects.filter(ok=False).order_by("url"))
    citing: dict[str, set[str]] = {}
    for url, name in Capability.objects.filter(source_url__in=[check.url for check in broken]).values_list(
        "source_url", "provider__name"
    ):
        citing.setdefault(url, set()).add(name)
    return [(check, sorted(citing.get(check.url, ()))) for check in broken]


# --- reads for the site pages (web.views) -------------------------------------------------------------------


def capabilities_by_provider(*, provider_ids) -> dict[int, dict[str, Capability]]:
    """Every capability cell of the given providers in one query: {provider_id: {key: Capability}}."""
    cells: dict[int, dict[str, Capability]] = {}
    for cell in Capability.objects.filter(provider_id__in=set(provider_ids)):
        cells.setdefault(cell.provider_id, {})[cell.key] = cell
    return cells


def gpu_model_list() -> QuerySet[GpuModel]:
    """The GPU catalog with each model's number of active offers and cheapest price per GPU-hour (USD)."""
    active = Q(offers__is_active=True)
    return GpuModel.objects.annotate(
        active_offers=Count("offers", filter=active),
        cheapest_usd=Min("offers__price_per_gpu_hour_usd", filter=active),
        provider_count=Count("offers__provider", filter=active, distinct=True),
    ).order_by("vendor", "family", "name")


def kubernetes_fact_list(*, provider: Provider) -> QuerySet[KubernetesFact]:
    return KubernetesFact.objects.filter(provider=provider).select_related("source").order_by("name")


def link_check_map(*, urls) -> dict[str, LinkCheck]:
    """The latest link-check answer for each of `urls` that has been checked, in one query."""
    return {check.url: check for check in LinkCheck.objects.filter(url__in=set(urls))}


def offer_price_history(*, offer: Offer) -> QuerySet[PriceObservation]:
    return PriceObservation.objects.filter(offer=offer).order_by("observed_at", "id")


def offer_other_sources(*, offer: Offer, limit: int = 20) -> tuple[list[Offer], str]:
    """The same instance type of the same provider from its other sources (live first), and, when `offer` is not live
    for a reason of providers.pricing (another source's price for the machine wins, or the provider's API lists the
    size only elsewhere), that reason; "" when it is live, retired or simply no longer listed."""
    others = list(Offer.objects.filter(provider_id=offer.provider_id, instance_type=offer.instance_type)
                  .exclude(source_id=offer.source_id).select_related("source")
                  .order_by("-is_active", "region", "source__slug")[:limit])
    if offer.is_active or pricing.is_retired(offer.provider.slug, offer.instance_type, timezone.now().date()):
        return others, ""
    live = [other for other in others if other.is_active]
    same = [other for other in live if other.region == offer.region]
    if same:
        _, reason = pricing.preferred(_candidate(same[0]), _candidate(offer))
        return others, reason
    api_regions = sorted({other.region for other in live if other.source.kind == "api"})
    if api_regions:
        return others, (f"{offer.source.slug}'s copy is not live: the provider's own API lists this size only in "
                        f"{', '.join(api_regions)}")
    return others, ""


def _candidate(offer: Offer) -> pricing.Candidate:
    read_live = offer.last_seen if offer.source.last_success_at and not offer.source.revision else None
    return pricing.Candidate(offer.source.slug, offer.source.kind, offer.price_as_of or read_live)


def gpu_price_history(*, gpu: GpuModel) -> list[dict]:
    """Every price observation of every offer (active or not) of one GPU model, with what is needed to turn it
    into a per-GPU-hour step series: the offer's GPU count, when it was last seen and whether it still is."""
    return list(
        PriceObservation.objects.filter(offer__gpu=gpu)
        .order_by("offer_id", "observed_at")
        .values(
            "offer_id", "observed_at", "price_hour_usd", "spot_price_hour_usd", "offer__gpu_count",
            "offer__last_seen", "offer__is_active",
        )
    )


def offer_price_points(*, offers: QuerySet[Offer], limit: int = 20000) -> list[tuple[str, str, Decimal]]:
    """(GPU name, provider name, USD per GPU-hour) of priced offers with a known GPU, for distribution charts.

    Capped at `limit` rows (cheapest first) so a chart of a huge unfiltered result stays bounded."""
    return list(
        offers.filter(gpu__isnull=False, price_per_gpu_hour_usd__isnull=False)
        .order_by("price_per_gpu_hour_usd", "id")
        .values_list("gpu__name", "provider__name", "price_per_gpu_hour_usd")[:limit]
    )


def cheapest_offers_by_gpu(*, provider_ids) -> dict[tuple[int, int], Offer]:
    """The cheapest active offer per GPU-hour of each (provider, GPU model), in two queries.

    The first query reads only ids and prices; the second loads the winners with their relations."""
    best: dict[tuple[int, int], int] = {}
    rows = (
        Offer.objects.filter(provider_id__in=set(provider_ids), is_active=True, gpu__isnull=False,
                             price_per_gpu_hour_usd__isnull=False)
        .order_by("price_per_gpu_hour_usd", "id")
        .values_list("provider_id", "gpu_id", "id")
    )
    for provider_id, gpu_id, offer_id in rows:
        best.setdefault((provider_id, gpu_id), offer_id)
    winners = (Offer.objects.select_related("provider", "gpu", "source", "kubernetes_profile")
               .in_bulk(list(best.values())))
    return {key: winners[offer_id] for key, offer_id in best.items()}



def offer_get(*, offer_id: int) -> Offer | None:
    """One offer, active or not, with its provider, GPU model and source."""
    return offer_list(include_inactive=True).filter(pk=offer_id).first()


def provider_get(*, slug: str) -> Provider | None:
    """One provider with its capability cells, Kubernetes facts and data sources prefetched."""
    return (
        provider_list()
        .prefetch_related(
            Prefetch("kubernetes_facts", queryset=KubernetesFact.objects.select_related("source").order_by("name")),
            Prefetch("sources", queryset=DataSource.objects.order_by("slug")),
        )
        .filter(slug=slug)
        .first()
    )


def providers_by_slugs(*, slugs: list[str]) -> list[Provider]:
    """The providers named by `slugs`, in the order given (unknown slugs are simply absent)."""
    found = {provider.slug: provider for provider in Provider.objects.filter(slug__in=slugs)}
    return [found[slug] for slug in slugs if slug in found]


def gpu_model_get(*, slug: str) -> GpuModel | None:
    """One GPU model with the same offer figures as gpu_model_list."""
    return gpu_model_list().filter(slug=slug).first()


# --- availability ------------------------------------------------------------------------------------------------

AVAILABILITY_DAYS = (7, 30)


def offer_availability_changes(*, offer: Offer) -> list[dict]:
    """The offer's stock changes, oldest first: changed_at, availability, available_count, recorded."""
    from .models import AvailabilityChange

    return list(AvailabilityChange.objects.filter(offer=offer).order_by("changed_at", "id")
                .values("changed_at", "availability", "available_count", "recorded"))


def _stockouts(changes: QuerySet, *, start: datetime, now: datetime) -> QuerySet:
    """The sold-out stretches among `changes` that overlap [start, now], each with its `length` clipped to it: a
    sold-out change lasts until the offer's next change (or until now), all computed in the database."""
    from django.db.models import DurationField, F, OuterRef, Value
    from django.db.models.functions import Coalesce, Greatest, Least

    from .models import Availability, AvailabilityChange

    following = (AvailabilityChange.objects.filter(offer=OuterRef("offer"), changed_at__gt=OuterRef("changed_at"))
                 .order_by("changed_at").values("changed_at")[:1])
    return (changes.filter(availability=Availability.UNAVAILABLE)
            .annotate(ends=Least(Coalesce(Subquery(following), Value(now)), Value(now)))
            .filter(ends__gt=start)
            .annotate(length=ExpressionWrapper(F("ends") - Greatest(F("changed_at"), Value(start)),
                                               output_field=DurationField())))


def offer_longest_stockout(*, offer: Offer, days: int = 30, now: datetime | None = None) -> timedelta | None:
    """The longest sold-out stretch of one offer within the last `days` days (None when it was never sold out)."""
    from .models import AvailabilityChange

    now = now or timezone.now()
    return _stockouts(AvailabilityChange.objects.filter(offer=offer), start=now - timedelta(days=days),
                      now=now).aggregate(longest=Max("length"))["longest"]


def availability_summary(*, gpu: GpuModel | None = None, provider: Provider | None = None,
                         now: datetime | None = None) -> list[dict]:
    """Per provider x GPU model (of one GPU's or one provider's active offers): checks and checks in stock over the
    last 7 and 30 days, their shares, and the longest sold-out stretch of any one of its offers in the last 30 days.
    Summed in the database from the day counters and the changes: two grouped queries, whatever the offers."""
    from django.db.models import Sum

    from .models import AvailabilityChange, AvailabilityDay

    now = now or timezone.now()
    today = now.date()
    scope = Q(offer__is_active=True)
    if gpu is not None:
        scope &= Q(offer__gpu=gpu)
    if provider is not None:
        scope &= Q(offer__provider=provider)
    sums = {}
    for days in AVAILABILITY_DAYS:
        window = Q(day__gt=today - timedelta(days=days))
        sums[f"checks_{days}d"] = Sum("checks", filter=window)
        sums[f"in_stock_{days}d"] = Sum("in_stock", filter=window)
    keys = ("offer__provider__slug", "offer__provider__name", "offer__gpu__slug", "offer__gpu__name")
    rows = list(AvailabilityDay.objects.filter(scope, day__gt=today - timedelta(days=max(AVAILABILITY_DAYS)))
                .values(*keys).annotate(offers=Count("offer", distinct=True), **sums).order_by(*keys))
    longest = {
        tuple(row[key] for key in keys): row["longest"]
        for row in _stockouts(AvailabilityChange.objects.filter(scope), start=now - timedelta(days=30), now=now)
        .values(*keys).annotate(longest=Max("length")).order_by()
    }
    for row in rows:
        for days in AVAILABILITY_DAYS:
            checks = row[f"checks_{days}d"] or 0
            row[f"share_{days}d"] = (row[f"in_stock_{days}d"] or 0) / checks if checks else None
        row["longest_stockout"] = longest.get(tuple(row[key] for key in keys))
    return rows


def offer_availability_days(*, offer: Offer, days: int = 30, now: datetime | None = None) -> list[dict]:
    """The offer's day counters of the last `days` days: day, checks, in_stock."""
    from .models import AvailabilityDay

    today = (now or timezone.now()).date()
    return list(AvailabilityDay.objects.filter(offer=offer, day__gt=today - timedelta(days=days)).order_by("day")
                .values("day", "checks", "in_stock"))


# Filters that ask about the provider (its Kubernetes answers, its name or kind), not about an offer.
PROVIDER_FILTERS = ("provider", "provider_kind", "offering", "gpu_operator", "rdma", "control_plane_fee_max",
                    "mig", "mps", "time_slicing", "vendor_sharing", "node_autoscaling", "scale_to_zero",
                    "spot_nodes", "rwx_storage", "gang_scheduling")


# The provider cells (capabilities.RDMA_FABRICS) that answer an `rdma` choice for a provider as a whole.
PROVIDER_RDMA_CELLS = {"any": ("infiniband", "roce", "efa"),
                       "multinode": ("infiniband", "roce", "efa", "gpudirect_tcpx"),
                       "infiniband": ("infiniband",), "roce": ("roce",), "efa": ("efa",),
                       "tcpx": ("gpudirect_tcpx",)}


def providers_matching(*, filters) -> QuerySet[Provider]:
    """Providers whose own answers (the capability matrix) meet a bound, valid OfferFilterSet's provider questions
    (PROVIDER_FILTERS: Kubernetes capabilities, provider, kind); every provider when none of those is set. The
    capability matrix's query tool, and the providers an empty offers result names.

    A capability question is read from the provider's cells with the FilterSet's own rule
    (`_providers_answering`, which the offers' filters also use, so "unknown" means the same on both); an offer's
    answer is stricter (its machine must have it too), which is why this reads the cells, not the offers. The
    provider, kind, fee and GPU-operator filters run on the provider table as they run on offers (each applies
    `provider_id IN (...)`, so an annotation of that name lets them)."""
    from .capabilities import RDMA_FABRICS

    data = filters.form.cleaned_data
    providers = Provider.objects.annotate(provider_id=F("id"))
    for name in PROVIDER_FILTERS:
        value = data.get(name)
        if value in (None, "", []):
            continue
        if name == "rdma":
            ids: set[int] = set()
            for item in value:
                for fabric in PROVIDER_RDMA_CELLS.get(item, ()):
                    ids |= set(filters._providers_answering(fabric, ["yes"]))
                if item in ("none", "unknown"):
                    with_fabric = {pk for fabric in RDMA_FABRICS
                                   for pk in filters._providers_answering(fabric, ["yes"])}
                    unknown = {pk for fabric in RDMA_FABRICS
                               for pk in filters._providers_answering(fabric, ["unknown"])}
                    everyone = set(Provider.objects.values_list("pk", flat=True))
                    ids |= (everyone - with_fabric - unknown) if item == "none" else (unknown - with_fabric)
            providers = providers.filter(provider_id__in=sorted(ids))
        elif name in ("provider", "provider_kind", "control_plane_fee_max"):
            providers = filters.filters[name].filter(providers, value)
        else:
            providers = providers.filter(provider_id__in=filters._providers_answering(name, list(value)))
    return providers


def providers_without_prices(*, filters) -> list[Provider]:
    """Providers that meet a valid OfferFilterSet's provider questions but have no active offer at all: what an empty
    result names ("X meets these Kubernetes requirements; we have no prices for it yet"). Only when one of those
    filters is set; none otherwise."""
    data = filters.form.cleaned_data
    if not any(data.get(name) not in (None, "", []) for name in PROVIDER_FILTERS):
        return []
    return list(providers_matching(filters=filters).exclude(offers__is_active=True).order_by("name"))


PLACE_FILTERS = ("country", "continent", "region")


def priced_places(*, filters) -> list[tuple[str, list[tuple[str, int]]]]:
    """Where we hold prices of each provider a valid OfferFilterSet names, when it also asks for a place: what an
    empty result says ("we hold Azure prices only in US (94 offers)"), so a place missing from our data never reads
    as a provider not selling there. [(provider name in the active language, [(place, live offers), most first])]."""
    from django.utils.translation import gettext

    data = filters.form.cleaned_data
    if not data.get("provider") or not any(data.get(name) not in (None, "", []) for name in PLACE_FILTERS):
        return []
    places: dict[str, Counter] = defaultdict(Counter)  # provider name -> place -> live offers
    for name, name_zh, country, continent, n in (
            Offer.objects.filter(is_active=True, provider__slug__in=data["provider"])
            .values_list("provider__name", "provider__name_zh", "country", "continent")
            .annotate(n=Count("id")).order_by()):
        places[in_language(name, name_zh)][country or continent or gettext("place not known")] += n
    return [(name, sorted(counts.items(), key=lambda item: (-item[1], item[0])))
            for name, counts in sorted(places.items())]


# --- per-offer Kubernetes answers (providers.kubernetes, stored by kubernetes_profiles.offer_kubernetes_refresh) ---


@dataclass(frozen=True)
class OfferAnswer:
    """One derived Kubernetes answer about one offer's machine.

    `state` is one of "yes", "no", "unknown", "n/a", "not_on_this_machine" (the provider offers it, but not on this
    machine); `reason` is an English sentence; `sources` the URLs the rule used. The "rdma" answer also carries
    `fabric` (infiniband, roce, efa, gpudirect_tcpx, gpudirect_tcpxo, rdma_unspecified, none, unknown) and
    `efa_interfaces` (an EFA count or None); other answers have both None."""

    state: str
    reason: str
    sources: list[str] = field(default_factory=list)
    fabric: str | None = None
    efa_interfaces: int | None = None
    reason_zh: str = ""  # the same rule's sentence in Simplified Chinese (kubernetes_profiles.offer_kubernetes_refresh)
    inferred: bool = False  # it rests on an inferred cell or fact (the pages' "~")
    fabric_class: str | None = None  # rdma only: gpudirect_rdma, gpudirect_tcp, plain, unknown
    interfaces: int | None = None  # rdma only: the fabric's interface count, where stated
    bandwidth_gbps: float | None = None  # rdma only: the node's total fabric bandwidth (Gbit/s), where stated
    confidence: str = ""  # documented, third_party (the pages' "³") or inferred; blank when it cites no source
    verified_on: str | None = None  # ISO day: the oldest day one of its sources was checked (None: none dated)

    @property
    def fabric_class_label(self) -> str:
        from django.utils.translation import gettext

        from .kubernetes import FABRIC_CLASS_LABELS

        return gettext(FABRIC_CLASS_LABELS[self.fabric_class]) if self.fabric_class in FABRIC_CLASS_LABELS else ""

    @property
    def reason_shown(self) -> str:
        """The reason in the active language: the Chinese sentence on Chinese pages when there is one."""
        return in_language(self.reason, self.reason_zh)


NOT_DERIVED = "Not derived yet: the offer has not been through an ingest since its facts changed."


def kubernetes_answers_of(answers: dict | None) -> dict[str, OfferAnswer]:
    """Stored answers (KubernetesProfile.answers) as OfferAnswer per question, plus a "fabric" entry with the
    fabric as its state; every question unknown when nothing is stored."""
    from .kubernetes import INFERRED, QUESTIONS, UNKNOWN, answer_confidence

    answers = answers or {}
    result = {}
    for question in QUESTIONS:
        stored = answers.get(question)
        if stored is None:
            result[question] = OfferAnswer(UNKNOWN, NOT_DERIVED, [], *((UNKNOWN, None) if question == "rdma" else ()),
                                           **({"fabric_class": UNKNOWN} if question == "rdma" else {}))
            continue
        inferred = bool(stored.get("inferred"))
        result[question] = OfferAnswer(stored["answer"], stored["reason"], list(stored["sources"]),
                                       stored.get("fabric"), stored.get("efa_interfaces"), stored.get("reason_zh", ""),
                                       inferred, **({
                                           "fabric_class": stored.get("fabric_class", UNKNOWN),
                                           "interfaces": stored.get("interfaces", stored.get("efa_interfaces")),
                                           "bandwidth_gbps": stored.get("bandwidth_gbps")}
                                           if question == "rdma" else {}),
                                       confidence=stored.get("confidence") or answer_confidence(
                                           INFERRED if inferred else "", stored["sources"]),
                                       verified_on=stored.get("verified_on"))
    rdma = result["rdma"]
    result["fabric"] = OfferAnswer(rdma.fabric or UNKNOWN, rdma.reason, rdma.sources, rdma.fabric,
                                   rdma.efa_interfaces, rdma.reason_zh, rdma.inferred, rdma.fabric_class,
                                   rdma.interfaces, rdma.bandwidth_gbps, rdma.confidence, rdma.verified_on)
    return result


def offer_kubernetes_answers(*, offer_ids) -> dict[int, dict[str, OfferAnswer]]:
    """The stored Kubernetes answers of each of `offer_ids`, in one query: {offer_id: {question: OfferAnswer}}.

    Questions: managed_node, byo, mig, mps, time_slicing, vendor_sharing, rdma (with fabric and efa_interfaces),
    fabric, gpu_operator, node_autoscaling, scale_to_zero, spot_nodes, rwx_storage, gang_scheduling. An offer whose
    answers were never derived answers "unknown" everywhere; an id that is no offer is absent.

    Offers of one machine type share a profile: each profile's answers are read and built once (two queries), and
    its offers share that one read-only dict."""
    profile_of = dict(Offer.objects.filter(id__in=list(offer_ids)).values_list("id", "kubernetes_profile_id"))
    stored = dict(KubernetesProfile.objects.filter(id__in={pk for pk in profile_of.values() if pk is not None})
                  .values_list("id", "answers"))
    built = {profile_id: kubernetes_answers_of(answers) for profile_id, answers in stored.items()}
    never_derived = kubernetes_answers_of(None)
    return {offer_id: built.get(profile_id, never_derived) for offer_id, profile_id in profile_of.items()}



def offer_places(*, provider: Provider) -> list[tuple[str, int]]:
    """(continent code, how many regions) where the provider's active offers are, most regions first: where our
    sources list its machines, which is not all the provider sells (a catalog may cover some regions only)."""
    rows = (Offer.objects.filter(provider=provider, is_active=True).exclude(continent="").order_by()
            .values("continent").annotate(regions=Count("region", distinct=True)))
    return sorted(((row["continent"], row["regions"]) for row in rows), key=lambda item: (-item[1], item[0]))
