"""A source's row as the offer we store: checked (`offer_problem`: a row that cannot be stored is refused alone,
with the reason) and normalised (`OfferNormaliser`: GPU model, place and whether the provider confirms it, USD
prices, the price's date, SKU facts, memory as sold) into the tuple of OFFER_FIELDS values that providers.ingest
compares with the stored offer and writes. Per row, no queries: what a run needs is read once when it starts."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import TYPE_CHECKING

from django.utils import timezone

from scrapers.base import ScrapedOffer
from scrapers.normalize import (
    GpuResolver,
    form_factor_in,
    per_gpu,
    quantize_money,
    region_geography,
    sku_facts,
    to_usd,
)

from . import pricing
from .models import Availability, DataSource

if TYPE_CHECKING:
    from .ingest import SyncCounts

OFFER_FIELDS = (
    "provider_id", "country", "continent", "region_confirmed", "gpu_id", "gpu_name", "gpu_count", "gpu_memory_gb",
    "vcpus", "ram_gb",
    "currency", "price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd", "price_per_gpu_hour_usd",
    "spot_price_per_gpu_hour_usd", "availability", "available_count", "is_active", "price_as_of", "price_dated_by",
    "price_source_url",
    "gpu_fraction", "form_factor", "efa_interfaces", "spot_savings_pct", "spot_interruption", "spot_as_of",
    "gpu_memory_usable_gb",
    "commit_1y_price_hour_usd", "commit_1y_price_per_gpu_hour_usd", "commit_3y_price_hour_usd",
    "commit_3y_price_per_gpu_hour_usd", "commitment_as_of", "commitment_source_url",
)
# Row limits of the Offer columns: a value past them would make PostgreSQL refuse the whole batch, so such a row is
# refused alone instead (max_digits minus decimal_places, as powers of ten).
OFFER_LIMITS = {
    "gpu_count": Decimal(10) ** 3, "gpu_memory_gb": Decimal(10) ** 7, "vcpus": Decimal(10) ** 5,
    "ram_gb": Decimal(10) ** 7, "price_hour": Decimal(10) ** 7, "spot_price_hour": Decimal(10) ** 7,
    "commit_1y_price_hour": Decimal(10) ** 7, "commit_3y_price_hour": Decimal(10) ** 7,
}
AVAILABILITIES = {choice.value for choice in Availability}
FORM_FACTORS = {"", "sxm", "pcie", "nvl"}


def default_as_of(source: DataSource, recorded_on: date | None = None) -> datetime | None:
    """The date of rows that state none: the day a replayed recording was captured (`recorded_on`), else the
    source's stated as-of date, else None. A live answer with no stated date is as fresh as the run that read it,
    which `last_seen` and the source's `last_success_at` already say (storing the fetch time here would rewrite
    every offer on every run); a replayed recording whose capture day is not known has none, so "seen within the
    last hour" never matches a replay (OfferFilterSet.filter_seen_within)."""
    as_of = recorded_on or source.as_of
    if isinstance(as_of, str):  # as source_register set it, before a reload
        as_of = date.fromisoformat(as_of) if as_of else None
    if as_of:
        return datetime.combine(as_of, time.min, tzinfo=UTC)
    return None


def offer_problem(scraped: ScrapedOffer) -> str | None:
    """Why a row cannot be stored as it is, or None. Checked before anything is written."""
    # A blank region is allowed: it means the source ties the price to no region (RunPod prices are the same
    # everywhere; Linode's type list does not say where a GPU plan is sold). Pages show it as "not stated".
    for name, limit in (("instance_type", 120), ("region", 120)):
        value = getattr(scraped, name)
        if not isinstance(value, str) or (name == "instance_type" and not value.strip()):
            return f"{name} is blank"
        if len(value) > limit:
            return f"{name} is longer than {limit} characters"
    if not isinstance(scraped.currency, str) or len(scraped.currency) != 3 or not scraped.currency.isalpha():
        return f"currency {scraped.currency!r} is not an ISO 4217 code"
    if scraped.availability not in AVAILABILITIES:
        return f"availability {scraped.availability!r} must be one of {sorted(AVAILABILITIES)}"
    if scraped.available_count is not None and not 0 <= scraped.available_count < 2**31:
        return f"available_count {scraped.available_count!r} is out of range"
    for name, limit in OFFER_LIMITS.items():
        value = getattr(scraped, name)
        if value is not None and not (value.is_finite() and -limit < value < limit):
            return f"{name} {value} is out of range"
    if scraped.gpu_fraction is not None and not (0 < scraped.gpu_fraction < 1):
        return f"gpu_fraction {scraped.gpu_fraction} must be a share of one GPU, between 0 and 1"
    if scraped.form_factor not in FORM_FACTORS:
        return f"form_factor {scraped.form_factor!r} must be one of {sorted(FORM_FACTORS)}"
    if scraped.efa_interfaces is not None and not 0 <= scraped.efa_interfaces < 2**15:
        return f"efa_interfaces {scraped.efa_interfaces!r} is out of range"
    if scraped.spot_savings_pct is not None and not 0 <= scraped.spot_savings_pct <= 100:
        return f"spot_savings_pct {scraped.spot_savings_pct!r} is not a percentage"
    if len(scraped.spot_interruption) > 12 or max(len(scraped.price_source_url),
                                                 len(scraped.commitment_source_url)) > 500:
        return "spot_interruption, price_source_url or commitment_source_url too long"
    return None


def memory_fixed(spec, family_sizes: set) -> bool:
    """Whether a catalog entry's memory holds for every machine it resolves: its form factor is named, its family
    has one memory size (the A10G, the H200, a TPU chip), or every name it answers to states the memory ("V100
    32GB", "A100-80GB"); not a bare "V100" (16 or 32 GB) or "H100" (80 GB, or 94 as the NVL)."""
    if spec.form_factor != "unspecified" or len(family_sizes) == 1:
        return True
    size = re.compile(rf"(?<![\d.]){spec.memory_gb:g}\s*GB?\b", re.IGNORECASE)
    return all(size.search(name) for name in (spec.slug, spec.name, *spec.aliases))


class OfferNormaliser:
    """Turns a ScrapedOffer into the tuple of OFFER_FIELDS values stored for it.

    GPU names and regions repeat across thousands of rows, so their lookups are memoised per run.
    """

    def __init__(self, *, source: DataSource, resolver: GpuResolver, gpu_ids: dict[str, int],
                 rates: dict[str, Decimal], as_of: datetime | None = None, today: date | None = None):
        self.source = source
        # Whether this source's regions are the provider's word (else a catalog's copy: providers/pricing.py).
        self.regions_confirmed = pricing.regions_confirmed(source.slug, source.kind)
        # The day retirements are judged on (a type retired on or before it is not live).
        self.today = today or timezone.now().date()
        # The data's date for rows that state none (see offers_sync).
        self.as_of = as_of
        self.sku = sku_facts(source.provider.slug)
        self.resolver = resolver
        self.gpu_ids = gpu_ids
        self.rates = rates
        self._gpus: dict[tuple[str, Decimal | None, str], str | None] = {}
        self._places: dict[str, tuple[str, str]] = {}
        # GPU counts the instance-type layer states from the SKU (providers/data/instance_types): they win over a
        # catalog row's count (SkyPilot's Azure rows give the 8-GPU ND96isr_H100_v5 12 GPUs).
        from . import kubernetes as k8s
        from .models import InstanceTypeFact

        # Likewise the form factor the SKU's fact states, where the source and the names state none.
        self._sku_facts = [k8s.Fact(**fact) for fact in InstanceTypeFact.objects.filter(
            provider_id=source.provider_id, key__in=["gpu_count", "form_factor"]).values(
            "pattern", "key", "value", "number", "source_url", "confidence", "origin")]
        self._sku_counts: dict[str, Decimal | None] = {}
        self._sku_forms: dict[str, str] = {}
        # Read once: a model attribute costs a descriptor call per row, and names repeat across regions.
        self._provider_id = source.provider_id
        self._provider_slug = source.provider.slug
        # Whether each catalog entry's memory holds for every machine it resolves (memory_fixed).
        family_memory: dict[str, set] = {}
        for spec in resolver.specs.values():
            family_memory.setdefault(spec.family, set()).add(spec.memory_gb)
        self._memory_fixed = {slug: memory_fixed(spec, family_memory[spec.family])
                              for slug, spec in resolver.specs.items()}
        self._forms: dict[tuple[str, str], str] = {}

    def sku_gpu_count(self, instance_type: str) -> Decimal | None:
        if not self._sku_facts:
            return None
        if instance_type not in self._sku_counts:
            from . import kubernetes as k8s

            fact = k8s.facts_for(instance_type, self._sku_facts).get("gpu_count")
            self._sku_counts[instance_type] = fact.number if fact is not None else None
        return self._sku_counts[instance_type]

    def sku_form_factor(self, instance_type: str) -> str:
        """The instance fact's form factor when it is one an offer stores (sxm, pcie, nvl), else ""."""
        if not self._sku_facts:
            return ""
        if instance_type not in self._sku_forms:
            from . import kubernetes as k8s

            fact = k8s.facts_for(instance_type, self._sku_facts).get("form_factor")
            self._sku_forms[instance_type] = fact.value if fact is not None and fact.value in FORM_FACTORS else ""
        return self._sku_forms[instance_type]

    def values(self, scraped: ScrapedOffer, counts: SyncCounts) -> tuple:
        scraped = self.checked(scraped, counts)
        # The form factor the source states, else the one the instance or GPU name spells (gpu_8x_h100_sxm5).
        form = scraped.form_factor
        if not form:
            names = (scraped.instance_type, scraped.gpu_name)
            form = self._forms.get(names)
            if form is None:
                form = self._forms[names] = form_factor_in(*names)
            form = form or self.sku_form_factor(scraped.instance_type)
        # A slice of a GPU reports the slice's memory; the model is named by a whole one's.
        memory_of_one = scraped.gpu_memory_gb
        if memory_of_one is not None and scraped.gpu_fraction:
            memory_of_one = memory_of_one / scraped.gpu_fraction
        gpu_key = (scraped.gpu_name, memory_of_one, form)
        if gpu_key not in self._gpus:
            self._gpus[gpu_key] = self.resolver.resolve(scraped.gpu_name, memory_of_one, form)
        slug = self._gpus[gpu_key]
        if slug is None:
            known_name = memory_of_one is not None and self.resolver.resolve(scraped.gpu_name) is not None
            # "RTX4090" is known, an RTX 4090 with 48 GB is not: say which memory made it unknown.
            counts.unknown_gpus[f"{scraped.gpu_name} ({memory_of_one:g} GB)" if known_name
                                else scraped.gpu_name] += 1
        elif not form and self.resolver.specs[slug].form_factor.lower() in FORM_FACTORS:
            form = self.resolver.specs[slug].form_factor.lower()  # the catalog entry is one form factor
        place = self._places.get(scraped.region)
        if place is None:
            geography = region_geography(self.source.provider.slug, scraped.region)
            place = self._places[scraped.region] = (geography.country, geography.continent)
        price_usd = to_usd(scraped.price_hour, scraped.currency, self.rates)
        spot_usd = to_usd(scraped.spot_price_hour, scraped.currency, self.rates)
        commit_1y_usd = to_usd(scraped.commit_1y_price_hour, scraped.currency, self.rates)
        commit_3y_usd = to_usd(scraped.commit_3y_price_hour, scraped.currency, self.rates)
        exact_count = self.sku_gpu_count(scraped.instance_type) or scraped.gpu_count
        gpu_count = exact_count.quantize(Decimal("0.001"))
        spec = self.resolver.specs[slug] if slug is not None else None
        fixed = slug is not None and self._memory_fixed[slug]
        memory, usable = pricing.memory_as_sold(scraped.gpu_memory_gb, spec, scraped.gpu_fraction,
                                                variant_unknown=spec is not None and not fixed)
        if memory is None and fixed:
            # The source names the GPU but not its memory (Azure's catalog rows, a TPU chip): the catalog entry knows
            # it, unless the entry stands for variants that differ in memory (a bare "V100": 16 or 32 GB).
            memory = spec.memory_gb
        # The order is OFFER_FIELDS'.
        return (
            self._provider_id,
            place[0],
            place[1],
            self.regions_confirmed,
            self.gpu_ids.get(slug) if slug else None,
            scraped.gpu_name[:100],
            gpu_count,
            _q(memory, "0.1"),
            _q(scraped.vcpus, "0.01"),
            _q(scraped.ram_gb, "0.01"),
            scraped.currency,
            quantize_money(scraped.price_hour),
            quantize_money(scraped.spot_price_hour),
            price_usd,
            spot_usd,
            per_gpu(price_usd, exact_count),
            per_gpu(spot_usd, exact_count),
            scraped.availability,
            scraped.available_count,
            # A retired type leaves the live list; its row and history are kept (providers/data/retirements.toml).
            not pricing.is_retired(self._provider_slug, scraped.instance_type, self.today),
            *pricing.price_date(slug=self.source.slug, stated=scraped.price_as_of or self.as_of,
                                instance_type=scraped.instance_type, gpu_name=scraped.gpu_name,
                                price_hour=scraped.price_hour, gpu_count=exact_count, region=scraped.region),
            scraped.price_source_url[:500],
            _q(scraped.gpu_fraction, "0.0001"),
            form,
            scraped.efa_interfaces,
            scraped.spot_savings_pct,
            scraped.spot_interruption,
            scraped.spot_as_of,
            _q(usable, "0.1"),
            commit_1y_usd,
            per_gpu(commit_1y_usd, exact_count),
            commit_3y_usd,
            per_gpu(commit_3y_usd, exact_count),
            scraped.commitment_as_of if commit_1y_usd is not None or commit_3y_usd is not None else None,
            (scraped.commitment_source_url[:500] or None) if commit_1y_usd is not None or commit_3y_usd is not None
            else None,
        )


    def checked(self, scraped: ScrapedOffer, counts: SyncCounts) -> ScrapedOffer:
        """The sanity rules every row passes, each correction counted and its reason kept on the run:
        - the GPU count (and share of one GPU) of a size whose provider documents it is the documented one
          (SkyPilot's Azure catalog counts 12 GPUs in Standard_ND96isr_H100_v5; Microsoft's page says 8);
        - a spot price not below the on-demand price is not a spot price (a source that filled the column with
          the on-demand price; gpuhunt's TPU table, whose "spot" for TPU v2, v3 and v4 is 2-32% above on-demand);
        - a commitment price not below the on-demand price is not a commitment's discount (Google's price table
          writes the monthly on-demand price where it finds no commitment SKU), nor a 3-year one not below the
          1-year one."""
        where = f"offer {scraped.instance_type!r} in {scraped.region!r}"
        facts = self.sku.get(scraped.instance_type)
        if facts is not None and (scraped.gpu_count, scraped.gpu_fraction) != (facts.gpu_count, facts.gpu_fraction):
            counts.corrected += 1
            counts.note(f"{where}: GPU count {scraped.gpu_count:g} corrected to {facts.gpu_count:g}, as the size's "
                        f"own page states ({facts.source_url})")
            scraped = replace(scraped, gpu_count=facts.gpu_count, gpu_fraction=facts.gpu_fraction)
        if (scraped.spot_price_hour is not None and scraped.price_hour is not None
                and scraped.spot_price_hour >= scraped.price_hour):
            counts.corrected += 1
            counts.note(f"{where}: spot price {scraped.spot_price_hour} is not below the on-demand price "
                        f"{scraped.price_hour}: not a spot price, left out")
            scraped = replace(scraped, spot_price_hour=None)
        for name, ceiling in (("commit_1y_price_hour", scraped.price_hour),
                              ("commit_3y_price_hour", scraped.commit_1y_price_hour or scraped.price_hour)):
            value = getattr(scraped, name)
            if value is not None and (value <= 0 or (ceiling is not None and value >= ceiling)):
                counts.corrected += 1
                counts.note(f"{where}: {name.removesuffix('_price_hour').replace('commit_', '')} commitment price "
                            f"{value} is not below {ceiling}: not a commitment price, left out")
                scraped = replace(scraped, **{name: None})
        return scraped


def _q(value: Decimal | None, places: str) -> Decimal | None:
    return None if value is None else value.quantize(Decimal(places))
