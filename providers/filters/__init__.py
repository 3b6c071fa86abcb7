"""OfferFilterSet: the one definition of how offers are filtered and ordered, shared by the HTML pages, the REST API
and the weekly digest's saved filters (NetBox-style: one FilterSet, many consumers).

Every parameter validates its input: an unknown GPU or provider slug, a negative price or a word where a number
belongs makes the form invalid, and the API turns that into a 400 naming the parameter. Multi-valued parameters
accept repeated keys (`gpu=h100&gpu=a100`, what an HTML form sends) and comma-separated lists (`gpu=h100,a100`).

Kubernetes filters ask the OFFER's stored answer (providers.kubernetes, stored per machine by
kubernetes_profiles.offer_kubernetes_refresh), never the provider's alone: `mig=yes` keeps offers whose machine gets
MIG (the provider supports it on its managed Kubernetes, the GPU has MIG profiles, the type is a managed node with whole
GPUs); `mig=not_on_this_machine` those where the provider offers it but this machine does not get it;
`mig=unknown` those missing a fact (an unknown never counts as yes). `offering=managed` keeps machines that can be
managed-Kubernetes nodes, `rdma=any` machines with GPUDirect RDMA between nodes, `rdma=efa` EFA ones with it. With
`documented_only=true` an answer resting on an inferred cell or fact counts as unknown. Node-software filters
(`cuda`, `k8s_version`, `dra`, `stack`) ask nodesoftware/ (docs/node-software.md; providers.filters.nodesoftware). What
the `unknown` parameter does with an answer a filter cannot decide: providers.filters.unknown.

Yes/no parameters accept true/false, 1/0, yes/no, on/off (an HTML checkbox sends `on`); anything else is an error
rather than silently "no filter". Numbers are bounded (`1e400` is refused here instead of overflowing the database's
numeric type) and rounded to the precision the column stores (`1e-400` is 0).
"""

from __future__ import annotations

import copy
from datetime import timedelta
from decimal import Decimal

import django_filters as filters
from django import forms
from django.db.models import Count, F, Q, QuerySet, Window
from django.db.models.functions import RowNumber
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django_filters.constants import EMPTY_VALUES

from nodesoftware import stacks as node_stacks
from scrapers.normalize import GLOBAL, to_usd

from .. import pricing
from ..capabilities import NOT_APPLICABLE, QUESTIONS, UNKNOWN, VALUE_LABELS
from ..kubernetes import NOT_HERE as NOT_ON_THIS_MACHINE
from ..models import (
    Capability,
    Confidence,
    ExchangeRate,
    GpuModel,
    GpuVendor,
    Offer,
    Provider,
    ProviderKind,
    in_language,
)
from ..versions import remembered
from .fabric import RDMA_CHOICES, RDMA_TERMS, RDMA_UNKNOWN_TERMS
from .fields import (
    AcceptedChoiceField,
    CatalogChoiceField,
    CommaMultipleChoiceField,
    CountryListField,
    CudaVersionField,
    NoEmptyItemsCSVField,
    OfferFilterForm,
    RdmaChoiceField,
    RoundedDecimalField,
    StrictBooleanField,
    StrictBooleanSelect,
    VersionField,
)
from .nodesoftware import NodeSoftwareFilters
from .unknown import UNKNOWN_CHOICES, UnknownConditions

CONTINENTS = [
    ("AF", _("Africa")), ("AS", _("Asia")), ("EU", _("Europe")), ("NA", _("North America")),
    ("OC", _("Oceania")), ("SA", _("South America")),
    (GLOBAL, _("Global: the price names no region")),
]
YES_NO_CHOICES = [("yes", _("yes")), ("no", _("no")), (NOT_APPLICABLE, _("not applicable")),
                  (NOT_ON_THIS_MACHINE, _("offered, but not on this machine")), (UNKNOWN, _("unknown"))]
OFFERING_CHOICES = [(value, VALUE_LABELS[value]) for value in ("managed", "byo", "none", UNKNOWN)]
# Capability questions filterable as yes/no/n-a/unknown, in the order forms show them.
BOOLEAN_CAPABILITIES = ("mig", "mps", "time_slicing", "vendor_sharing", "node_autoscaling", "scale_to_zero",
                        "spot_nodes", "rwx_storage", "gang_scheduling")



def shallow_copy(thing):
    """copy.copy for a plain object (a filter, a form field, a widget): a new instance with the same attributes, made
    directly instead of through the pickle protocol that copy.copy goes through (a fifth of the time, for the ~150
    copies each request makes)."""
    clone = object.__new__(type(thing))
    clone.__dict__.update(thing.__dict__)
    return clone


class CopiedCheaply:
    """django-filter deep-copies every filter of the FilterSet for every request: with Python's generic deepcopy, 40
    filters cost more than a page's database queries. A filter's settings (`extra`, choices, labels) are never
    changed once the class is built, so each copy needs only its own attributes (`parent`, `model`, the form field
    it builds lazily and, for a `method=` filter, the FilterMethod that calls back into its own copy)."""

    def __deepcopy__(self, memo):
        clone = shallow_copy(self)
        clone.__dict__.pop("_field", None)
        if self.method is not None:
            clone.method = self.method  # a new FilterMethod bound to the clone, not to this filter
        return clone


class FieldsCopiedCheaply(dict):
    """A form class's fields, copied for each form the way the FilterSet uses them.

    Django deep-copies every field of a form for every instance, so that one request may change its form's fields
    without touching the class's; for this form's 32 fields that was the largest part of an unfiltered API request
    (their choice lists, lazy labels and enums copied one by one). Nothing changes a field in place here: a page
    may assign new choices or attributes to its copy, which rebinds them on the copy and its own widget. So each
    form gets a copy of each field and of its widget (with its own attrs), sharing the rest."""

    def __deepcopy__(self, memo):
        copies = {}
        for name, field in self.items():
            clone = shallow_copy(field)
            clone.widget = shallow_copy(field.widget)
            clone.widget.attrs = dict(field.widget.attrs)
            copies[name] = clone
        return copies


class MultipleChoice(CopiedCheaply, filters.MultipleChoiceFilter):
    """Every such filter compares a column of the offer or of a forward relation (or runs a method), so it cannot
    duplicate rows: no DISTINCT, which would otherwise compare every selected column of every row."""

    field_class = CommaMultipleChoiceField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("distinct", False)
        super().__init__(*args, **kwargs)


class RdmaChoice(MultipleChoice):
    field_class = RdmaChoiceField


class RelatedChoice(MultipleChoice):
    """A choice on a column of a small related table (`gpu__slug`, `provider__kind`), applied as `gpu_id IN (ids)`.

    The matching ids are read first (the GPU catalog and the provider list are a few dozen rows), so the offer query
    filters its own foreign key with a literal list: the planner then estimates the selectivity from the offer
    table's statistics and uses the (gpu | provider, price, id) indexes, where a join on `slug IN (...)` hid it and
    led to scanning the price index or the whole table. Same rows: both keep offers whose related row matches."""

    def filter(self, qs, value):
        if not value:
            return qs
        relation, column = self.field_name.split("__")
        related = Offer._meta.get_field(relation).related_model

        def read() -> dict[str, list[int]]:
            ids_by_value: dict[str, list[int]] = {}
            for pk, key in related.objects.values_list("pk", column):
                ids_by_value.setdefault(key, []).append(pk)
            return ids_by_value

        # The whole small table's value -> ids, kept per data version: every request asks other values of it.
        ids_by_value = remembered(f"ids:{self.field_name}", read)
        ids = sorted(pk for key in set(value) for pk in ids_by_value.get(key, ()))
        self.parent.resolve(f"{relation}_id", ids)
        return qs.filter(**{f"{relation}_id__any": ids})


class BooleanFilter(CopiedCheaply, filters.BooleanFilter):
    field_class = StrictBooleanField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", StrictBooleanSelect)
        super().__init__(*args, **kwargs)


# Upper bounds far above any real offer; they exist so that absurd input is a 400, not a database error.
MAX_PRICE = 1_000_000
MAX_GPUS = 10_000
MAX_GPU_MEMORY_GB = 100_000


class Choice(CopiedCheaply, filters.ChoiceFilter):
    field_class = AcceptedChoiceField


class NumberFilter(CopiedCheaply, filters.NumberFilter):
    field_class = RoundedDecimalField

    def get_max_validator(self):
        """django-filter's overflow guard (1e50) only where the filter states no tighter max_value: `1e999` is one
        error naming the limit, not two limits at once."""
        return None if self.extra.get("max_value") is not None else super().get_max_validator()


class CharFilter(CopiedCheaply, filters.CharFilter):
    pass


class VersionFilter(CopiedCheaply, filters.Filter):
    field_class = VersionField


class CudaVersionFilter(VersionFilter):
    field_class = CudaVersionField


def number(**kwargs) -> filters.NumberFilter:
    """A NumberFilter whose digits fit the column it compares with (see the module docstring)."""
    kwargs.setdefault("min_value", 0)
    return NumberFilter(**kwargs)


class CountryFilter(CopiedCheaply, filters.Filter):
    field_class = CountryListField


def gpu_choices():
    return remembered("choices:gpu", lambda: list(GpuModel.objects.order_by("slug").values_list("slug", "name")))


def gpu_family_choices():
    def read():
        families = GpuModel.objects.order_by("family").values_list("family", flat=True).distinct()
        return [(family, family) for family in families]

    return remembered("choices:gpu_family", read)


def _provider_rows() -> list[tuple[str, str, str, int]]:
    return remembered("choices:provider", lambda: list(
        Provider.objects.order_by("name").values_list("slug", "name", "name_zh", "id")))


def provider_choices():
    """(slug, name) of every provider, the name in the active language (its Chinese name on Chinese pages)."""
    return [(slug, in_language(name, name_zh)) for slug, name, name_zh, _id in _provider_rows()]


def provider_slugs() -> dict[int, str]:
    """Every provider's id -> slug (read with provider_choices)."""
    return {provider_id: slug for slug, _name, _name_zh, provider_id in _provider_rows()}


class NullsLastOrderingFilter(CopiedCheaply, filters.OrderingFilter):
    """Orders with unknown values (no price, no memory) last either way; ties are broken by the price per GPU-hour,
    cheapest first (the offers of one provider, GPU count, memory or scrape run list their cheapest first), then by
    id so pages are stable. An ordering by a price already (per GPU-hour or per instance-hour, which the price
    indexes serve, see offer_reads.RANGE_INDEXED) gets only the id."""

    base_field_class = NoEmptyItemsCSVField
    PRICES = frozenset({"price_per_gpu_hour", "price_hour"})
    TIEBREAK = "price_per_gpu_hour_usd"

    def get_ordering_value(self, param):
        descending = param.startswith("-")
        field = self.param_map[param.lstrip("-")]
        return F(field).desc(nulls_last=True) if descending else F(field).asc(nulls_last=True)

    def filter(self, qs, value):
        if not value:
            return qs
        terms = [self.get_ordering_value(param) for param in value]
        if not any(param.lstrip("-") in self.PRICES for param in value):
            terms.append(F(self.TIEBREAK).asc(nulls_last=True))
        return qs.order_by(*terms, "id")


class CatalogChoice(RelatedChoice):
    """A RelatedChoice on catalog values (GPU model and provider slugs, GPU families), read in any case."""

    field_class = CatalogChoiceField


class OfferFilterSet(UnknownConditions, NodeSoftwareFilters, filters.FilterSet):
    gpu = CatalogChoice(field_name="gpu__slug", choices=gpu_choices, label=_("GPU model"))
    gpu_family = CatalogChoice(field_name="gpu__family", choices=gpu_family_choices, label=_("GPU family"))
    vendor = RelatedChoice(field_name="gpu__vendor", choices=GpuVendor.choices, label=_("GPU vendor"))
    gpu_count_min = number(field_name="gpu_count", lookup_expr="gte", max_value=MAX_GPUS, decimal_places=3,
                           label=_("Minimum GPUs per instance"))
    gpu_count_max = number(field_name="gpu_count", lookup_expr="lte", max_value=MAX_GPUS, decimal_places=3,
                           label=_("Maximum GPUs per instance"))
    gpu_memory_min = number(field_name="gpu_memory_gb", method="filter_stated_minimum", max_value=MAX_GPU_MEMORY_GB,
                            decimal_places=1, label=_("Minimum memory per GPU (GB)"))
    # A machine sold on request has no price: unknown against a ceiling, left out and counted (filters/unknown.py).
    price_per_gpu_hour_max = number(field_name="price_per_gpu_hour_usd", method="filter_stated_maximum",
                                    max_value=MAX_PRICE, decimal_places=5, label=_("Maximum USD per GPU-hour"))
    price_hour_max = number(field_name="price_hour_usd", method="filter_stated_maximum", max_value=MAX_PRICE,
                            decimal_places=5, label=_("Maximum USD per instance-hour"))
    form_factor = MultipleChoice(method="filter_form_factor", choices=[("sxm", "SXM"), ("pcie", "PCIe"),
                                                                        ("nvl", "NVL")], label=_("GPU form factor"))
    spot = BooleanFilter(method="filter_spot", label=_("Spot price available"))
    commitment = Choice(method="filter_commitment", choices=pricing.COMMITMENT_TERMS, label=_("Commitment price"))
    available = BooleanFilter(method="filter_available", label=_("Available now (where reported)"))
    in_stock_7d_min = number(method="filter_in_stock_7d", max_value=100, decimal_places=2,
                             label=_("In stock in at least N percent of checks in the last 7 days"))
    provider = CatalogChoice(field_name="provider__slug", choices=provider_choices, label=_("Provider"))
    provider_kind = RelatedChoice(field_name="provider__kind", choices=ProviderKind.choices,
                                   label=_("Provider kind"))
    # The place filters keep offers whose region the provider confirms; those a third-party catalog only copied there
    # are left out and counted like unknown answers (filter_place).
    country = CountryFilter(field_name="country", method="filter_place",
                            label=_("Country (ISO codes, comma-separated)"))
    continent = MultipleChoice(field_name="continent", method="filter_place", choices=CONTINENTS,
                               label=_("Continent"))
    # At most the column's length: a longer value matches nothing, and SQLite refuses a LIKE pattern over 50,000 bytes.
    region = CharFilter(field_name="region", method="filter_place", max_length=120, label=_("Region id"))
    search = CharFilter(method="filter_search", max_length=200,
                        label=_("Search instance type, GPU and region (words, all must match)"))
    offering = MultipleChoice(method="filter_offering", choices=OFFERING_CHOICES, label=_("Kubernetes offering"))
    gpu_operator = MultipleChoice(method="filter_gpu_operator",
                                  choices=[(v, VALUE_LABELS[v]) for v in QUESTIONS["gpu_operator"].values
                                           if v != NOT_APPLICABLE],
                                  label=_("GPU driver / Operator"))
    rdma = RdmaChoice(method="filter_rdma", choices=RDMA_CHOICES, label=_("Fabric between nodes"))
    control_plane_fee_max = number(method="filter_fee", max_value=MAX_PRICE, decimal_places=4,
                                   label=_("Maximum control-plane fee (USD per cluster-hour)"))
    documented_only = BooleanFilter(method="filter_noop", label=_("Count only documented capabilities"))
    unknown = Choice(method="filter_noop", choices=UNKNOWN_CHOICES, label=_("Offers whose answer is unknown"),
                     help_text=_("exclude (the default): every filter leaves out offers it cannot decide, and the "
                                 "response says how many per provider; include: they come back, marked unknown"))
    seen_within_hours = number(method="filter_seen_within", max_value=24 * 365, decimal_places=3,
                               label=_("Price dated within the last N hours"),
                               help_text=_("Keeps prices whose source dates them (or a live run read them) within "
                                           "N hours; 8760 keeps a year. An undated price is unknown: left out and "
                                           "counted, or listed when unknown answers are included."))
    include_inactive = BooleanFilter(method="filter_noop", label=_("Include offers no longer listed"))
    one_per_machine = BooleanFilter(
        method="filter_noop", label=_("One row per machine type (its cheapest region)"),
        help_text=_("Of the offers that match, only the cheapest region of each provider's instance type and GPU "
                    "count (cheapest per GPU-hour, then lowest id); the others are counted as its other regions"))
    # --- node software (nodesoftware/): what the provider's default GPU node image runs ---------------------------
    cuda = CudaVersionFilter(method="filter_cuda", max_length=20, label=_("Runs a CUDA image of version (e.g. 12.8)"),
                         help_text=_("Offers whose provider's default managed GPU node image has a driver that runs "
                                     "this CUDA version on this GPU (NVIDIA's compatibility rules)"))
    k8s_version = VersionFilter(method="filter_k8s_version", max_length=20,
                                label=_("Kubernetes version offered (e.g. 1.35)"))
    dra = MultipleChoice(method="filter_dra", choices=[("yes", _("yes")), ("partial", _("partial")),
                                                       (UNKNOWN, _("unknown"))],
                         label=_("Dynamic Resource Allocation (DRA) for GPUs"))
    stack = MultipleChoice(method="filter_stack",
                           choices=[(family, node_stacks.FAMILY_NAMES[family]) for family in node_stacks.FAMILIES],
                           label=_("Training stack (provider-managed or provider-documented)"))
    ordering = NullsLastOrderingFilter(
        fields=(
            ("price_per_gpu_hour_usd", "price_per_gpu_hour"),
            ("price_hour_usd", "price_hour"),
            ("spot_price_per_gpu_hour_usd", "spot_price_per_gpu_hour"),
            *((f"commit_{term}_price_per_gpu_hour_usd", f"commit_{term}_price_per_gpu_hour") for term in ("1y", "3y")),
            ("gpu_memory_gb", "gpu_memory"),
            ("gpu_count", "gpu_count"),
            ("provider__name", "provider"),
            ("last_seen", "last_seen"),
        ),
        label=_("Order by"),
    )

    class Meta:
        model = Offer
        fields: list[str] = []
        form = OfferFilterForm

    def __init__(self, data=None, queryset=None, *, request=None, prefix=None):
        # Offers to read come from the selectors, which apply these filters to their own querysets
        # (offer_reads.offers_filtered, offer_page, offer_count): the FilterSet validates and filters, it never reads.
        super().__init__(data, Offer.objects.all() if queryset is None else queryset, request=request, prefix=prefix)

    # --- the form ---------------------------------------------------------------------------------------------

    _form_class = None

    def get_form_class(self):
        """The form class, built once per FilterSet class instead of per request (django-filter's default builds a
        new class with new fields every time: a few milliseconds of a page's time).

        Safe to share: every form instance deep-copies the class's fields (Django's BaseForm), and choices read from
        the database (GPU and provider slugs) stay callables evaluated per form."""
        cls = type(self)
        if cls.__dict__.get("_form_class") is None:
            fields = {}
            for name, filter_ in self.base_filters.items():
                filter_ = copy.deepcopy(filter_)
                filter_.model = self._meta.model
                fields[name] = filter_.field
            form_class = type(f"{cls.__name__}Form", (self._meta.form,), cls.present_fields(fields))
            form_class.base_fields = FieldsCopiedCheaply(form_class.base_fields)
            cls._form_class = form_class
        return cls._form_class

    @classmethod
    def present_fields(cls, fields: dict[str, forms.Field]) -> dict[str, forms.Field]:
        """Called once per class with the form's fields: a subclass may change how they are shown (widgets,
        labels), never what they accept. The API shows none of it."""
        return fields

    # --- the queryset ------------------------------------------------------------------------------------------

    @property
    def bare_qs(self) -> QuerySet[Offer]:
        """The matching offers on the bare offer table (no joins, no annotation), ordered; what counts and pages of
        ids read (offer_reads.offer_count, offer_ids). Built once per FilterSet, like `qs`, so the slugs and capability
        answers the filters resolve to ids are read once however many times it is used."""
        if not hasattr(self, "_bare_qs"):
            self._bare_qs = self.filter_queryset(Offer.objects.all())
        return self._bare_qs

    def filter_queryset(self, queryset, *, machines: bool = True):
        """The filters applied to `queryset`, ordered; with `one_per_machine` set (and `machines`), one offer per
        machine (one_per_machine)."""
        if not self.form.cleaned_data.get("include_inactive"):
            queryset = queryset.filter(is_active=True)
        queryset, conditions = self._filtered(queryset)
        strict, loose = self._conditions(conditions)
        if strict is not None:
            queryset = queryset.filter(loose if self.include_unknown else strict)
        if not self.form.cleaned_data.get("ordering"):
            queryset = queryset.order_by(F("price_per_gpu_hour_usd").asc(nulls_last=True), "id")
        if machines and self.form.cleaned_data.get("one_per_machine"):
            queryset = one_per_machine(queryset)
        return queryset

    # --- methods -----------------------------------------------------------------------------------------------

    @property
    def resolved_ids(self) -> dict[str, list[int | None]]:
        """The `gpu_id`, `provider_id` and `kubernetes_profile_id` lists the filters resolved to (intersected when
        several filters constrain the same column), once `bare_qs` or `qs` is built: what offer_reads.offer_page_ids
        reads as one range each. A trailing None: offers with no value in the column match too (one more range)."""
        return {column: sorted(ids, key=lambda id_: (id_ is None, id_ or 0))
                for column, ids in getattr(self, "_resolved", {}).items()}

    def resolve(self, column: str, ids) -> None:
        """Only offers whose `column` is one of `ids` (None among them: or is empty) can match."""
        resolved = self.__dict__.setdefault("_resolved", {})
        resolved[column] = set(ids) & resolved[column] if column in resolved else set(ids)

    def filter_noop(self, queryset, name, value):
        return queryset  # read in filter_queryset / _capability_cells

    def filter_search(self, queryset, name, value):
        """Each word (at most 8) must appear, case-insensitively, in the instance type, the provider's GPU name, the
        catalog GPU's name or the region. Catalog GPUs are matched on their small table first (see RelatedChoice)."""
        for word in value.split()[:8]:
            gpu_ids = sorted(GpuModel.objects.filter(name__icontains=word).values_list("pk", flat=True))
            queryset = queryset.filter(Q(instance_type__icontains=word) | Q(gpu_name__icontains=word)
                                       | Q(region__icontains=word) | Q(gpu_id__any=gpu_ids))
        return queryset

    def filter_spot(self, queryset, name, value, conditions):
        """With a spot price, or without one. An offer sold as spot whose spot price the source does not publish (AWS:
        the Spot Instance Advisor states the savings, `spot_savings_pct`, not the price) is unknown to `spot=true`:
        left out and counted, or kept with unknown=include, so that a spot question never hides a whole cloud."""
        if not value:
            return queryset.filter(spot_price_hour__isnull=True)
        conditions.offer_condition(Q(spot_price_hour__isnull=False),
                                   Q(spot_price_hour__isnull=True, spot_savings_pct__isnull=False), name)
        return queryset

    def filter_commitment(self, queryset, name, value):
        return queryset.filter(**{f"commit_{value}_price_hour_usd__isnull": False}) if value else queryset

    def filter_seen_within(self, queryset, name, value, conditions):
        """On the data's real date: the date the source states for its price (`price_as_of`), or, where it states
        none, the last live run that listed the offer. A replayed recording is not a live answer (it never sets the
        source's last_success_at), so the bundled snapshot matches only by the dates its files state; nor is a file
        pinned at a commit (the source's `revision`), which is as old as its commit however recently it was read.
        An undated price (neither: "undated" on the pages) is unknown to it, left out and counted unless
        unknown=include: how old it is nobody states."""
        cutoff = timezone.now() - timedelta(hours=float(value))
        live = Q(price_as_of__isnull=True, last_seen__gte=cutoff, source__last_success_at__gte=cutoff,
                 source__revision="")
        undated = Q(price_as_of__isnull=True) & (Q(source__last_success_at__isnull=True) | ~Q(source__revision=""))
        conditions.offer_condition(Q(price_as_of__gte=cutoff) | live, undated, name)
        return queryset

    def _capability_cells(self):
        cells = Capability.objects.all()
        if self.form.cleaned_data.get("documented_only"):
            cells = cells.filter(confidence__in=[Confidence.DOCUMENTED, Confidence.THIRD_PARTY])
        return cells

    def _providers_answering(self, key: str, values: list[str]) -> list[int]:
        """Ids of the providers whose answer to `key` is one of `values`; "unknown" means no (counted) known answer.

        Read first from the small capability table and applied as a literal `provider_id IN (...)`: as a subquery it
        left the planner guessing one matching provider and choosing plans for that (see RelatedChoice)."""
        def read():
            answers = dict(self._capability_cells().filter(key=key).exclude(value=UNKNOWN)
                           .values_list("provider_id", "value"))
            matching = {provider_id for provider_id, answer in answers.items() if answer in values}
            if UNKNOWN in values:
                matching |= set(Provider.objects.exclude(pk__in=list(answers)).values_list("pk", flat=True))
            return sorted(matching)

        documented = bool(self.form.cleaned_data.get("documented_only"))
        return remembered(f"answering:{documented}:{key}:{sorted(values)}", read)

    def _providers(self, queryset, ids):
        self.resolve("provider_id", ids)
        return queryset.filter(provider_id__any=ids)


    def filter_capability(self, queryset, name, value, conditions):
        if value:
            conditions.clause([[(name, value)]], unknown=UNKNOWN in value, question=name,
                         unknown_terms=[[(name, [UNKNOWN])]])
        return queryset

    def filter_offering(self, queryset, name, value, conditions):
        """managed: machines that can be nodes of the provider's managed Kubernetes; byo: machines you can join to
        your own cluster; none: neither; unknown: no known managed-node answer."""
        if not value:
            return queryset
        terms = []
        if "managed" in value:
            terms.append([("managed_node", ["yes"])])
        if "byo" in value:
            terms.append([("byo", ["yes"])])
        if "none" in value:
            terms.append([("managed_node", ["no", NOT_APPLICABLE, NOT_ON_THIS_MACHINE]), ("byo", ["no"])])
        if UNKNOWN in value:
            terms.append([("managed_node", [UNKNOWN])])
        unknown_terms = [[(question, [UNKNOWN])] for question, choices in (
            ("managed_node", ("managed", "none")), ("byo", ("byo", "none"))) if set(choices) & set(value)]
        conditions.clause(terms, unknown=UNKNOWN in value, question=name, unknown_terms=unknown_terms)
        return queryset

    def filter_gpu_operator(self, queryset, name, value, conditions):
        """The provider's way of installing the GPU stack, for machines that get it: a preinstalled or add-on GPU
        Operator counts only on a machine that can be a managed node (the offer's gpu_operator answer is yes)."""
        if not value:
            return queryset
        providers = self._providers_answering("gpu_operator", value)
        queryset = queryset.filter(provider_id__any=providers)
        if set(value) <= {"preinstalled", "add_on"}:
            conditions.clause([[("gpu_operator", ["yes"])]], question=name,
                              unknown_terms=[[("gpu_operator", [UNKNOWN])]])
        return queryset

    def filter_rdma(self, queryset, name, value, conditions):
        """The machine's fabric between nodes, by class or kind (RDMA_TERMS): `any` is GPUDirect RDMA between nodes,
        `multinode` adds GPU-direct over TCP, `infiniband` is InfiniBand only (not "InfiniBand or RoCE, depends on
        the cluster"), `efa` EFA with GPUDirect RDMA, `none` a plain network, `unknown` no source for the class."""
        if value:
            conditions.clause([RDMA_TERMS[item] for item in value], unknown=UNKNOWN in value, question=name,
                         unknown_terms=[RDMA_UNKNOWN_TERMS[item] for item in value if item != UNKNOWN])
        return queryset

    def filter_place(self, queryset, name, value, conditions):
        """Offers in the country, continent or region asked for. An offer's region is known to be the provider's
        when its API, a regional price list or its page states it (`region_confirmed`); one that only a third-party
        catalog copied there (SkyPilot's OCI file lists every shape in all 44 regions) is left out unless
        unknown=include, and counted (providers/data/region_basis.toml)."""
        if value in EMPTY_VALUES:
            return queryset
        if name == "region":
            place = Q(region__iexact=value)
        else:  # one place as an equality, read in price order from the place index (`= ANY` is sorted whole)
            place = Q(**{name: value[0]}) if len(value) == 1 else Q(**{f"{name}__any": list(value)})
        conditions.offer_condition(place & Q(region_confirmed=True), place & ~Q(region_confirmed=True), name)
        return queryset

    def filter_form_factor(self, queryset, name, value, conditions):
        """The offer's form factor; an offer whose source states none is unknown (left out unless unknown=include)."""
        if value:
            conditions.offer_condition(Q(form_factor__any=list(value)), Q(form_factor=""), name)
        return queryset

    def filter_fee(self, queryset, name, value, conditions):
        """Providers whose managed control plane is free, or paid at most `value` USD per cluster-hour (a fee in
        another currency converted with the latest ECB rate). Unknown: no answer, a fee paid at an amount not
        stated, or a currency without a rate. No: paid above `value`, or no managed control plane (n/a)."""
        rates = ExchangeRate.objects.latest_day()[1]
        answered, matching, unknown = set(), [], []
        for provider_id, answer, amount, currency in self._capability_cells().filter(key="control_plane_fee") \
                .values_list("provider_id", "value", "amount", "currency"):
            answered.add(provider_id)
            usd = to_usd(amount, currency, rates) if answer == "paid" else None
            if answer == "free" or (usd is not None and usd <= Decimal(str(value))):
                matching.append(provider_id)
            elif answer in (UNKNOWN, "paid_unstated") or (answer == "paid" and usd is None):
                unknown.append(provider_id)
        unknown += Provider.objects.exclude(pk__in=answered).values_list("pk", flat=True)
        conditions.offer_condition(Q(provider_id__any=sorted(matching)), Q(provider_id__any=sorted(unknown)), name)
        return queryset


# One yes/no/n-a/unknown filter per capability question, named after the question (`?mig=yes`).
# Declared as well, so a subclass (the offers page's OfferPanelFilterSet) inherits them like the other filters.
for _key in BOOLEAN_CAPABILITIES:
    OfferFilterSet.declared_filters[_key] = OfferFilterSet.base_filters[_key] = MultipleChoice(
        field_name=_key, method="filter_capability", choices=YES_NO_CHOICES, label=QUESTIONS[_key].label,
        help_text=QUESTIONS[_key].help,
    )


# An offer's machine: what a user rents, listed once per region. Its Kubernetes profile has the same key.
MACHINE = ("provider_id", "instance_type", "gpu_id", "gpu_count")


def one_per_machine(queryset: QuerySet[Offer]) -> QuerySet[Offer]:
    """The cheapest matching offer of each machine (MACHINE), annotated with `machine_regions`, how many matching
    offers that machine has (its regions); at an equal price, a region the provider confirms before one only a catalog
    lists. A window over the filtered offers (SQLite and PostgreSQL), so counts, pages and the CSV agree; its cost
    grows with the matching offers, which is why it is an option."""
    return queryset.annotate(
        machine_rank=Window(RowNumber(), partition_by=[F(name) for name in MACHINE],
                            order_by=[F("price_per_gpu_hour_usd").asc(nulls_last=True),
                                      F("region_confirmed").desc(nulls_last=True), F("id").asc()]),
        machine_regions=Window(Count("id"), partition_by=[F(name) for name in MACHINE]),
    ).filter(machine_rank=1)


def unknown_parameters(params, *, reads) -> list[str]:
    """The parameters of a request its reader does not read, sorted: the API answers them with a 400 and the pages
    show them as errors with a 400 too, so a typo (`?gpu_modle=h100`) is never silently "no filter". A reader of
    offers passes `OfferFilterSet.base_filters` plus its own parameters (page, format, currency)."""
    return sorted(set(params) - set(reads))


def multi_valued_parameters(filterset_class: type[filters.FilterSet] | None = None) -> frozenset[str]:
    """The filters that take several values (comma-separated or repeated keys, the same result either way); every
    other parameter takes one value."""
    return frozenset(name for name, filter_ in (filterset_class or OfferFilterSet).base_filters.items()
                     if isinstance(filter_, (MultipleChoice, NullsLastOrderingFilter, CountryFilter)))


def repeated_parameters(params, *, many) -> list[str]:
    """The parameters given more than once (`?gpu_count_min=8&gpu_count_min=1`) that take one value, sorted: the API
    answers them with a 400, as it does unknown ones, rather than keeping one of the values silently. `many` names
    the parameters that take several values."""
    return sorted(name for name in params if name not in many and len(params.getlist(name)) > 1)


def offer_filterset(data, *, queryset: QuerySet[Offer] | None = None, request=None) -> OfferFilterSet:
    """The FilterSet bound to request parameters; callers check `.is_valid()` and read `.errors`, then hand it to the
    offer_reads (`offer_page(filters=...)`, `offers_filtered(filters=...)`), which owns reading the offers."""
    return OfferFilterSet(data, queryset=queryset, request=request)

