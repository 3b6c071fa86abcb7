"""How much the per-offer Kubernetes answers know: the unknown share per provider and question, counted per
(provider, machine type) so a type copied into 40 regions counts once, and per offer; the machine-type facts the
issue #36 targets measure (managed node, fabric class of 4+ GPU types, form factor of A100/H100/H200/B200/GB200
types); and the instance types a fact file names that no offer has, or the reverse.

Also the offers one query's filters leave out because an answer is unknown (offers_left_out_for_unknown, what the
`unknown` parameter's notice and the API's `left_out_for_unknown` say).

Reads only (a selector module): the sources page, `manage.py kubernetes_coverage`, the targets' test, the offers
page and API use it.
Imports the domain's models and providers.kubernetes; nothing imports it but those readers.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Count

from .kubernetes import QUESTIONS, UNKNOWN
from .models import InstanceTypeFact, KubernetesProfile, Offer, Provider
from .offer_reads import COUNT_EXACT_UP_TO
from .versions import remembered

# The providers issue #36 sets targets for, and the GPU families whose form factor it asks for.
TARGET_PROVIDERS = ("aws", "gcp", "azure", "oci", "coreweave", "nebius", "lambda")
FORM_FACTOR_FAMILIES = ("A100", "H100", "H200", "B200", "GB200")
MANY_GPUS = 4
# Answers stored beside the questions and counted like them.
COLUMNS = (*QUESTIONS, "fabric_class")


@dataclass
class Share:
    """`known` of `total` (types or offers)."""

    known: int = 0
    total: int = 0

    def add(self, known: bool, weight: int = 1) -> None:
        self.total += weight
        self.known += weight if known else 0

    @property
    def unknown(self) -> int:
        return self.total - self.known

    @property
    def percent_known(self) -> float | None:
        return round(100 * self.known / self.total, 1) if self.total else None

    @property
    def percent_unknown(self) -> float | None:
        return round(100 * self.unknown / self.total, 1) if self.total else None


@dataclass
class ProviderCoverage:
    slug: str
    name: str
    # per (provider, machine type) and per offer: the three targets
    managed_node_types: Share = field(default_factory=Share)
    managed_node_offers: Share = field(default_factory=Share)
    fabric_class_types: Share = field(default_factory=Share)  # types with 4+ GPUs
    fabric_class_offers: Share = field(default_factory=Share)
    form_factor_types: Share = field(default_factory=Share)  # A100/H100/H200/B200/GB200 types
    form_factor_offers: Share = field(default_factory=Share)
    # every question: per machine type, and every answer of every offer
    question_types: dict[str, Share] = field(default_factory=dict)
    answers_offers: Share = field(default_factory=Share)
    # instance types a fact file names exactly that no active offer has; active types no fact matches
    facts_without_offers: list[str] = field(default_factory=list)
    offers_without_facts: list[str] = field(default_factory=list)


def _rows():
    """One row per (provider, instance type, GPU family, GPU count, form factor, profile) with its active offers."""
    return (Offer.objects.filter(is_active=True).order_by()
            .values("provider_id", "instance_type", "gpu__family", "gpu_count", "form_factor", "kubernetes_profile_id")
            .annotate(offers=Count("id")))


def kubernetes_coverage(*, provider_slugs=None) -> list[ProviderCoverage]:
    """Coverage of every provider with active offers (or of `provider_slugs`), in name order. Three queries: the
    grouped offers, their profiles' states, the providers; plus the exact fact patterns."""
    from . import kubernetes as k8s

    providers = Provider.objects.order_by("name")
    if provider_slugs is not None:
        providers = providers.filter(slug__in=list(provider_slugs))
    by_id = {p.id: ProviderCoverage(p.slug, p.name) for p in providers}
    rows = [row for row in _rows() if row["provider_id"] in by_id]
    profile_ids = {row["kubernetes_profile_id"] for row in rows if row["kubernetes_profile_id"]}
    states = {profile["id"]: profile for profile in KubernetesProfile.objects.filter(pk__in=profile_ids).values(
        "id", *COLUMNS)}
    unknown_everywhere = {column: UNKNOWN for column in COLUMNS}
    types: dict[tuple[int, str], dict] = {}
    for row in rows:
        coverage = by_id[row["provider_id"]]
        answers = states.get(row["kubernetes_profile_id"], unknown_everywhere)
        offers = row["offers"]
        many = row["gpu_count"] is not None and row["gpu_count"] >= MANY_GPUS
        top = row["gpu__family"] in FORM_FACTOR_FAMILIES
        coverage.managed_node_offers.add(answers["managed_node"] != UNKNOWN, offers)
        if many:
            coverage.fabric_class_offers.add(answers["fabric_class"] != UNKNOWN, offers)
        if top:
            coverage.form_factor_offers.add(bool(row["form_factor"]), offers)
        for question in QUESTIONS:
            coverage.answers_offers.add(answers[question] != UNKNOWN, offers)
        # A type is known for a question when any of its rows is (its regions share one answer).
        entry = types.setdefault((row["provider_id"], row["instance_type"]), {"many": False, "top": False,
                                                                               "known": set(), "form": False})
        entry["many"] |= many
        entry["top"] |= top
        entry["form"] |= bool(row["form_factor"])
        entry["known"] |= {column for column in COLUMNS if answers[column] != UNKNOWN}
    for (provider_id, _instance_type), entry in types.items():
        coverage = by_id[provider_id]
        coverage.managed_node_types.add("managed_node" in entry["known"])
        if entry["many"]:
            coverage.fabric_class_types.add("fabric_class" in entry["known"])
        if entry["top"]:
            coverage.form_factor_types.add(entry["form"])
        for question in QUESTIONS:
            coverage.question_types.setdefault(question, Share()).add(question in entry["known"])
    # The fact files' exact names against the catalog's types, both ways.
    offered: dict[int, set[str]] = defaultdict(set)
    for provider_id, instance_type in types:
        offered[provider_id].add(instance_type)
    facts: dict[int, list[k8s.Fact]] = defaultdict(list)
    for provider_id, pattern in InstanceTypeFact.objects.filter(provider_id__in=list(by_id)).values_list(
            "provider_id", "pattern").order_by().distinct():
        facts[provider_id].append(k8s.Fact(pattern=pattern, key="", value=""))
    for provider_id, coverage in by_id.items():
        patterns = facts.get(provider_id, [])
        coverage.facts_without_offers = sorted(
            fact.pattern for fact in patterns if not k8s._is_pattern(fact.pattern)
            and fact.pattern not in offered[provider_id])
        coverage.offers_without_facts = sorted(
            name for name in offered[provider_id] if patterns and not any(fact.matches(name) for fact in patterns))
    return [coverage for coverage in by_id.values() if coverage.managed_node_offers.total or
            coverage.facts_without_offers]


def overall_unknown_answers(coverages: list[ProviderCoverage]) -> Share:
    """Every per-offer answer of these providers' offers, known or not."""
    total = Share()
    for coverage in coverages:
        total.known += coverage.answers_offers.known
        total.total += coverage.answers_offers.total
    return total


# --- offers left out because an answer is unknown (the `unknown` parameter) ----------------------------------------


@dataclass(frozen=True)
class LeftOutForUnknown:
    """How many offers a valid OfferFilterSet leaves out only because an answer it asks about is unknown: `total`,
    `by_provider` ((slug, name in the active language, count), most first) and `questions` (the filters whose
    unknown answers they are). What the pages' notice, the API's `left_out_for_unknown` and the digest read."""

    total: int = 0
    by_provider: tuple[tuple[str, str, int], ...] = ()
    questions: tuple[str, ...] = ()
    # False past COUNT_EXACT_UP_TO: then `total` means "more than", and `by_provider` counts the offers among the
    # first found (lower bounds; a provider with none among them is not named).
    exact: bool = True

    def as_dict(self) -> dict:
        return {"total": self.total, "exact": self.exact,
                "by_provider": {slug: count for slug, _name, count in self.by_provider},
                "questions": list(self.questions)}


def offers_left_out_for_unknown(*, filters) -> LeftOutForUnknown:
    """One COUNT, grouped by provider, of the first COUNT_EXACT_UP_TO + 1 offers `filters` would add with
    unknown=include (none when it is set already), kept under the data version per set of filters. With
    `one_per_machine`, of the machines it would add (a machine with an offer left out and none shown), so the count
    is the rows that unknown=include adds.

    Counted exactly up to the same limit as the offers themselves (offer_reads.COUNT_EXACT_UP_TO): past it a grouped
    count read every such offer (26,230 rows, 13 ms, for `offering=byo&continent=SA` at 1,000,000 offers, where the
    page needs 50). The real snapshot never reaches it (3,280 offers in all)."""
    from .filters import MACHINE, provider_choices, provider_slugs
    from .filters.unknown import UNKNOWN_FLAG

    if filters.include_unknown:
        return LeftOutForUnknown()
    names = sorted(set(filters.data) & set(filters.base_filters))
    key = repr([(name, filters.data.getlist(name) if hasattr(filters.data, "getlist") else filters.data[name])
                for name in names])

    def count() -> tuple[tuple[str, ...] | None, tuple[tuple, ...]] | None:
        found = filters.left_out_for_unknown()
        if found is None:
            return None
        parts, questions = found
        machines = filters.form.cleaned_data.get("one_per_machine")
        # Per offer, whether each filter's answer is unknown (the parts' marks); not per machine, whose rows are
        # compared whole with the machines shown: then every filter that may leave one out is named (None).
        marks = () if machines else tuple(f"{UNKNOWN_FLAG}{number}" for number in range(len(questions)))
        questions = None if machines else tuple(questions)
        columns = MACHINE if machines else ("provider_id",)
        statements = []
        for part in parts:  # disjoint: read one after the other up to the limit
            try:
                statements.append(part.values_list(*columns, *marks).query.sql_with_params())
            except EmptyResultSet:  # a part no offer can be in (no provider's fee is unknown)
                continue
        if not statements:
            return questions, ()
        union = " UNION ALL ".join(sql for sql, _params in statements)  # unbracketed: SQLite refuses brackets
        params = [value for _sql, params in statements for value in params]
        if machines:
            # One row per machine: what unknown=include adds is the machines with an offer left out and none shown.
            try:
                shown, shown_params = filters.filter_queryset(Offer.objects.all(), machines=False).order_by() \
                    .values_list(*MACHINE).query.sql_with_params()
            except EmptyResultSet:  # a filter no offer can match for sure (its answer is yes for no machine)
                union = f'SELECT DISTINCT * FROM ({union}) AS "left_out"'
            else:
                union = f'SELECT * FROM ({union}) AS "left_out" EXCEPT SELECT * FROM ({shown}) AS "shown"'
                params += shown_params
        tallies = "".join(f', SUM("found"."{mark}")' for mark in marks)
        with connection.cursor() as cursor:
            cursor.execute(f'SELECT "found"."provider_id", COUNT(*){tallies} FROM ({union} LIMIT %s) AS "found" '
                           f'GROUP BY "found"."provider_id"', [*params, COUNT_EXACT_UP_TO + 1])
            return questions, tuple(cursor.fetchall())

    counted = remembered(f"left-out-for-unknown:{key}", count)
    if counted is None:
        return LeftOutForUnknown()
    questions, counts = counted
    slugs = provider_slugs()
    shown = dict(provider_choices())
    rows = sorted(((slugs[provider_id], str(shown.get(slugs[provider_id], slugs[provider_id])), n)
                   for provider_id, n, *_marks in counts), key=lambda row: (-row[2], row[1]))
    found = sum(n for _provider, n, *_marks in counts)
    named = filters.unknown_questions()  # in the order a notice names them
    if questions is not None:  # the filters some offer left out is unknown for, not all that could be
        unknown_for = {question for number, question in enumerate(questions)
                       if any(marks[number] for _provider, _n, *marks in counts)}
        named = [question for question in named if question in unknown_for]
    return LeftOutForUnknown(total=min(found, COUNT_EXACT_UP_TO), by_provider=tuple(rows),
                             questions=tuple(named) if found else (), exact=found <= COUNT_EXACT_UP_TO)
