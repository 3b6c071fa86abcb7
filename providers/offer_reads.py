"""The offers list as the API, the offers page and the exports read it: the count, the page's ids (one index range
per provider, GPU or profile where that is faster), the page cursor, the rows and their stored Kubernetes answers.
The filters come from providers.filters (one OfferFilterSet per request); nothing here is kept between requests
except the stored answers, keyed by a profile's computed_at."""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import BooleanField, Count, Field, ForeignObject, Lookup, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from . import pricing
from .filters import MACHINE
from .models import Offer
from .selectors import offer_list, stale_cutoff


# --- `column__any=[values]` (registered when the app is ready, providers/apps.py) ----------
# `column__any=[values]`: the list as one array parameter, so that a statement's text does not change with how
# many values a filter resolves to (issue #41, item 3).
#
# With `IN (%s, %s, ...)` every length of list is a different statement: 250 matching profiles were 250 placeholders
# (and, in the page, 250 `UNION ALL` branches to plan). PostgreSQL gets `column = ANY(%s)` with the list as one array
# (integers always as bigint[], so the statement's parameter types do not change with the values' size either): one
# statement per set of filters, whatever the values, for the planner, `pg_stat_statements` and EXPLAIN alike. Other
# databases get the plain `IN` list. (Server-side prepared statements on top of it earned nothing measurable and were
# removed: docs/performance.md, the ledger.)
@ForeignObject.register_lookup
@Field.register_lookup
class AnyOf(Lookup):
    lookup_name = "any"
    prepare_rhs = False

    def get_prep_lookup(self):
        return sorted(self.rhs)

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        values = self.rhs
        if not values:
            raise EmptyResultSet  # like `__in=[]`: nothing matches
        if connection.vendor == "postgresql":
            if all(isinstance(value, int) for value in values):
                return f"{lhs} = ANY(%s::bigint[])", [*lhs_params, bigints(values)]
            return f"{lhs} = ANY(%s)", [*lhs_params, list(values)]
        return f"{lhs} IN ({', '.join(['%s'] * len(values))})", [*lhs_params, *values]


def bigints(values) -> list:
    """Integers as PostgreSQL bigints whatever their size (psycopg would send 50 as a smallint and 100000 as an
    integer), so a statement's parameter types do not change with the values either (PostgreSQL only)."""
    from psycopg.types.numeric import Int8

    return [Int8(value) for value in values]


# Page numbers the API and the pages read; past this a 400 (as the API schema says).
MAX_PAGE = 10**9


def whole_number(raw: str, maximum: int | None = None) -> int | None:
    """`raw` as a whole number from 1 (to `maximum`) in ASCII digits, else None: Python's int() also reads "١"
    (Arabic-Indic one), "1_000" and " 7 ", none of which is a number the API schema or the pages accept."""
    number = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 19 else 0
    return number if number >= 1 and (maximum is None or number <= maximum) else None


def page_number(raw: str | None) -> int | None:
    """A page parameter as a page number (1 to MAX_PAGE), None when it is not one."""
    return whole_number(raw or "", MAX_PAGE)


# Offers are counted exactly up to this many (or to the end of the page asked for, if further); past it the answer is
# "more than 10,000": an exact count of a wide filter read every matching row (808,000 rows, 184 ms at 1,000,000
# offers), a page never needs it, and nobody reads the eleventh thousand as a number (issue #41).
COUNT_EXACT_UP_TO = 10_000


@dataclass(frozen=True)
class OfferCount:
    """How many offers match: `value` exactly when `exact`, else more than `value`."""

    value: int
    exact: bool

    @property
    def for_paginator(self) -> int:
        """The count to give Django's Paginator: one more than `value` when that means "more than", so it knows a
        page follows."""
        return self.value + (0 if self.exact else 1)


def offer_count(*, filters, through: int = 0) -> OfferCount:
    """How many offers a bound, valid OfferFilterSet matches, counted on bare offers (the same filters as
    offers_filtered, without offer_list's joins and stale annotation, which a count does not need) up to
    COUNT_EXACT_UP_TO or `through` (the end of the page asked for), whichever is larger: exact below it, "more than"
    above it. Counted for every request: a count kept under the data version earned nothing when every request
    differs (docs/performance.md), and was removed."""
    limit = max(COUNT_EXACT_UP_TO, through)
    found = filters.bare_qs.order_by().values("id")[:limit + 1].count()
    return OfferCount(min(found, limit), found <= limit)


def offers_filtered(*, filters) -> QuerySet[Offer]:
    """The offers a bound, valid OfferFilterSet matches, as offer_list gives them (relations joined, `is_stale`
    annotated) in the filters' ordering: what the CSV export, the charts, the advisor and the digest read. Whether
    inactive offers are in is the filters' own `include_inactive`."""
    return filters.filter_queryset(offer_list(include_inactive=True))


def offer_ids(*, filters) -> QuerySet:
    """The ids of the offers a bound, valid OfferFilterSet matches, in its order, read from the bare offer table."""
    return filters.bare_qs.values_list("id", flat=True)


def offer_page_ids(*, filters, offset: int, limit: int) -> list[int]:
    """One page of offer_ids: `limit` ids from `offset`, read in index order (migrations 0004, 0009).

    On PostgreSQL one statement whose text depends only on which filters are set (_page_ids_sql): the filter
    values, the page and the id lists are parameters. Elsewhere the plain query. Same rows either way
    (tests/api/test_offer_pages.py)."""
    if connection.vendor != "postgresql":
        return list(filters.bare_qs.values_list("id", flat=True)[offset:offset + limit])
    try:
        sql, params = _page_ids_sql(filters, offset, limit)
    except EmptyResultSet:  # a filter that resolved to no ids at all
        return []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def _page_ids_sql(filters, offset: int, limit: int) -> tuple[str, list]:
    """(sql, params) of the page's ids in order (PostgreSQL).

    When the filters name a list of GPU models, providers or profiles (capability answers resolve to profiles), or
    one continent with unknown=include (its region bases), and the order is one that a (gpu | provider | profile |
    continent and region basis, order columns, id) index serves, each value is read as its
    own index range, at most offset + limit entries of it, and the ranges are merged in order: the list is one array
    parameter unnested and joined LATERAL to the range's read, so the statement is the same for 2 or 250 values.
    With `gpu_id = ANY(...)` alone the planner walks the whole price index instead and filters out every other
    GPU's offers (310,000 rows for the H100 page at 1,000,000 offers). Where offers with no value in the column
    match too (no profile, with unknown answers included) their range is read as well, one more branch."""
    offers = filters.bare_qs
    split = _range_split(filters)
    if split is None:
        sql, params = offers.values_list("id").query.sql_with_params()
        return f"{sql} LIMIT %s OFFSET %s", [*params, *bigints([limit, offset])]
    column, values = split
    quote = connection.ops.quote_name
    order = _order_columns(offers)
    columns = [name.lstrip("-") for name in order]
    in_range = RawSQL(f'{quote(Offer._meta.db_table)}.{quote(column)} = "ranges"."value"', (),
                      output_field=BooleanField())
    sql, params = offers.filter(in_range).values_list("id", *columns).query.sql_with_params()
    listed = [value for value in values if value is not None]
    array = ARRAY_TYPES.get(column, "bigint[]")  # ids as bigints, whatever their size
    ranges = (f'SELECT "range".* FROM unnest(%s::{array}) AS "ranges"("value") '
              f'CROSS JOIN LATERAL ({sql} LIMIT %s) AS "range"')
    params = [listed if column in ARRAY_TYPES else bigints(listed), *params, *bigints([offset + limit])]
    if None in values:  # offers with no value in the column match too: their own range (NULLs are in the index)
        empty, empty_params = offers.filter(**{f"{column}__isnull": True}).values_list("id", *columns) \
            .query.sql_with_params()
        ranges = f"{ranges} UNION ALL ({empty} LIMIT %s)"
        params += [*empty_params, *bigints([offset + limit])]
    order_by = "".join(f'"range".{quote(name.lstrip("-"))} {"DESC" if name[0] == "-" else "ASC"} NULLS LAST, '
                       for name in order)
    return (f'SELECT "range"."id" FROM ({ranges}) AS "range" ORDER BY {order_by}"range"."id" LIMIT %s OFFSET %s',
            [*params, *bigints([limit, offset])])


def offer_page(*, filters, offset: int, limit: int, now: datetime | None = None) -> list[dict]:
    """The rows (offer_rows') of one page of a bound, valid OfferFilterSet, in its order.

    On PostgreSQL one statement: the page of ids (offer_page_ids' query, as an array in its order) unnested WITH
    ORDINALITY and joined to the offers, providers, GPUs and sources, around SQL built once per process; elsewhere
    offer_page_ids then offer_rows. Same rows either way (tests/api/test_offer_pages.py)."""
    if connection.vendor != "postgresql":
        rows = offer_rows(ids=offer_page_ids(filters=filters, offset=offset, limit=limit), now=now)
        machine_regions_attach(rows, filters=filters)
        return rows

    try:
        sql, params = _page_ids_sql(filters, offset, limit)
    except EmptyResultSet:  # a filter that resolved to no ids at all
        return []
    sql = _offer_page_sql().replace("{ids}", f"ARRAY({sql})")
    cutoff = stale_cutoff(now=now)
    moment = now or timezone.now()
    rows = []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for values in cursor.fetchall():
            row = dict(zip(OFFER_ROW_FIELDS, values, strict=True))
            last_success = row["source__last_success_at"]
            row["is_stale"] = last_success is None or last_success < cutoff
            row["price_is_old"] = pricing.is_old(row["price_as_of"], moment)
            rows.append(row)
    kubernetes_answers_attach(rows)
    machine_regions_attach(rows, filters=filters)
    return rows


def machine_regions_attach(rows: list[dict], *, filters) -> None:
    """With `one_per_machine`, each row's `machine_regions`: how many matching offers (regions) its machine has."""
    if not rows or not filters.form.cleaned_data.get("one_per_machine"):
        return
    key = operator.itemgetter(*MACHINE)
    wanted = functools.reduce(operator.or_, (Q(**dict(zip(MACHINE, key(row), strict=True))) for row in rows))
    matching = filters.filter_queryset(Offer.objects.all(), machines=False).filter(wanted)
    counts = {key(found): found["regions"] for found in
              matching.order_by().values(*MACHINE).annotate(regions=Count("id"))}
    for row in rows:
        row["machine_regions"] = counts.get(key(row))


@functools.cache
def _offer_page_sql() -> str:
    """offer_rows' query with the offers read from `unnest({ids}) WITH ORDINALITY`, in that order (PostgreSQL, which
    needs no converters for these columns: its values() rows are the driver's values)."""
    sql, params = _offer_rows_queryset().query.sql_with_params()
    table = connection.ops.quote_name(Offer._meta.db_table)
    head = f"FROM {table} "
    assert not params and sql.count(head) == 1, sql
    return (sql.replace(head, f'FROM unnest({{ids}}) WITH ORDINALITY AS "page"("id", "n") INNER JOIN {table} '
                              f'ON ({table}."id" = "page"."id") ') + ' ORDER BY "page"."n"')


# Orderings that a (gpu | provider, columns..., id) partial index on active offers serves, by the ordering's columns.
RANGE_INDEXED = {
    ("price_per_gpu_hour_usd",): ("gpu_id", "provider_id", "kubernetes_profile_id"),
    ("price_hour_usd",): ("gpu_id", "provider_id"),
    # By memory, largest first (then the price tiebreak): per GPU model and per provider (migration 0030). Walking the
    # memory index met a rare GPU's offers last: `gpu=t4g&...&ordering=-gpu_memory` dropped 754,409 entries (676 ms)
    # at 1,000,000 offers to find 50 of 16 GB.
    ("-gpu_memory_gb", "price_per_gpu_hour_usd"): ("gpu_id", "provider_id"),
}


def _order_columns(offers: QuerySet) -> tuple[str, ...]:
    """The ordering's columns before the id tiebreak, "-" before a descending one, if every one is a plain column of
    the offer ordered with NULLs last."""
    columns = []
    for term in offers.query.order_by:
        if term == "id":
            break
        expression = getattr(term, "expression", None)
        if not getattr(term, "nulls_last", False) or not hasattr(expression, "name") or "__" in expression.name:
            return ()
        columns.append(f"{'-' if term.descending else ''}{expression.name}")
    return tuple(columns)


def _range_split(filters) -> tuple[str, list[int | None]] | None:
    """(column, values) to read as one index range per value, or None for the plain query."""
    if filters.form.cleaned_data.get("include_inactive"):
        return None  # the indexes are partial on active offers
    if filters.form.cleaned_data.get("one_per_machine"):
        return None  # a window over every matching offer: no index range serves it
    order = _order_columns(filters.bare_qs)
    columns = RANGE_INDEXED.get(order)
    if not columns:
        return None
    # One continent's confirmed regions are one range of its index by price (continent, region basis, price); with
    # unknown=include its offers of every region basis are three (confirmed, catalog-only, not stated), read like a
    # list's ranges when no shorter list is (REGION_BASES). Either way a list of more profiles than
    # MAX_RANGES_IN_A_CONTINENT costs more as ranges than the continent's own.
    one_continent = len(filters.form.cleaned_data.get("continent") or ()) == 1
    for column in columns:
        values = filters.resolved_ids.get(column)
        most = MAX_RANGES.get(column, 40)
        if one_continent and column in MAX_RANGES_IN_A_CONTINENT:
            most = min(most, MAX_RANGES_IN_A_CONTINENT[column])
        if values and len(values) <= most:
            return column, values
    if one_continent and filters.include_unknown and len(order) == 1:  # the place indexes are by a price
        return REGION_BASIS, list(REGION_BASES)
    minimum = filters.form.cleaned_data.get("gpu_memory_min")
    if minimum is not None and order == ("price_per_gpu_hour_usd",):
        sizes = _memory_sizes(minimum)
        if 0 < len(sizes) <= MAX_MEMORY_RANGES:  # with unknown=include, the offers of no stated memory too
            return MEMORY, [*sizes, None] if filters.include_unknown else sizes
    return None


def _memory_sizes(minimum) -> list:
    """The memory sizes per GPU of active offers from `minimum` up, largest first, at most MAX_MEMORY_RANGES + 1 of
    them: read by skipping down the memory index (migration 0013), one probe per size."""
    offers = connection.ops.quote_name(Offer._meta.db_table)
    largest = (f"SELECT gpu_memory_gb FROM {offers} WHERE is_active AND gpu_memory_gb >= %s {{}}"
               "ORDER BY gpu_memory_gb DESC NULLS LAST LIMIT 1")
    first, next_ = largest.format(""), largest.format('AND gpu_memory_gb < "sizes"."size" ')
    sql = (f'WITH RECURSIVE "sizes"("size") AS (({first}) UNION ALL SELECT ({next_}) FROM "sizes" '
           'WHERE "sizes"."size" IS NOT NULL) SELECT "size" FROM "sizes" WHERE "size" IS NOT NULL LIMIT %s')
    with connection.cursor() as cursor:
        cursor.execute(sql, [minimum, minimum, MAX_MEMORY_RANGES + 1])
        return [row[0] for row in cursor.fetchall()]


# The region basis of an offer (providers.filters.filter_place): confirmed by the provider, only copied by a
# catalog, or not stated. One continent with unknown=include is read as one range of the place indexes
# (migrations 0024, 0027) per basis: at 1,000,000 offers `mig=yes&offering=byo&continent=AF&unknown=include` read
# 134 profile ranges of 1,555 index entries each for 14 offers (22 ms), and the plain query sorted or walked the
# whole price index (148 ms); the three ranges read 3.4 ms.
REGION_BASIS = "region_confirmed"
REGION_BASES = (True, False, None)

# A memory minimum that few sizes reach, in the default order (by the price per GPU-hour): one range of the memory
# index (gpu_memory_gb DESC, price per GPU-hour, id; migration 0013) per size. The price index walked in price order
# meets the cheap small cards first: at 1,000,000 offers `gpu_memory_min=141&price_per_gpu_hour_max=12.50` passed
# 386,800 entries (157 ms) to find a page of 50. Several sizes each read at most a page; a low minimum (16 GB: 14
# sizes) matches most offers, which the plain walk finds at once.
MEMORY = "gpu_memory_gb"
MAX_MEMORY_RANGES = 8
ARRAY_TYPES = {REGION_BASIS: "boolean[]", MEMORY: "numeric[]"}  # other range columns are ids

# At most this many ranges per page statement. The per-offer Kubernetes questions resolve to machine profiles
# (one per instance type and GPU), so their lists are longer than a list of GPU models or providers; a range that
# holds no active offer costs one index probe.
MAX_RANGES = {"gpu_id": 40, "provider_id": 40, "kubernetes_profile_id": 250}
# With one continent asked for, each profile's range also reads past other continents' offers (at 1,000,000 offers,
# 3,722 per range on average for South America), so many ranges cost more than walking the continent's own index
# range (continent, region basis, price) in price order; few ranges cost less, because a narrow answer's offers are
# rare in that walk. Measured at 1,000,000 offers, 60 different Kubernetes requests per side (docs/performance.md):
# every request of 171 profiles (`offering=managed`) was faster by the continent's range, most of 55 or fewer
# (`mig=yes`) slower; 100 lies between. Several continents are not one range of that index: not limited.
MAX_RANGES_IN_A_CONTINENT = {"kubernetes_profile_id": 100}


# What the API shows of an offer, its provider, GPU model and source (serializers.offer_data renders these rows,
# with the `is_stale` offer_rows adds).
OFFER_ROW_FIELDS = (
    "id", "instance_type", "region", "country", "continent", "region_confirmed", "gpu_id", "gpu_name", "gpu_count",
    "gpu_memory_gb", "gpu_memory_usable_gb", "vcpus", "ram_gb", "currency", "price_hour", "spot_price_hour",
    "price_hour_usd", "spot_price_hour_usd",
    "price_per_gpu_hour_usd", "spot_price_per_gpu_hour_usd", "availability", "available_count",
    "availability_checked_at", "availability_since", "availability_recorded", "in_stock_share_7d",
    "in_stock_share_30d", "first_seen",
    "last_seen", "is_active", "price_as_of", "price_dated_by", "price_source_url", "gpu_fraction", "form_factor",
    "efa_interfaces",
    "spot_savings_pct", "spot_interruption", "spot_as_of", "commit_1y_price_hour_usd",
    "commit_1y_price_per_gpu_hour_usd", "commit_3y_price_hour_usd", "commit_3y_price_per_gpu_hour_usd",
    "commitment_as_of", "commitment_source_url",
    "provider_id", "provider__slug", "provider__name", "provider__name_zh", "provider__kind",
    "gpu__slug", "gpu__name", "gpu__vendor", "gpu__family", "gpu__memory_gb",
    "source__slug", "source__name", "source__kind", "source__url", "source__license", "source__revision",
    "source__as_of", "source__last_success_at", "source__price_evidence", "source__price_evidence_zh",
    "source__price_evidence_url",
    "kubernetes_profile_id", "kubernetes_profile__computed_at",
)


def offer_rows(*, ids: list[int], now: datetime | None = None) -> list[dict]:
    """The offers of `ids` as flat dicts of OFFER_ROW_FIELDS (`is_stale` as in offer_list) with
    `kubernetes_profile__answers` (their stored Kubernetes answers, see kubernetes_answers_attach), in the order of
    `ids`.

    One query (and one more for answers not kept from earlier requests), no model instances: building 50 offers
    with their three relations cost more than the query. The query is set up once per process (naming 40 columns
    across three joins is most of the work of a values() call) and `is_stale` is decided here with
    stale_expression's rule rather than in an annotation that would need it set up again for every `now`."""
    cutoff = stale_cutoff(now=now)
    moment = now or timezone.now()
    found = {}
    for row in _offer_rows_queryset().filter(id__in=ids):
        last_success = row["source__last_success_at"]
        row["is_stale"] = last_success is None or last_success < cutoff
        row["price_is_old"] = pricing.is_old(row["price_as_of"], moment)
        found[row["id"]] = row
    rows = [found[offer_id] for offer_id in ids if offer_id in found]
    kubernetes_answers_attach(rows)
    return rows


@functools.cache
def _offer_rows_queryset() -> QuerySet:
    return Offer.objects.order_by().values(*OFFER_ROW_FIELDS)


# Stored answers by (profile id, computed_at), kept across requests: a page's 50 offers carried 200 KB of JSON to
# decode, the same for every request until a profile is recomputed (which gives it a new key). Bounded; read-only
# for callers (the same dicts are handed to every request).
_ANSWERS: dict[tuple, dict] = {}
MAX_KEPT_ANSWERS = 8192


def kubernetes_answers_attach(rows: list[dict]) -> None:
    """Set `kubernetes_profile__answers` on rows carrying `kubernetes_profile_id` and `..._computed_at` (None for
    an offer never derived), reading the answers not kept yet in one query."""
    keys = {(row["kubernetes_profile_id"], row["kubernetes_profile__computed_at"]) for row in rows
            if row["kubernetes_profile_id"] is not None}
    missing = [profile_id for profile_id, computed_at in keys if (profile_id, computed_at) not in _ANSWERS]
    if missing:
        from .models import KubernetesProfile

        for profile_id, computed_at, answers in KubernetesProfile.objects.filter(id__in=missing).values_list(
                "id", "computed_at", "answers"):
            if len(_ANSWERS) >= MAX_KEPT_ANSWERS:
                del _ANSWERS[next(iter(_ANSWERS))]
            _ANSWERS[(profile_id, computed_at)] = answers
    for row in rows:
        row["kubernetes_profile__answers"] = _ANSWERS.get(
            (row["kubernetes_profile_id"], row["kubernetes_profile__computed_at"]))


def kubernetes_profile_answers(*, profile_id: int) -> tuple[object, dict] | None:
    """(computed_at, answers) of one stored Kubernetes profile, or None when there is no such profile. One query."""
    from .models import KubernetesProfile

    return KubernetesProfile.objects.filter(id=profile_id).values_list("computed_at", "answers").first()
