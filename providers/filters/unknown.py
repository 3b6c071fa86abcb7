"""The one `unknown` parameter's machinery: which filters may leave an offer out because its answer is unknown, the
conditions one filtering pass collects from them (Conditions, built per call and never kept on a FilterSet: issue
#41), and how they are applied: left out (the default, and counted: `left_out_for_unknown`, which
providers.coverage.offers_left_out_for_unknown groups per provider) or included, marked unknown.

OfferFilterSet (providers.filters) inherits UnknownConditions; the filters that register conditions are its own
methods and NodeSoftwareFilters' (providers.filters.nodesoftware), named in CONDITION_METHODS.
"""

from __future__ import annotations

import functools
import operator
from decimal import Decimal

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.utils.translation import gettext_lazy as _
from django_filters.constants import EMPTY_VALUES

from ..capabilities import UNKNOWN
from ..models import Availability, KubernetesProfile, Offer
from ..versions import remembered

# What `unknown` does: leave out the offers a filter cannot decide (the default, and the response says how many), or
# include them, marked unknown.
UNKNOWN_CHOICES = [("exclude", _("leave out offers whose answer is unknown (and say how many)")),
                   ("include", _("include offers whose answer is unknown, marked unknown"))]
# The filters that may leave an offer out because its answer is unknown, in the order a notice names them.
UNKNOWABLE_FILTERS = ("offering", "mig", "mps", "time_slicing", "vendor_sharing", "rdma", "gpu_operator",
                      "node_autoscaling", "scale_to_zero", "spot_nodes", "rwx_storage", "gang_scheduling",
                      "control_plane_fee_max", "form_factor", "gpu_memory_min", "price_per_gpu_hour_max",
                      "price_hour_max", "spot", "available", "in_stock_7d_min", "seen_within_hours", "cuda",
                      "k8s_version", "dra", "stack", "country", "continent", "region")
# The left-out parts' per-filter marks (`unknown_0`, `unknown_1`, ...): left_out_for_unknown.
UNKNOWN_FLAG = "unknown_"


class Conditions:
    """The conditions one filtering pass collects from the filters whose answer may be unknown: built per call of
    OfferFilterSet._filtered and handed to those filters, never kept on the FilterSet.

    A Kubernetes filter adds a clause on the offer's profile (`clause`); a filter on the offer's own column or on
    its provider whose value may be unknown adds an offer condition (`offer_condition`)."""

    def __init__(self):
        self.profile_clauses: list = []
        self.offer_conditions: list = []
        self.filter_name = ""  # the filter whose conditions are being registered: each condition's question


    def clause(self, terms: list[list[tuple[str, list[str]]]], *, unknown: bool = False, question: str = "",
               unknown_terms: list | None = None) -> None:
        """A Kubernetes filter's condition on the offer's profile: `terms` (any of them) match; `unknown_terms` (any)
        are the answers that leave the offer's fit unknown; `unknown` says the user asked for unknown answers (then
        an offer with no derived answers passes too, and nothing is left out for being unknown)."""
        self.profile_clauses.append((terms, unknown, self.filter_name or question,
                                     [] if unknown else (unknown_terms or [])))

    def offer_condition(self, matching: Q, unknown: Q, question: str) -> None:
        """A filter on the offer's own column whose value may be unknown (`unknown`, e.g. a blank form factor)."""
        self.offer_conditions.append((matching, unknown, self.filter_name or question))


# The filter methods that register conditions (and may filter too): called with the pass's Conditions as well.
CONDITION_METHODS = frozenset({"filter_capability", "filter_offering", "filter_gpu_operator", "filter_rdma",
                               "filter_form_factor", "filter_place", "filter_cuda", "filter_k8s_version", "filter_dra",
                               "filter_stack", "filter_stated_minimum", "filter_stated_maximum", "filter_fee",
                               "filter_spot", "filter_available", "filter_in_stock_7d", "filter_seen_within"})



class UnknownConditions:
    """The FilterSet's filtering pass with the conditions of the filters whose answer may be unknown (a mixin of
    OfferFilterSet, which supplies `form`, `filters` and `resolve`)."""

    # --- the offer's own Kubernetes answers (KubernetesProfile) ----------------------------------------------------
    #
    # Each Kubernetes filter adds a clause on the offer's profile: any of its terms, a term being all of its
    # (column, allowed states) atoms (`rdma=efa` is one term: rdma yes AND fabric efa), and says whether an offer
    # with no derived answers may pass (only an "unknown" request allows it). The clauses are combined and the
    # matching profile ids read in one query, then applied to offers as one literal list (a subquery beyond
    # MAX_LITERAL_PROFILES): several lists of thousands of ids cost more to build than the queries took.

    MAX_LITERAL_PROFILES = 1000

    def _filtered(self, queryset) -> tuple[QuerySet[Offer], Conditions]:
        """Every filter applied, and the conditions of the filters whose answer may be unknown (CONDITION_METHODS),
        which only register them, for the caller to apply. The conditions are this call's own: nothing of one
        filtering is kept on the FilterSet for another to change (issue #41)."""
        conditions = Conditions()
        for name, value in self.form.cleaned_data.items():
            filter_ = self.filters[name]
            if filter_.method in CONDITION_METHODS:
                if value not in EMPTY_VALUES:
                    conditions.filter_name = name
                    queryset = getattr(self, filter_.method)(queryset, filter_.field_name, value, conditions)
            else:
                queryset = filter_.filter(queryset, value)
        return queryset, conditions

    def filter_stated_minimum(self, queryset, name, value, conditions):
        """At least `value` in an offer column a source may leave unstated (the memory per GPU of a TPU, or of a V100
        sold in 16 and 32 GB): an offer with no value there is unknown, left out and counted unless unknown=include."""
        conditions.offer_condition(Q(**{f"{name}__gte": value}), Q(**{f"{name}__isnull": True}), name)
        return queryset

    def filter_stated_maximum(self, queryset, name, value, conditions):
        """At most `value` in an offer column a source may leave unstated (the price of a machine sold on request,
        such as a B300 node): unknown like filter_stated_minimum's."""
        conditions.offer_condition(Q(**{f"{name}__lte": value}), Q(**{f"{name}__isnull": True}), name)
        return queryset

    def filter_available(self, queryset, name, value, conditions):
        """In stock now (available or limited) or sold out, as the last stock check found the offer; an offer no
        check has reported (its source has no stock endpoint, or none has run) is unknown, never "sold out"."""
        in_stock = Q(availability__in=[Availability.AVAILABLE, Availability.LIMITED])
        conditions.offer_condition(in_stock if value else Q(availability=Availability.UNAVAILABLE),
                                   Q(availability=Availability.UNKNOWN), name)
        return queryset

    def filter_in_stock_7d(self, queryset, name, value, conditions):
        """Offers whose share of stock checks in the last 7 days that found them in stock is at least `value` percent
        (the share availability_sync.availability_apply keeps on the offer); an offer never checked is unknown."""
        conditions.offer_condition(Q(in_stock_share_7d__gte=Decimal(str(value)) / 100),
                                   Q(in_stock_share_7d__isnull=True), name)
        return queryset

    @property
    def include_unknown(self) -> bool:
        return self.form.cleaned_data.get("unknown") == "include"

    def unknown_questions(self) -> list[str]:
        """The filters set whose unknown answers they leave out (a filter asking for "unknown" leaves none out)."""
        data = self.form.cleaned_data
        questions = []
        for name in UNKNOWABLE_FILTERS:
            value = data.get(name)
            if value in EMPTY_VALUES or (not isinstance(value, Decimal | bool) and (not value or UNKNOWN in value)):
                continue
            if name == "gpu_operator" and not set(value) <= {"preinstalled", "add_on"}:
                continue  # answered from the provider's own cell only
            if name == "spot" and not value:
                continue  # no spot price is known of an offer whose spot price is not published
            questions.append(name)
        return questions

    def left_out_for_unknown(self) -> tuple[list[QuerySet[Offer]], list[str]] | None:
        """The offers the other filters keep but these filters leave out only because an answer is unknown (what
        `unknown=include` would add), as disjoint parts whose union they are, and the filters that may leave one
        out; None when no filter can leave an offer out for that. Unordered.

        Each part carries one mark per filter named (UNKNOWN_FLAG + its place in the list): 1 when that offer's
        answer to it is unknown, else 0, so that a count of the parts can say which filters left offers out, not
        only which could (`offering,spot,continent` was said of offers whose spot price alone was unknown)."""
        if not self.unknown_questions():
            return None  # before filtering: no set filter asks a question whose answer may be unknown
        queryset, conditions = self._filtered(Offer.objects.all())
        if not self.form.cleaned_data.get("include_inactive"):
            queryset = queryset.filter(is_active=True)
        strict, loose = self._conditions(conditions)
        if strict is None:
            return None
        flags = self._unknown_flags(conditions)
        questions = list(dict.fromkeys(question for question, _flag in flags))
        marks = {f"{UNKNOWN_FLAG}{number}": Case(
                     When(functools.reduce(operator.or_, (flag for name, flag in flags if name == question)),
                          then=Value(1)), default=Value(0), output_field=IntegerField())
                 for number, question in enumerate(questions)}
        left_out = queryset.filter(loose).exclude(strict).order_by().annotate(**marks)
        if conditions.profile_clauses:
            return [left_out], questions
        # Offer conditions only: an offer left out is unknown for one of them (it passes each as matching or unknown,
        # and fails one as matching). Said outright, one part per condition (unknown for it and for none before it),
        # so that an index finds each part's offers: `gpu_memory_min` at 1,000,000 offers read the whole table for
        # its few offers of no stated memory, and the OR of two such conditions read 10,100 heap pages (bench/scale.py).
        # A condition before this one is stated as matching, and not unknown: the same offers as "matching or
        # unknown, and not unknown", said so that an index range serves it (`price_per_gpu_hour_usd <= 6.07` is an
        # index condition; "<= 6.07 or null, and not null" was a filter over a whole index, 22 ms at 1,000,000 offers).
        parts, before = [], Q()
        for matching, unknown, _question in conditions.offer_conditions:
            parts.append(left_out.filter(unknown & before))
            before &= matching & ~unknown
        return parts, questions

    def _unknown_flags(self, conditions: Conditions) -> list[tuple[str, Q]]:
        """(filter, the condition under which an offer's answer to it is unknown), per condition of the pass: for an
        offer column its `unknown` side; for a Kubernetes clause with unknown answers to widen by, meeting the clause
        widened by them and not the clause itself."""
        flags = [(question, unknown) for _matching, unknown, question in conditions.offer_conditions]
        for terms, allows, question, unknown_terms in conditions.profile_clauses:
            if not unknown_terms:
                continue  # no answer of this clause is unknown: it leaves no offer out for that
            strict = self._profile_condition([(terms, allows, question, unknown_terms)], resolve=False)
            widened = self._profile_condition([(terms + unknown_terms, True, question, [])], resolve=False)
            flags.append((question, widened & ~strict))
        return flags

    def _conditions(self, conditions: Conditions) -> tuple[Q | None, Q | None]:
        """(strict, loose) conditions of the unknowable filters: strict keeps offers every filter says match;
        loose also those where a filter's answer is unknown. (None, None) when no such filter is set."""
        clauses = conditions.profile_clauses
        if not clauses and not conditions.offer_conditions:
            return None, None
        strict, loose = Q(), Q()
        for matching, unknown, _question in conditions.offer_conditions:
            strict &= matching
            loose &= matching | unknown
        if clauses:
            # The profiles of the condition the offers are read with (strict, or loose with unknown=include) are
            # resolved for the index-range reads; the other condition's are not.
            widen = any(unknown_terms for *_c, unknown_terms in clauses)
            profile = self._profile_condition(clauses, resolve=not (widen and self.include_unknown))
            strict &= profile
            if widen:
                widened = [(terms + unknown_terms, allows or bool(unknown_terms), question, [])
                           for terms, allows, question, unknown_terms in clauses]
                loose &= self._profile_condition(widened, resolve=self.include_unknown)
            else:
                loose &= profile
        return strict, loose

    def _profile_condition(self, clauses, *, resolve: bool) -> Q:
        """The offers whose profile meets every clause, as one Q: the matching profile ids read in one query and
        applied as a literal list (a subquery beyond MAX_LITERAL_PROFILES). With `resolve`, the ids are handed to
        the selectors' index-range reads (only when no offer without a profile may pass)."""
        unknown = all(allows for _terms, allows, *_rest in clauses)
        documented = bool(self.form.cleaned_data.get("documented_only"))
        # The matching profiles change only with the data: kept under the data version like the other lookups.
        key = f"profiles:{documented}:{sorted((repr(terms), allows) for terms, allows, *_rest in clauses)}"
        if documented:
            ids = remembered(key, lambda: sorted(self._documented_profiles(clauses)))
            matching = Q(kubernetes_profile_id__any=ids)
        else:
            condition = Q()
            for terms, *_rest in clauses:
                either = Q(pk__in=[])
                for term in terms:
                    both = Q()
                    for column, states in term:
                        both &= Q(**{f"{column}__in": list(states)})
                    either |= both
                condition &= either
            profiles = KubernetesProfile.objects.filter(condition).values_list("id", flat=True)
            ids = remembered(key, lambda: list(profiles[:self.MAX_LITERAL_PROFILES + 1]))
            if len(ids) > self.MAX_LITERAL_PROFILES:
                matching = Q(kubernetes_profile_id__in=profiles)
                ids = None
            else:
                matching = Q(kubernetes_profile_id__any=ids)
        if unknown:
            matching |= Q(kubernetes_profile__isnull=True)
        if ids is not None and resolve:
            # Read as one index range per profile (offer_reads), and one for offers with no profile if they pass.
            self.resolve("kubernetes_profile_id", [*ids, None] if unknown else ids)
        return matching

    def _documented_profiles(self, clauses) -> set[int]:
        """The clauses evaluated in Python with an answer resting on an inferred source read as unknown (and so does
        its fabric): `inferred` is a JSON list, which not every database can search."""
        columns = {column for terms, *_rest in clauses for term in terms for column, _states in term}
        matching = set()
        for row in KubernetesProfile.objects.values("id", "inferred", *columns):
            for question in row["inferred"]:
                if question in row and row[question] != UNKNOWN:
                    row[question] = UNKNOWN
                if question == "rdma":
                    row.update({column: UNKNOWN for column in ("fabric", "fabric_class") if column in row})
            if all(any(all(row[column] in states for column, states in term) for term in terms)
                   for terms, *_rest in clauses):
                matching.add(row["id"])
        return matching
