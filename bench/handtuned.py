"""A hand-tuned offers endpoint over the same PostgreSQL rows as the API: the practical limit bench/api.py compares the
API with.

A plain WSGI function (no Django, no DRF, no form validation): psycopg with one connection per server thread, the
slug and capability lookups read once per data version and kept in the process, the page read as one SQL statement
(the page of ids, then its joins; one index range per GPU, provider or profile merged in order, the list unnested
and joined LATERAL, when a list of them is asked, as offer_reads.offer_page_ids does), the same per-offer
Kubernetes filters (`offering`, `mig`, `rdma`, `unknown`: the ids of the matching profiles, from the profiles'
answers read once per data version; with unknown=exclude read as one index range per profile as the API does),
and the same JSON fields (each offer's `kubernetes` answers as the list gives them without kubernetes_reasons,
decoded from the profiles' stored answers once per data version, as the API keeps them; bench/api.py compares the
first pages field by field), `count` rule (exact up to 10,000 offers or the end of the page
asked for, else "more than", counted for every request) and
`left_out_for_unknown` counts (total and per provider) as `/api/v1/offers/`. orjson when it is installed, else json.

It knows the parameters bench/_mix.py draws only (gpu, provider, price_per_gpu_hour_max, offering, mig, rdma,
unknown, continent, gpu_count_min, gpu_memory_min, spot, ordering, page, page_size) and nothing of validation: it is a
measure, not a product. bench/api.py serves it with gunicorn as it serves the API:

    BENCH_DATABASE_URL=postgres://... gunicorn bench.handtuned:application -k gthread -w 2 --threads 4
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlencode

import psycopg

from providers.kubernetes import QUESTIONS  # plain Python: the question order of the API's `kubernetes` object
from providers.pricing import is_old, retires_on  # plain Python: when a price is old, retirement days

try:
    import orjson

    def dumps(data) -> bytes:
        return orjson.dumps(data)
except ImportError:  # not a dependency of the project
    import json

    def dumps(data) -> bytes:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/h_api_bench")
STALE_AFTER = timedelta(hours=int(os.environ.get("STALE_AFTER_HOURS", "24")))
PAGE_SIZE = 50

ORDERINGS = {  # parameter -> (column, descending)
    "": ("price_per_gpu_hour_usd", False), "price_per_gpu_hour": ("price_per_gpu_hour_usd", False),
    "price_hour": ("price_hour_usd", False), "-gpu_memory": ("gpu_memory_gb", True),
}
OFFER_COLUMNS = (
    "id", "instance_type", "region", "country", "continent", "gpu_id", "gpu_name", "gpu_count", "gpu_memory_gb",
    "vcpus", "ram_gb", "currency", "price_hour", "spot_price_hour", "price_hour_usd", "spot_price_hour_usd",
    "price_per_gpu_hour_usd", "spot_price_per_gpu_hour_usd", "availability", "available_count",
    "availability_checked_at", "availability_since", "availability_recorded", "in_stock_share_7d",
    "in_stock_share_30d", "first_seen", "last_seen", "is_active", "price_as_of", "price_source_url", "gpu_fraction",
    "form_factor", "efa_interfaces", "spot_savings_pct", "spot_interruption", "spot_as_of",
    "commit_1y_price_hour_usd", "commit_1y_price_per_gpu_hour_usd", "commit_3y_price_hour_usd",
    "commit_3y_price_per_gpu_hour_usd", "commitment_as_of", "commitment_source_url", "region_confirmed",
    "gpu_memory_usable_gb", "price_dated_by",
)
SELECT_ROW = (
    ", ".join(f"o.{column}" for column in OFFER_COLUMNS)
    + ", p.slug, p.name, p.name_zh, p.kind, g.slug, g.name, g.vendor, g.family, g.memory_gb,"
    " s.slug, s.name, s.kind, s.url, s.license, s.revision, s.as_of, s.last_success_at, s.price_evidence,"
    " s.price_evidence_zh, s.price_evidence_url, o.kubernetes_profile_id"
)
RDMA_KEYS = ("answer", "fabric", "efa_interfaces", "fabric_class", "interfaces", "bandwidth_gbps")
# An offer without a stored profile: every answer unknown, as the API gives it.
NO_PROFILE = {question: ({"answer": "unknown", "fabric": "unknown", "efa_interfaces": None, "fabric_class": "unknown",
                          "interfaces": None, "bandwidth_gbps": None} if question == "rdma"
                         else {"answer": "unknown"}) for question in QUESTIONS}


def states(answers: dict) -> dict:
    """A profile's `kubernetes` object as the list gives it (each answer's state; the fabric's details for rdma)."""
    return {question: ({key: answers[question].get(key, "unknown" if key == "fabric_class" else None)
                        for key in RDMA_KEYS} if question == "rdma" else {"answer": answers[question]["answer"]})
            for question in QUESTIONS}

_local = threading.local()
_lock = threading.Lock()
_catalog: dict = {"version": None}  # replaced whole, never changed in place: a reader keeps the one it got


def connection() -> psycopg.Connection:
    conn = getattr(_local, "connection", None)
    if conn is None or conn.closed:
        conn = _local.connection = psycopg.connect(DATABASE_URL, autocommit=True)
    return conn


def data_version(cursor) -> object:
    """The counter the API keys its counts on; before it existed (migration 0008), the API's rule was the latest
    successful run plus a 60-second lifetime, which this follows on such a schema."""
    if getattr(_local, "versioned", True):
        try:
            cursor.execute("SELECT version FROM providers_dataversion WHERE id = 1")
            return cursor.fetchone()[0]
        except psycopg.errors.UndefinedTable:
            _local.versioned = False
    cursor.execute("SELECT MAX(id) FROM providers_scraperun WHERE status = 'succeeded'")
    return (cursor.fetchone()[0], int(datetime.now(UTC).timestamp()) // 60)


def catalog(cursor, version) -> dict:
    """Slug -> id of GPUs and providers and each profile's Kubernetes answers, read once per data version."""
    global _catalog
    with _lock:
        if _catalog["version"] == version:
            return _catalog
    cursor.execute("SELECT slug, id FROM providers_gpumodel")
    gpus = dict(cursor.fetchall())
    cursor.execute("SELECT slug, id FROM providers_provider")
    providers = dict(cursor.fetchall())
    # Each offer's own Kubernetes answers (its KubernetesProfile), as the API filters them.
    cursor.execute(f"SELECT id, {', '.join(PROFILE_FILTER_COLUMNS)} FROM providers_kubernetesprofile")
    profiles = {row[0]: dict(zip(PROFILE_FILTER_COLUMNS, row[1:], strict=True)) for row in cursor.fetchall()}
    # And each profile's answers as the list shows them, decoded once per data version (the API keeps them too).
    cursor.execute("SELECT id, answers FROM providers_kubernetesprofile")
    shown = {profile_id: states(answers) for profile_id, answers in cursor.fetchall()}
    fresh = {"version": version, "gpus": gpus, "providers": providers, "profiles": profiles, "shown": shown}
    with _lock:
        _catalog = fresh
    return fresh


# The Kubernetes choices the benchmark asks for -> the profile column and the answer that matches (providers.filters:
# OFFERING and RDMA_TERMS; each is one column here). With unknown=include an "unknown" answer matches too, and so
# does an offer without a profile; with unknown=exclude (the default) neither.
K8S_TERMS = {
    ("offering", "managed"): ("managed_node", "yes"), ("offering", "byo"): ("byo", "yes"),
    ("mig", "yes"): ("mig", "yes"),
    ("rdma", "any"): ("fabric_class", "gpudirect_rdma"), ("rdma", "infiniband"): ("fabric", "infiniband"),
}
PROFILE_FILTER_COLUMNS = ("managed_node", "byo", "mig", "fabric_class", "fabric")
# As selectors.RANGE_INDEXED and MAX_RANGES: which id lists are read as one index range per value, per ordering.
RANGE_INDEXED = {"price_per_gpu_hour_usd": ("gpu_id", "provider_id", "kubernetes_profile_id"),
                 "price_hour_usd": ("gpu_id", "provider_id"),
                 "-gpu_memory_gb": ("gpu_id", "provider_id")}  # by memory, largest first (migration 0030)
PRICES = ("price_per_gpu_hour_usd", "price_hour_usd")  # the orders that need no tiebreak but the id
MAX_RANGES = {"gpu_id": 40, "provider_id": 40, "kubernetes_profile_id": 250}
MAX_RANGES_IN_A_CONTINENT = {"kubernetes_profile_id": 100}
MAX_MEMORY_RANGES = 8  # as offer_reads: a memory minimum few sizes reach, one range per size, by price per GPU-hour
MEMORY_SIZES = ("WITH RECURSIVE s(v) AS ((SELECT gpu_memory_gb FROM providers_offer WHERE is_active AND gpu_memory_gb "
                ">= %s ORDER BY 1 DESC NULLS LAST LIMIT 1) UNION ALL SELECT (SELECT gpu_memory_gb FROM providers_offer "
                "WHERE is_active AND gpu_memory_gb >= %s AND gpu_memory_gb < s.v ORDER BY 1 DESC NULLS LAST LIMIT 1) "
                "FROM s WHERE s.v IS NOT NULL) SELECT v FROM s WHERE v IS NOT NULL LIMIT %s")


def where_clause(params: dict, cat: dict, column: str) -> tuple[list[str], list, tuple[str, list[int], bool] | None,
                                                                  list[tuple[str, list]] | None]:
    """Conditions, their parameters, the (column, ids) list to split into index ranges, if any, and the WHEREs of the
    offers these filters leave out only because an answer is unknown (what unknown=include would add: the API's
    `left_out_for_unknown`; disjoint parts, each with its values), if a filter can leave one out."""
    include = params.get("unknown", ["exclude"])[0] == "include"
    parts: list[tuple[str, list]] = [("is_active", [])]
    # A filter whose answer may be unknown: (strict condition, its values, loose condition, its values, the
    # condition of an unknown answer on the offer's own columns, None for a Kubernetes answer).
    unknowable: list[tuple[str, list, str, list]] = []
    resolved: dict[str, list[int]] = {}

    def listed(name):
        return [part for raw in params.get(name, []) for part in raw.split(",") if part]

    if "gpu" in params:
        resolved["gpu_id"] = ids = sorted({cat["gpus"][slug] for slug in listed("gpu")})
        parts.append(("gpu_id = ANY(%s)", [ids]))
    if "provider" in params:
        resolved["provider_id"] = ids = sorted({cat["providers"][slug] for slug in listed("provider")})
        parts.append(("provider_id = ANY(%s)", [ids]))
    asked = [K8S_TERMS[(name, value)] for name in ("offering", "mig", "rdma") for value in listed(name)]
    if asked:
        # With unknown=include an "unknown" answer matches too, and so does an offer without a profile.
        widened = sorted(profile_id for profile_id, answers in cat["profiles"].items()
                         if all(answers[column_] in (state, "unknown") for column_, state in asked))
        either = "(kubernetes_profile_id = ANY(%s) OR kubernetes_profile_id IS NULL)"
        if include:  # one more index range, of the offers without a profile (as the API's)
            resolved["kubernetes_profile_id"] = [*widened, None]
            parts.append((either, [widened]))
        else:
            ids = sorted(profile_id for profile_id, answers in cat["profiles"].items()
                         if all(answers[column_] == state for column_, state in asked))
            resolved["kubernetes_profile_id"] = ids
            unknowable.append(("kubernetes_profile_id = ANY(%s)", [ids], either, [widened], None))
    if "gpu_count_min" in params:
        parts.append(("gpu_count >= %s", [params["gpu_count_min"][0]]))
    # An offer with no stated memory or no price is unknown (filters.unknown.filter_stated_minimum / _maximum).
    for name, column_, op in (("price_per_gpu_hour_max", "price_per_gpu_hour_usd", "<="),
                              ("gpu_memory_min", "gpu_memory_gb", ">=")):
        if name in params:
            bound, either = params[name][0], f"({column_} {op} %s OR {column_} IS NULL)"
            if include:
                parts.append((either, [bound]))
            else:
                unknowable.append((f"{column_} {op} %s", [bound], either, [bound], f"{column_} IS NULL"))
    continents = listed("continent")
    if continents:  # confirmed regions only unless unknown=include (providers.filters.filter_place)
        # one continent as a plain equality, several as an array (as the API)
        place, value = ("continent = %s", continents[0]) if len(continents) == 1 else ("continent = ANY(%s)",
                                                                                       continents)
        if include:
            parts.append((place, [value]))
        else:
            unknowable.append((f"{place} AND region_confirmed", [value], place, [value],
                               "region_confirmed IS NOT TRUE"))
    if "spot" in params:  # spot sold but its price not published is unknown to spot=true (filters.filter_spot)
        sold = "(spot_price_hour IS NOT NULL OR spot_savings_pct IS NOT NULL)"
        if params["spot"][0] != "true":
            parts.append(("spot_price_hour IS NULL", []))
        elif include:
            parts.append((sold, []))
        else:
            unknowable.append(("spot_price_hour IS NOT NULL", [], sold, [],
                               "spot_price_hour IS NULL AND spot_savings_pct IS NOT NULL"))
    split = None
    for candidate in RANGE_INDEXED.get(column, ()):
        ids = resolved.get(candidate)
        most = MAX_RANGES[candidate]
        if len(continents) == 1 and candidate in MAX_RANGES_IN_A_CONTINENT:
            most = min(most, MAX_RANGES_IN_A_CONTINENT[candidate])
        if ids and len(ids) <= most:
            split = (candidate, [id_ for id_ in ids if id_ is not None], None in ids)
            break
    if split is None and len(continents) == 1 and include and column in PRICES:
        split = ("region_confirmed", [True, False], True)  # one range per region basis, as the API
    conditions = [sql for sql, _v in parts] + [sql for sql, *_rest in unknowable]
    values = [value for _sql, vs in parts for value in vs] + [value for _s, vs, *_rest in unknowable for value in vs]
    left_out = None
    if unknowable:
        every = " AND ".join(f"({sql})" for sql, *_rest in unknowable)
        sides = [side for *_rest, side in unknowable]
        where = " AND ".join([*(sql for sql, _v in parts), *(loose for *_s, loose, _lv, _side in unknowable),
                              f"NOT COALESCE({every}, false)"])
        # As the API (filters.unknown.left_out_for_unknown): with offer conditions only, one disjoint part per
        # condition (unknown for it, for none before it), its unknown side said outright so an index finds it.
        # A condition before it is said as matching and not unknown (the same offers), so that an index serves it.
        values_ = [*(value for _sql, vs in parts for value in vs),
                   *(value for *_s, _l, lvs, _side in unknowable for value in lvs),
                   *(value for _s, vs, *_rest in unknowable for value in vs)]
        left_out = [(where, values_)] if None in sides else [
            (" AND ".join([where, side, *(f"NOT ({earlier})" for earlier in sides[:k]),
                           *(matching for matching, *_rest in unknowable[:k])]),
             [*values_, *(value for _m, vs, *_rest in unknowable[:k] for value in vs)])
            for k, side in enumerate(sides)]
    return conditions, values, split, left_out


def page_sql(conditions, values, split, column, descending, offset, size) -> tuple[str, list]:
    direction = "DESC NULLS LAST" if descending else "ASC NULLS LAST"
    # As the API: an ordering by a price is broken by id; any other by the price per GPU-hour, then id.
    tiebreak = "" if column in PRICES else ", price_per_gpu_hour_usd ASC NULLS LAST"
    order = f"{column} {direction}{tiebreak}, id"
    where = " AND ".join(conditions)
    tie_column = "NULL::numeric" if not tiebreak else "price_per_gpu_hour_usd"
    if split:  # one index range per value, the list one array parameter (as offer_reads._page_ids_sql)
        array = {"region_confirmed": "boolean[]", "gpu_memory_gb": "numeric[]"}.get(split[0], "bigint[]")
        ranges = (f"SELECT r.id, r.k, r.t FROM unnest(%s::{array}) AS ranges(value) CROSS JOIN LATERAL "
                  f"(SELECT id, {column} AS k, {tie_column} AS t FROM providers_offer WHERE {where} "
                  f"AND {split[0]} = ranges.value ORDER BY {order} LIMIT %s) r")
        range_values = [split[1], *values, offset + size]
        if split[2]:  # and the range of the offers with no value in the column
            ranges += (f" UNION ALL (SELECT id, {column} AS k, {tie_column} AS t FROM providers_offer WHERE {where} "
                       f"AND {split[0]} IS NULL ORDER BY {order} LIMIT %s)")
            range_values += [*values, offset + size]
        ids = (f"SELECT r.id, r.k, r.t FROM ({ranges}) r ORDER BY r.k {direction}, r.t ASC NULLS LAST, r.id "
               "LIMIT %s OFFSET %s")
        values = [*range_values, size, offset]
    else:
        ids = (f"SELECT id, {column} AS k, {tie_column} AS t FROM providers_offer WHERE {where} ORDER BY {order} "
               "LIMIT %s OFFSET %s")
        values = [*values, size, offset]
    sql = (f"SELECT {SELECT_ROW} FROM ({ids}) page JOIN providers_offer o ON o.id = page.id "
           "JOIN providers_provider p ON p.id = o.provider_id LEFT JOIN providers_gpumodel g ON g.id = o.gpu_id "
           "JOIN providers_datasource s ON s.id = o.source_id "
           f"ORDER BY page.k {direction}, page.t ASC NULLS LAST, page.id")
    return sql, values


def number(value):
    return None if value is None else float(value)


def moment(value):
    if value is None:
        return None
    text = value.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def row_data(row, url_head: str, cutoff: datetime, now: datetime, shown: dict) -> dict:
    (offer_id, instance_type, region, country, continent, gpu_id, gpu_name, gpu_count, gpu_memory_gb, vcpus, ram_gb,
     currency, price_hour, spot_price_hour, price_hour_usd, spot_price_hour_usd, per_gpu, spot_per_gpu, availability,
     available_count, checked_at, since, recorded, share_7d, share_30d, first_seen, last_seen, is_active, price_as_of,
     price_source_url, gpu_fraction, form_factor, efa_interfaces, spot_savings_pct, spot_interruption, spot_as_of,
     commit_1y, commit_1y_per_gpu, commit_3y, commit_3y_per_gpu, commitment_as_of, commitment_source_url,
     region_confirmed, gpu_memory_usable_gb, price_dated_by,
     p_slug, p_name, p_name_zh, p_kind, g_slug, g_name, g_vendor, g_family, g_memory, s_slug, s_name, s_kind, s_url,
     s_license, s_revision, s_as_of, s_last_success, s_evidence, s_evidence_zh, s_evidence_url, profile_id) = row
    return {
        "id": offer_id, "url": f"{url_head}{offer_id}/",
        "provider": {"slug": p_slug, "name": p_name, "name_zh": p_name_zh, "kind": p_kind},
        "instance_type": instance_type, "region": region, "country": country, "continent": continent,
        "region_confirmed": region_confirmed,
        "gpu": None if gpu_id is None else {"slug": g_slug, "name": g_name, "vendor": g_vendor, "family": g_family,
                                            "memory_gb": number(g_memory)},
        "gpu_name": gpu_name, "gpu_count": number(gpu_count), "gpu_memory_gb": number(gpu_memory_gb),
        "gpu_memory_usable_gb": number(gpu_memory_usable_gb), "vcpus": number(vcpus), "ram_gb": number(ram_gb),
        "currency": currency, "price_hour": number(price_hour),
        "spot_price_hour": number(spot_price_hour), "price_hour_usd": number(price_hour_usd),
        "spot_price_hour_usd": number(spot_price_hour_usd), "price_per_gpu_hour_usd": number(per_gpu),
        "spot_price_per_gpu_hour_usd": number(spot_per_gpu), "availability": availability,
        "available_count": available_count, "availability_checked_at": moment(checked_at),
        "availability_since": moment(since), "availability_recorded": bool(recorded),
        "in_stock_share_7d": number(share_7d), "in_stock_share_30d": number(share_30d),
        "first_seen": moment(first_seen), "last_seen": moment(last_seen),
        "is_active": is_active, "is_stale": s_last_success is None or s_last_success < cutoff,
        "price_as_of": moment(price_as_of), "price_dated_by": price_dated_by,
        "price_is_old": is_old(price_as_of, now),
        "retires_on": retires_on(p_slug, instance_type),
        "price_source_url": price_source_url, "gpu_fraction": number(gpu_fraction),
        "form_factor": form_factor, "efa_interfaces": efa_interfaces, "spot_savings_pct": spot_savings_pct,
        "spot_interruption": spot_interruption, "spot_as_of": None if spot_as_of is None else spot_as_of.isoformat(),
        "commit_1y_price_hour_usd": number(commit_1y), "commit_1y_price_per_gpu_hour_usd": number(commit_1y_per_gpu),
        "commit_3y_price_hour_usd": number(commit_3y), "commit_3y_price_per_gpu_hour_usd": number(commit_3y_per_gpu),
        "commitment_as_of": None if commitment_as_of is None else commitment_as_of.isoformat(),
        "commitment_source_url": commitment_source_url,
        "source": {"slug": s_slug, "name": s_name, "kind": s_kind, "url": s_url, "license": s_license,
                   "revision": s_revision, "as_of": None if s_as_of is None else s_as_of.isoformat(),
                   "last_success_at": moment(s_last_success), "price_evidence": s_evidence,
                   "price_evidence_zh": s_evidence_zh, "price_evidence_url": s_evidence_url},
        "kubernetes": NO_PROFILE if profile_id is None else shown[profile_id],
    }


# The API's count rule (providers.offer_reads.COUNT_EXACT_UP_TO; bench/api.py checks they agree).
COUNT_EXACT_UP_TO = 10_000


def application(environ, start_response):
    query = environ.get("QUERY_STRING", "")
    params = parse_qs(query)
    page = int(params.pop("page", ["1"])[0])
    size = int(params.pop("page_size", [str(PAGE_SIZE)])[0])
    column, descending = ORDERINGS[params.pop("ordering", [""])[0]]
    host = environ.get("HTTP_HOST", "127.0.0.1")
    base = f"http://{host}{environ.get('PATH_INFO', '/')}"
    with connection().cursor() as cursor:
        version = data_version(cursor)
        cat = catalog(cursor, version)
        conditions, values, split, left_out_where = where_clause(params, cat, f"-{column}" if descending else column)
        if split is None and column == "price_per_gpu_hour_usd" and not descending and "gpu_memory_min" in params:
            minimum = params["gpu_memory_min"][0]
            cursor.execute(MEMORY_SIZES, [minimum, minimum, MAX_MEMORY_RANGES + 1])
            sizes = [row[0] for row in cursor.fetchall()]
            if 0 < len(sizes) <= MAX_MEMORY_RANGES:  # with unknown=include, the no-memory range too
                split = ("gpu_memory_gb", sizes, params.get("unknown", ["exclude"])[0] == "include")
        limit = max(COUNT_EXACT_UP_TO, page * size)
        cursor.execute(f"SELECT count(*) FROM (SELECT 1 FROM providers_offer WHERE {' AND '.join(conditions)} "
                       f"LIMIT %s) AS counted", [*values, limit + 1])
        found = cursor.fetchone()[0]
        count, exact = min(found, limit), found <= limit
        left_out = {}
        if left_out_where is not None:
            # Counted as the API counts them (up to COUNT_EXACT_UP_TO, as the offers): the first 10,001 found.
            union = " UNION ALL ".join(f"SELECT provider_id FROM providers_offer WHERE {where}"
                                       for where, _values in left_out_where)
            cursor.execute(f"SELECT provider_id, count(*) FROM ({union} LIMIT %s) AS found GROUP BY provider_id",
                           [*(value for _where, values in left_out_where for value in values), COUNT_EXACT_UP_TO + 1])
            slugs = {provider_id: slug for slug, provider_id in cat["providers"].items()}
            left_out = {slugs[provider_id]: n for provider_id, n in cursor.fetchall()}
        left_out_found = sum(left_out.values())
        sql, sql_values = page_sql(conditions, values, split, column, descending, (page - 1) * size, size)
        cursor.execute(sql, sql_values)
        rows = cursor.fetchall()
    now = datetime.now(UTC)
    cutoff = now - STALE_AFTER
    url_head = f"http://{host}/api/v1/offers/"
    others = [(name, value) for name, value in parse_qs(query).items() if name != "page"]

    def link(number_):
        return f"{base}?{urlencode([*((n, ','.join(v)) for n, v in others), ('page', number_)])}"

    body = dumps({
        "count": count,
        "count_exact": exact,
        "next": link(page + 1) if page * size < count or not exact else None,
        "previous": link(page - 1) if page > 1 else None,
        "left_out_for_unknown": {"total": min(left_out_found, COUNT_EXACT_UP_TO),
                                 "exact": left_out_found <= COUNT_EXACT_UP_TO, "by_provider": left_out},
        "results": [row_data(row, url_head, cutoff, now, cat["shown"]) for row in rows],
    })
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]
