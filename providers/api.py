"""The read-only REST API under /api/v1/: one class per operation, each parsing its query, asking one selector (or the
OfferFilterSet, the one filter definition the pages and the digest use too) and rendering its own output serializer.

Strict by design, because its users are scripts: a query parameter the operation does not know (`?gpu_modle=h100`),
a value it cannot use or a single-value parameter given twice answers 400 with `{"parameter": ["what is wrong"]}`
instead of being ignored; an unknown page or page size too. Writes answer 405 (the admin and the scrapers are the
only writers). Every list is paginated by page number with ties broken by id, so pages are stable; its CSV twin (the
same path ending in .csv; `?format=csv` or `Accept: text/csv` on the JSON path too) returns the same rows as CSV,
streamed straight from the database when no page is asked for. Answers carry ETag, Last-Modified and Cache-Control
(304 on If-None-Match). Anonymous clients are rate limited per IP (settings.API_ANON_RATE, counted in the default
cache: Redis in production), with RateLimit headers on every answer. The contract as users see it: docs/api.md.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re

from django import forms
from django.conf import settings
from django.core.paginator import EmptyPage
from django.core.paginator import Paginator as DjangoPaginator
from django.http import StreamingHttpResponse
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date
from django_filters import filters as django_filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from nodesoftware import fit as node_fit

from . import offer_reads, selectors, versions
from .api_schema import DETAIL_ERROR, CsvAutoSchema
from .capabilities import CAPABILITIES
from .coverage import offers_left_out_for_unknown
from .filters import (
    BooleanFilter,
    CountryFilter,
    MultipleChoice,
    NullsLastOrderingFilter,
    OfferFilterSet,
    VersionFilter,
    multi_valued_parameters,
    offer_filterset,
    repeated_parameters,
    unknown_parameters,
)
from .filters.fields import VERSION_PATTERN, StrictBooleanField
from .limits import ReleasingStream, client_ip, export_slot, window_hit
from .models import GpuModel
from .renderers import CSVRenderer, csv_columns, csv_stream
from .serializers import (
    CompareSerializer,
    GpuSerializer,
    OfferDetailSerializer,
    OfferListCsvSerializer,
    OfferListSerializer,
    OfferSerializer,
    PriceObservationSerializer,
    ProviderDetailSerializer,
    ProviderListSerializer,
    SourceStatusSerializer,
    capability_cells,
    offer_data,
)

logger = logging.getLogger(__name__)

PAGE_PARAMETERS = frozenset({"page", "page_size"})
MAX_COMPARED_PROVIDERS = 10
CSV_CHUNK_ROWS = 2000


# --- plumbing shared by every operation ----------------------------------------------------------------------------


class AnonymousRateThrottle(BaseThrottle):
    """Requests per client IP, at settings.API_ANON_RATE ("120/minute"; empty or "off" switches it off).

    Counted atomically in a fixed window (providers.limits.window_hit: the cache's add and incr, Redis INCR in
    production), so N concurrent requests count N; DRF's own throttle reads a history, then writes it back, and lets
    concurrent requests through on the same reading. The client is providers.limits.client_ip: REMOTE_ADDR unless
    DJANGO_NUM_PROXIES says how many proxies to look through. The rate is read per request, so deployments and tests
    can change it.
    """

    setting = "API_ANON_RATE"
    scope = "api"
    _wait: float | None = None

    def allow_request(self, request, view):
        rate = getattr(settings, self.setting, None)
        if not rate or str(rate).lower() == "off":
            return True
        number, seconds = SimpleRateThrottle.parse_rate(None, rate)
        hits, remaining = window_hit(f"throttle:{self.scope}:{client_ip(request)}", seconds)
        request.rate_limit = (self.scope, number, seconds, max(0, number - hits), math.ceil(remaining))
        if hits <= number:
            return True
        self._wait = max(1.0, remaining)
        return False

    def wait(self):
        return self._wait


class AdviseRateThrottle(AnonymousRateThrottle):
    """POST /api/v1/advise/ per client IP, at settings.API_ADVISE_RATE ("20/minute"): each request ranks every offer."""

    setting = "API_ADVISE_RATE"
    scope = "advise"


def rate_limit_headers(request, response) -> None:
    """RateLimit-Policy and RateLimit, as the IETF draft names them (draft-ietf-httpapi-ratelimit-headers-10,
    https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/): the policy (`"api";q=120;w=60`: 120
    requests per 60-second window) and what is left of it (`"api";r=37;t=21`: 37 more in the 21 seconds before the
    window ends), on every answer of a throttled operation, so a client can slow down before a 429."""
    state = getattr(request, "rate_limit", None)
    if state is not None:
        name, quota, window, remaining, reset = state
        response["RateLimit-Policy"] = f'"{name}";q={quota};w={window}'
        response["RateLimit"] = f'"{name}";r={remaining};t={reset}'


# How long a client or a shared cache may reuse a read answer before asking again (with If-None-Match): the most
# frequent refresh, the stock checks, runs every 15 minutes (comparator.celery), so an answer is reused for at most a
# third of that.
CACHE_MAX_AGE_SECONDS = 300


def conditional(request, response, *, version: int | None = None):
    """Cache-Control and Vary on a 200 answer to GET (or HEAD); and, unless it is streamed, an ETag and Last-Modified,
    with 304 Not Modified when the request's If-None-Match names that ETag.

    The ETag is the data version (providers.versions: raised by every write to the data) and a digest of the answer
    itself, so an answer that changes with the clock alone (a source turning stale, a source's age in hours) or with
    the language changes its tag too. Last-Modified is the latest successful run of any source: when the data was
    last refreshed. `version`: the data version the answer was read under, when the caller has it."""
    if request.method not in ("GET", "HEAD") or response.status_code != 200:
        return response
    patch_cache_control(response, public=True, max_age=CACHE_MAX_AGE_SECONDS)
    patch_vary_headers(response, ["Accept"])
    if response.streaming:
        return response
    if not getattr(response, "is_rendered", True):
        response.render()
    with versions.data_version_scope(version) as version:
        refreshed_at = versions.refreshed_at()
    response["ETag"] = f'"{version}-{hashlib.sha256(response.content).hexdigest()[:20]}"'
    if refreshed_at is not None:
        response["Last-Modified"] = http_date(refreshed_at.timestamp())
    return get_conditional_response(request, etag=response["ETag"], response=response)


class ExportsBusy(APIException):
    status_code = 503
    default_detail = ("Too many whole-table CSV exports are running; retry in a minute, or ask for pages "
                      "(page, page_size) which are not limited this way.")
    default_code = "exports_busy"

    def __init__(self):
        super().__init__()
        self.wait = 60


class StrictContentNegotiation(DefaultContentNegotiation):
    """`?format=xml` is a 400 naming `format`, not DRF's bare 404."""

    def select_renderer(self, request, renderers, format_suffix=None):
        requested = format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        # An empty `?format=` is refused too: the schema's enum does not include it.
        if requested is not None and requested not in {renderer.format for renderer in renderers}:
            known = ", ".join(renderer.format for renderer in renderers)
            raise ValidationError({"format": [f"Unknown format {requested!r}; use one of: {known}."]})
        return super().select_renderer(request, renderers, format_suffix)


def _slug_shaped(value: str) -> bool:
    """Whether `value` could be a slug of ours (ASCII letters, digits, `-`, `_`, `.`, at most 100 characters): anything
    else is no object, answered without asking the database."""
    return bool(SLUG_SHAPE.fullmatch(value))


SLUG_SHAPE = re.compile(r"[A-Za-z0-9._-]{1,100}")


def _positive_int(name: str, raw: str, maximum: int | None = None) -> int:
    number = offer_reads.whole_number(raw, maximum)
    if number is None:
        limit = f"from 1 to {maximum}" if maximum else "of 1 or more"
        raise ValidationError({name: [f"Use a whole number {limit}; got {raw!r}."]})
    return number


class ApiPagination(PageNumberPagination):
    """Page-number pagination that refuses what DRF's silently corrects (a page size of 0, 10,000 or "ten", a page
    past the end), so a script learns about its mistake instead of reading a different page than it asked for."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        # Given but empty is an error like any other non-number: the schema says integer.
        return self.page_size if raw is None else _positive_int("page_size", raw, self.max_page_size)

    def paginate_queryset(self, queryset, request, view=None, count: int | None = None, fetch=None):
        """`count`, when the caller knows a cheaper way to count the rows than `queryset.count()` (or has it cached);
        `fetch(offset, limit)`, when it knows a better way to read a page than slicing `queryset`."""
        self.request = request
        number, page_size = self.requested(request)
        paginator = DjangoPaginator(queryset, page_size)
        if count is not None:
            paginator.count = count  # a cached_property: setting it skips Django's own COUNT
        try:
            self.page = paginator.page(number)
        except EmptyPage:
            # A page past the end is a missing object (404), not a malformed request: the schema allows any page >= 1.
            raise NotFound(f"Page {number} is past the last page ({paginator.num_pages}).") from None
        if count is not None:
            # Django cuts the last page at `count`; the rows are read by `fetch` or sliced by the page size.
            start = (number - 1) * page_size
            self.page.object_list = (fetch(start, page_size) if fetch is not None
                                     else queryset[start:start + page_size])
        return list(self.page)

    def requested(self, request) -> tuple[int, int]:
        """(page number, page size) the request asks for; a 400 naming the parameter when either is malformed."""
        raw = request.query_params.get(self.page_query_param)
        return 1 if raw is None else _positive_int("page", raw, MAX_PAGE), self.get_page_size(request)

    def get_paginated_response_schema(self, schema):
        link = {"type": ["string", "null"], "format": "uri"}
        return {"type": "object", "required": ["count", "next", "previous", "results"], "properties": {
            "count": {"type": "integer", "description": "Rows in all pages"},
            "next": {**link, "description": "The next page's URL; null on the last page"},
            "previous": {**link, "description": "The previous page's URL; null on the first page"},
            "results": schema,
        }}

    def get_schema_operation_parameters(self, view):
        return [
            {"name": "page", "in": "query", "required": False,
             "description": "Page number, from 1; past the last page answers 404.",
             "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE}},
            {"name": "page_size", "in": "query", "required": False,
             "description": f"Rows per page, 1 to {self.max_page_size} (default {self.page_size}).",
             "schema": {"type": "integer", "minimum": 1, "maximum": self.max_page_size}},
        ]


class OfferListPagination(ApiPagination):
    """The offers list's pages say whether `count` is exact (offer_reads.offer_count: above 10,000 offers, or the end
    of the page asked for, it is "more than `count`") and how many offers the filters left out because an answer is
    unknown."""

    def paginate_offers(self, request, *, filters, view) -> list[dict]:
        """One page of `filters`' offers (offer_reads.offer_page) and their count, counted through this page."""
        number, size = self.requested(request)
        self.counted = offer_reads.offer_count(filters=filters, through=number * size)
        return self.paginate_queryset(
            offer_reads.offer_ids(filters=filters), request, view=view, count=self.counted.for_paginator,
            fetch=lambda offset, limit: offer_reads.offer_page(filters=filters, offset=offset, limit=limit))

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        counted = getattr(self, "counted", None)
        if counted is not None:
            response.data = {"count": counted.value, "count_exact": counted.exact,
                             **{key: value for key, value in response.data.items() if key != "count"}}
        return response

    def get_paginated_response_schema(self, schema):
        data = super().get_paginated_response_schema(schema)
        properties = dict(data["properties"])
        results = properties.pop("results")
        properties["count"] = {
            "type": "integer", "minimum": 0,
            "description": f"Offers in all pages: exactly, when count_exact; else more than this many (offers are "
                           f"counted exactly up to {offer_reads.COUNT_EXACT_UP_TO:,} or to the end of the page asked "
                           f"for, whichever is further)."}
        properties["count_exact"] = {"type": "boolean", "description": "Whether `count` is exact or a lower bound"}
        properties["left_out_for_unknown"] = {
            "type": "object", "required": ["total", "exact", "by_provider", "questions"],
            "description": "Offers these filters leave out only because an answer they ask about is unknown (a "
                           "Kubernetes answer, the fabric, the form factor): add unknown=include to get them, marked "
                           "unknown. Zero with unknown=include or when no such filter is set.",
            "properties": {
                "total": {"type": "integer", "minimum": 0,
                          "description": f"Exactly, when `exact`; else more than this many (counted exactly up to "
                                         f"{offer_reads.COUNT_EXACT_UP_TO:,}, as `count` is)"},
                "exact": {"type": "boolean", "description": "Whether `total` and `by_provider` are exact"},
                "by_provider": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1},
                                "description": "Provider slug -> offers left out (when not `exact`: among the first "
                                               "ones found, so lower bounds, and a provider may be missing)"},
                "questions": {"type": "array", "items": {"type": "string"},
                              "description": "The filters whose unknown answers left them out"},
            }}
        properties["results"] = results
        return {**data, "properties": properties,
                "required": [*data.get("required", []), "count_exact", "left_out_for_unknown"]}


ERROR_400 = OpenApiResponse(
    response={"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
    description="An invalid or unknown query parameter: each offending parameter with what is wrong with it.",
    examples=[OpenApiExample("typo", value={"gpu_modle": ["Unknown query parameter."]})],
)
ERROR_404 = OpenApiResponse(response=DETAIL_ERROR, description="No such object.")
ERROR_404_PAGE = OpenApiResponse(response=DETAIL_ERROR, description="The page asked for is past the last page.")
ERROR_429 = OpenApiResponse(response=DETAIL_ERROR, description="Rate limited (settings.API_ANON_RATE per client IP); "
                           "the Retry-After header says how many seconds to wait.")
CSV_BODY = OpenApiResponse(response={"type": "string"}, description="The rows as CSV (text/csv, UTF-8), a header "
                          "line first: one column per field of the JSON operation's rows, nested fields as "
                          "`provider.slug`, lists joined with `;`; the whole result streamed when no page is asked "
                          "for.")


def list_responses(serializer_class) -> dict:
    return {(200, "application/json"): serializer_class(many=True), (400, "application/json"): ERROR_400,
            (404, "application/json"): ERROR_404_PAGE, (429, "application/json"): ERROR_429}


def detail_responses(serializer_class) -> dict:
    return {(200, "application/json"): serializer_class, (400, "application/json"): ERROR_400,
            (404, "application/json"): ERROR_404, (429, "application/json"): ERROR_429}


KUBERNETES_REASONS = "kubernetes_reasons"
KUBERNETES_REASONS_PARAMETER = OpenApiParameter(
    KUBERNETES_REASONS, bool, default=False,
    description="true: each offer's Kubernetes answers with their reasons (English and Chinese) and source URLs, as "
                "/api/v1/offers/{id}/ gives them; false (the default): the answers only (and the fabric), a third "
                "of the page.")


def _true_or_false(name: str, raw: str | None) -> bool:
    """A yes/no parameter read as the FilterSet's boolean filters read theirs (the same words, the same error)."""
    try:
        return bool(StrictBooleanField(required=False).clean(raw))
    except forms.ValidationError as error:
        raise ValidationError({name: error.messages}) from error


# The JSON operations still answer `?format=csv` and `Accept: text/csv` with CSV, for scripts written before the CSV
# operations had their own paths (csv_operation); the schema documents the CSV operations instead, so a generated
# client never reads CSV where it expects JSON.


class ReadOnlyApi(GenericAPIView):
    """Base of every operation: anonymous GET only, JSON or CSV, throttled, refusing unknown query parameters."""

    authentication_classes: list = []  # nothing to log in to: reads are public, writes go through the admin
    permission_classes = [AllowAny]
    throttle_classes = [AnonymousRateThrottle]
    renderer_classes = [JSONRenderer, CSVRenderer]
    content_negotiation_class = StrictContentNegotiation
    filter_backends: list = []
    pagination_class = None
    http_method_names = ["get", "head", "options"]
    query_parameters: frozenset[str] = frozenset()  # what the operation reads besides `format`
    list_parameters: frozenset[str] = frozenset()  # those of them that take several values
    data_version: int | None = None  # the data version this request read its data under, if it read one

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        unknown = unknown_parameters(request.query_params, reads=self.query_parameters | {"format"})
        if unknown:
            known = ", ".join(sorted(self.query_parameters | {"format"}))
            raise ValidationError({name: [f"Unknown query parameter. This endpoint reads: {known}."]
                                   for name in unknown})
        refuse_repeated(request.query_params, many=self.list_parameters)

    def finalize_response(self, request, response, *args, **kwargs):
        # An error is always JSON: a CSV of {"detail": ...} would read as a one-row table to a script.
        if isinstance(response, Response) and response.status_code >= 400:
            # Not negotiated yet when negotiation itself failed (406): DRF would pick the first renderer, CSV.
            if not isinstance(getattr(request, "accepted_renderer", None), JSONRenderer):
                request.accepted_renderer, request.accepted_media_type = JSONRenderer(), "application/json"
        response = conditional(request, super().finalize_response(request, response, *args, **kwargs),
                               version=self.data_version)
        rate_limit_headers(request, response)  # after: a 304 is a new response
        return response

    def csv_serializer(self):
        """The serializer whose fields are the CSV columns (see providers.renderers)."""
        return self.get_serializer_class()()

    def wants_csv_stream(self, request) -> bool:
        return isinstance(request.accepted_renderer, CSVRenderer) and not (PAGE_PARAMETERS & set(request.query_params))

    def csv_response(self, objects, serializer, filename: str) -> StreamingHttpResponse:
        """The whole result as streamed CSV, holding one of the site's export slots (settings.API_CSV_EXPORTS_MAX)
        until the last row is sent or the client goes away; when none is free, 503 with Retry-After, and paged CSV
        still works."""
        slot = export_slot()
        if slot is None:
            raise ExportsBusy()
        rows = (serializer.to_representation(obj) for obj in objects)
        response = StreamingHttpResponse(ReleasingStream(csv_stream(csv_columns(serializer), rows), slot),
                                         content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    def paginated(self, rows, serializer_class, context, count: int | None = None):
        page = self.paginator.paginate_queryset(rows, self.request, view=self, count=count)
        return self.get_paginated_response(serializer_class(page, many=True, context=context).data)

    def one_by_slug(self, request, slug: str, get, what: str, listing: str) -> Response:
        """The object `get(slug=...)` finds, serialized; a 404 naming the list to choose from when there is none."""
        found = get(slug=slug) if _slug_shaped(slug) else None
        if found is None:
            raise NotFound(f"No {what} {slug!r}; see {listing}.")
        return Response(self.serializer_class(found, context={"request": request}).data)


# --- the OfferFilterSet as OpenAPI parameters ----------------------------------------------------------------------

SLUG_LISTS = {
    "gpu": ("GPU model slugs from /api/v1/gpus/", "h100"),
    "gpu_family": ("GPU families from /api/v1/gpus/ (`family`)", "H100"),
    "provider": ("Provider slugs from /api/v1/providers/", "lambda"),
}


# Page numbers the API reads; past the last page is a 404, past this a 400 (as the schema says).
MAX_PAGE = offer_reads.MAX_PAGE


def refuse_repeated(params, *, many) -> None:
    """A single-value parameter given twice is a 400 naming it: never one of its values kept silently."""
    repeated = repeated_parameters(params, many=many)
    if repeated:
        raise ValidationError({name: ["Given more than once; this parameter takes one value."] for name in repeated})


def filterset_parameters(filterset_class) -> list[OpenApiParameter]:
    """One documented query parameter per filter, derived from the FilterSet so the schema cannot drift from it."""
    parameters = []
    for name, field in filterset_class.base_filters.items():
        description = str(field.label or name)
        if field.extra.get("help_text"):
            description += f" ({str(field.extra['help_text']).rstrip('.')})"
        if isinstance(field, NullsLastOrderingFilter):
            orderings = list(field.param_map)
            enum = [*orderings, *(f"-{param}" for param in orderings)]
            parameters.append(OpenApiParameter(
                name, str, many=True, explode=False, enum=enum,
                description="Sort order, comma-separated; `-` for descending. Unknown values sort last either "
                            "way; ties are broken by id. Default: price_per_gpu_hour."))
        elif isinstance(field, MultipleChoice):
            if name in SLUG_LISTS:
                where, example = SLUG_LISTS[name]
                parameters.append(OpenApiParameter(
                    name, str, many=True, explode=False, description=f"{description}. {where}; several allowed, "
                    "comma-separated or repeated.",
                    examples=[OpenApiExample(example, value=[example])]))
            else:
                choices = [value for value, _ in field.extra["choices"]]
                parameters.append(OpenApiParameter(
                    name, str, many=True, explode=False, enum=choices,
                    description=f"{description}; several allowed, comma-separated or repeated."))
        elif isinstance(field, BooleanFilter):
            parameters.append(OpenApiParameter(name, OpenApiTypes.BOOL, description=description))
        elif isinstance(field, django_filters.NumberFilter):
            schema = {"type": "number", "minimum": field.extra.get("min_value", 0)}
            if "max_value" in field.extra:
                schema["maximum"] = field.extra["max_value"]
            parameters.append(OpenApiParameter(name, schema, description=description))
        elif isinstance(field, VersionFilter):
            # Empty means no filter, as for every parameter; otherwise VERSION_PATTERN.
            pattern = "^(" + VERSION_PATTERN.strip("^$") + ")?$"
            parameters.append(OpenApiParameter(name, {"type": "string", "pattern": pattern, "maxLength": 20},
                                               description=description))
        elif isinstance(field, CountryFilter):
            parameters.append(OpenApiParameter(name, str, pattern=r"^([A-Za-z]{2}(,[A-Za-z]{2})*)?$",
                                               description=description))
        else:
            # Text: Django's form fields refuse NUL characters (a 400 naming the parameter) and longer values.
            schema = {"type": "string", "pattern": "^[^\\x00]*$"}
            if field.extra.get("max_length"):
                schema["maxLength"] = field.extra["max_length"]
            parameters.append(OpenApiParameter(name, schema, description=description))
    return parameters


# --- offers --------------------------------------------------------------------------------------------------------


class OfferListApi(ReadOnlyApi):
    """GET /api/v1/offers/: offers filtered by the OfferFilterSet, a page at a time or as one CSV stream."""

    pagination_class = OfferListPagination
    serializer_class = OfferListSerializer
    query_parameters = frozenset(OfferFilterSet.base_filters) | PAGE_PARAMETERS | {KUBERNETES_REASONS}
    list_parameters = multi_valued_parameters(OfferFilterSet)
    kubernetes_reasons = False  # this request's kubernetes_reasons
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        operation_id="offers_list", tags=["offers"],
        summary="Offers, filtered and ordered",
        description="Active offers (add include_inactive=true for offers no longer listed), cheapest per GPU-hour "
                    "first. The same filters as the web page's. Without page or page_size, the CSV format streams "
                    "every matching row.",
        parameters=[*filterset_parameters(OfferFilterSet), KUBERNETES_REASONS_PARAMETER],
        responses=list_responses(OfferListSerializer),
    )
    def get(self, request):
        self.kubernetes_reasons = reasons = _true_or_false(KUBERNETES_REASONS,
                                                           request.query_params.get(KUBERNETES_REASONS))
        # One read of the data version per request: the FilterSet's slug and capability lookups and the count are
        # kept under it (versions.data_version_scope); the page itself is read and rendered for every request.
        with versions.data_version_scope() as version:
            self.data_version = version
            filterset = offer_filterset(request.query_params)
            if not filterset.is_valid():
                raise ValidationError(filterset.errors)
            context = {"request": request, "kubernetes_reasons": reasons}
            if self.wants_csv_stream(request):
                offers = offer_reads.offers_filtered(filters=filterset).iterator(chunk_size=CSV_CHUNK_ROWS)
                response = self.csv_response(offers, self.csv_serializer(context=context), "offers.csv")
                return left_out_headers(response, offers_left_out_for_unknown(filters=filterset))
            rows = self.paginator.paginate_offers(request, filters=filterset, view=self)
            left_out = offers_left_out_for_unknown(filters=filterset)
        data = offer_data(rows, request=request, reasons=reasons)
        if filterset.form.cleaned_data.get("cuda"):
            _mark_node_fit(data, filterset.form.cleaned_data["cuda"], filterset.form.cleaned_data.get("k8s_version"))
        response = self.get_paginated_response(data)
        # Before `results`, so a reader of the stream meets the counts first.
        response.data = {**{k: v for k, v in response.data.items() if k != "results"},
                         "left_out_for_unknown": left_out.as_dict(), "results": response.data["results"]}
        return left_out_headers(response, left_out)

    def csv_serializer(self, context: dict | None = None):
        """With the reasons, OfferSerializer's columns (each answer's reason and sources too); else the list's."""
        return (OfferSerializer if self.kubernetes_reasons else OfferListCsvSerializer)(context=context or {})


def left_out_headers(response, left_out):
    """What a filter left out for an unknown answer, as headers, so a CSV (rows only) says it as the JSON's
    `left_out_for_unknown` does: `Left-Out-For-Unknown` the count ("10000+" past the exact count) and
    `Left-Out-Questions` the filters that left them out, comma-separated (absent when none)."""
    response["Left-Out-For-Unknown"] = f"{left_out.total}{'' if left_out.exact else '+'}"
    if left_out.questions:
        response["Left-Out-Questions"] = ",".join(left_out.questions)
    return response


def _mark_node_fit(data: list[dict], cuda: str, k8s_version: str | None) -> None:
    """With `cuda`, each offer says how its node runs that image (nodesoftware.fit.node_fit): `needs_image` marks the
    offers whose default node image does not, but another image of the service does."""
    architectures = dict(GpuModel.objects.values_list("slug", "architecture"))
    for item in data:
        gpu = item["gpu"]["slug"] if item["gpu"] else None
        fit = node_fit.node_fit(item["provider"]["slug"], gpu, architectures.get(gpu, ""), cuda=cuda,
                                k8s=k8s_version) if gpu else None
        item["node_fit"] = None if fit is None else {
            "answer": fit.answer, "needs_image": fit.needs_image, "service": fit.service or None,
            "image": fit.image or None, "driver_branch": fit.driver_branch, "reason": fit.reason}


def _offer_or_404(offer_id: str):
    number = offer_reads.whole_number(offer_id)  # ASCII digits only: "١" or "1_000" is no offer id
    offer = selectors.offer_get(offer_id=number) if number is not None else None
    if offer is None:
        raise NotFound(f"No offer with id {offer_id!r}.")
    return offer


OFFER_ID = OpenApiParameter("offer_id", int, OpenApiParameter.PATH, description="The offer's id")


class OfferDetailApi(ReadOnlyApi):
    """GET /api/v1/offers/{id}/: one offer, active or not, with its provenance."""

    serializer_class = OfferDetailSerializer

    @extend_schema(operation_id="offers_retrieve", tags=["offers"], summary="One offer with its provenance",
                   parameters=[OFFER_ID], responses=detail_responses(OfferDetailSerializer))
    def get(self, request, offer_id: str):
        offer = _offer_or_404(offer_id)
        return Response(OfferDetailSerializer(offer, context={"request": request}).data)


class OfferHistoryApi(ReadOnlyApi):
    """GET /api/v1/offers/{id}/history/: the offer's recorded price and availability changes."""

    pagination_class = ApiPagination
    serializer_class = PriceObservationSerializer
    query_parameters = PAGE_PARAMETERS

    @extend_schema(operation_id="offers_history", tags=["offers"], summary="An offer's price and availability "
                   "history", description="One row per change, oldest first (a row is recorded only when the "
                   "price or availability changed).",
                   parameters=[OFFER_ID],
                   responses={**list_responses(PriceObservationSerializer), (404, "application/json"): ERROR_404})
    def get(self, request, offer_id: str):
        offer = _offer_or_404(offer_id)
        history = selectors.offer_price_history(offer=offer)
        if self.wants_csv_stream(request):
            return self.csv_response(history.iterator(chunk_size=CSV_CHUNK_ROWS), PriceObservationSerializer(),
                                     f"offer-{offer.id}-history.csv")
        return self.paginated(history, PriceObservationSerializer, {"request": request})


# --- providers -----------------------------------------------------------------------------------------------------


class ProviderListApi(ReadOnlyApi):
    """GET /api/v1/providers/: every provider with its active offer count and capability answers."""

    pagination_class = ApiPagination
    serializer_class = ProviderListSerializer
    query_parameters = PAGE_PARAMETERS

    @extend_schema(operation_id="providers_list", tags=["providers"], summary="Providers and their Kubernetes "
                   "answers", description="Each capability's answer only; a provider's detail has the source, "
                   "verification date and confidence of each.",
                   responses=list_responses(ProviderListSerializer))
    def get(self, request):
        return self.paginated(selectors.provider_list(), ProviderListSerializer, {"request": request})


class ProviderDetailApi(ReadOnlyApi):
    """GET /api/v1/providers/{slug}/: the full capability matrix with sources."""

    serializer_class = ProviderDetailSerializer

    @extend_schema(operation_id="providers_retrieve", tags=["providers"], summary="A provider's full Kubernetes "
                   "capability matrix", description="Every question, in a fixed order, with its answer (\"unknown\" "
                   "when nobody has a sourced one), source URL, verification date, confidence and origin; plus the "
                   "Kubernetes facts provider APIs state and the provider's data sources.",
                   parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)],
                   responses=detail_responses(ProviderDetailSerializer))
    def get(self, request, slug: str):
        return self.one_by_slug(request, slug, selectors.provider_get, "provider", "/api/v1/providers/")


# --- GPU catalog ---------------------------------------------------------------------------------------------------


class GpuListApi(ReadOnlyApi):
    """GET /api/v1/gpus/: the curated GPU catalog."""

    pagination_class = ApiPagination
    serializer_class = GpuSerializer
    query_parameters = PAGE_PARAMETERS

    @extend_schema(operation_id="gpus_list", tags=["gpus"], summary="The GPU catalog with MIG profiles",
                   responses=list_responses(GpuSerializer))
    def get(self, request):
        return self.paginated(selectors.gpu_model_list(), GpuSerializer, {"request": request})


class GpuDetailApi(ReadOnlyApi):
    """GET /api/v1/gpus/{slug}/: one GPU model."""

    serializer_class = GpuSerializer

    @extend_schema(operation_id="gpus_retrieve", tags=["gpus"], summary="One GPU model",
                   parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)],
                   responses=detail_responses(GpuSerializer))
    def get(self, request, slug: str):
        return self.one_by_slug(request, slug, selectors.gpu_model_get, "GPU model", "/api/v1/gpus/")


# --- data sources --------------------------------------------------------------------------------------------------


class SourceListApi(ReadOnlyApi):
    """GET /api/v1/sources/: every data source with its latest run and the age of its latest good data."""

    pagination_class = ApiPagination
    serializer_class = SourceStatusSerializer
    query_parameters = PAGE_PARAMETERS

    @extend_schema(operation_id="sources_list", tags=["sources"], summary="Each data source's latest run, outcome "
                   "and age",
                   responses=list_responses(SourceStatusSerializer))
    def get(self, request):
        rows = [{"source": source, "last_run": run} for source, run in selectors.source_status_list(with_dates=False)]
        return self.paginated(rows, SourceStatusSerializer, {"request": request})


# --- compare -------------------------------------------------------------------------------------------------------


class CompareApi(ReadOnlyApi):
    """GET /api/v1/compare/?providers=a,b: capabilities side by side and the cheapest offer per GPU model."""

    serializer_class = CompareSerializer
    query_parameters = list_parameters = frozenset({"providers"})
    renderer_classes = [JSONRenderer]  # nested by nature; for a table, ask offers/?provider=a,b&format=csv

    @extend_schema(
        operation_id="compare", tags=["compare"], summary="Providers side by side",
        description="Every Kubernetes question with each provider's sourced answer, and for every GPU model any of "
                    "them offers, each provider's cheapest active offer per GPU-hour.",
        parameters=[OpenApiParameter(
            "providers", {"type": "array", "items": {"type": "string", "pattern": f"^{SLUG_SHAPE.pattern}$"},
                          "minItems": 1,
                          "maxItems": MAX_COMPARED_PROVIDERS}, required=True, explode=False,
            description=f"1 to {MAX_COMPARED_PROVIDERS} provider slugs, comma-separated, in the order to show.",
            examples=[OpenApiExample("two", value=["lambda", "runpod"])])],
        responses={(200, "application/json"): CompareSerializer, (400, "application/json"): ERROR_400,
                   (429, "application/json"): ERROR_429},
    )
    def get(self, request):
        named = [part.strip() for raw in request.query_params.getlist("providers") for part in raw.split(",")
                 if part.strip()]
        slugs = list(dict.fromkeys(named))
        if not slugs:
            raise ValidationError({"providers": ["Name at least one provider slug, e.g. ?providers=aws,gcp."]})
        if len(named) > MAX_COMPARED_PROVIDERS:  # counted as given, repeats included (the schema's maxItems)
            raise ValidationError({"providers": [f"Compare at most {MAX_COMPARED_PROVIDERS} providers; "
                                                 f"got {len(named)}."]})
        # Only slug-shaped names reach the database (PostgreSQL refuses a NUL in a string with an error).
        providers = selectors.providers_by_slugs(slugs=[slug for slug in slugs if _slug_shaped(slug)])
        unknown = [slug for slug in slugs if slug not in {provider.slug for provider in providers}]
        if unknown:
            raise ValidationError({"providers": [f"Unknown provider slug(s): {', '.join(unknown)}; "
                                                 "see /api/v1/providers/."]})
        ids = [provider.id for provider in providers]
        cells = selectors.capabilities_by_provider(provider_ids=ids)
        answers = {provider.id: capability_cells(cells.get(provider.id, {})) for provider in providers}
        cheapest = selectors.cheapest_offers_by_gpu(provider_ids=ids)
        gpus = sorted({offer.gpu for offer in cheapest.values()}, key=lambda gpu: (gpu.vendor, gpu.family, gpu.name))
        data = {
            "providers": providers,
            "capabilities": [
                {"key": question.key, "question": str(question.label), "group": question.group,
                 "answers": [{"provider": provider, **answers[provider.id][index]} for provider in providers]}
                for index, question in enumerate(CAPABILITIES)
            ],
            "gpus": [
                {"gpu": gpu, "cheapest": [{"provider": provider, "offer": cheapest.get((provider.id, gpu.id))}
                                          for provider in providers]}
                for gpu in gpus
            ],
        }
        return Response(CompareSerializer(data, context={"request": request}).data)



# --- CSV ------------------------------------------------------------------------------------------------------------


def page_parameters() -> list[OpenApiParameter]:
    return [OpenApiParameter(item["name"], item["schema"], description=item["description"])
            for item in ApiPagination().get_schema_operation_parameters(None)]


def csv_operation(view_class, *, operation_id: str, summary: str, parameters: list) -> type[ReadOnlyApi]:
    """The CSV of a list operation as an operation of its own (its path ends in .csv): the same query parameters and
    rows, one documented text/csv body, so a generated client parses the JSON operation as JSON and this one as
    text."""

    @extend_schema(operation_id=operation_id, tags=[operation_id.split("_")[0]], summary=summary,
                   description=f"The rows of {view_class.__doc__.split(':')[0].strip()} as CSV.",
                   parameters=[*parameters, *page_parameters()],
                   responses={(200, "text/csv"): CSV_BODY, (400, "application/json"): ERROR_400,
                              (404, "application/json"): ERROR_404_PAGE, (429, "application/json"): ERROR_429})
    def get(self, request, *args, **kwargs):
        return view_class.get(self, request, *args, **kwargs)

    return type(f"{view_class.__name__.removesuffix('Api')}CsvApi", (view_class,), {
        "__doc__": f"{view_class.__doc__.split(':')[0].strip()} as CSV.", "__module__": __name__,
        "renderer_classes": [CSVRenderer], "schema": CsvAutoSchema(), "get": get})


OfferListCsvApi = csv_operation(
    OfferListApi, operation_id="offers_list_csv", summary="Offers as CSV",
    parameters=[*filterset_parameters(OfferFilterSet), KUBERNETES_REASONS_PARAMETER])
OfferHistoryCsvApi = csv_operation(OfferHistoryApi, operation_id="offers_history_csv",
                                   summary="An offer's history as CSV", parameters=[OFFER_ID])
ProviderListCsvApi = csv_operation(ProviderListApi, operation_id="providers_list_csv", summary="Providers as CSV",
                                   parameters=[])
GpuListCsvApi = csv_operation(GpuListApi, operation_id="gpus_list_csv", summary="The GPU catalog as CSV",
                              parameters=[])
SourceListCsvApi = csv_operation(SourceListApi, operation_id="sources_list_csv", summary="Data sources as CSV",
                                 parameters=[])
