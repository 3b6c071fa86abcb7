"""GET /api/v1/exports/<tool>/?<offer filters>: the offers the OfferFilterSet selects, in a Kubernetes tool's own
format (opencost: CSV; kueue, skypilot: YAML). The same rules as the rest of the API (providers.api.ReadOnlyApi):
anonymous, throttled per client IP, an unknown or bad parameter is a 400 naming it, errors are JSON; each export
holds one of the site's whole-table export slots while it reads the offers (503 when none is free).
"""

from __future__ import annotations

import re

from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from providers import versions
from providers.api import (
    DETAIL_ERROR,
    ERROR_400,
    ERROR_404,
    ERROR_429,
    ExportsBusy,
    ReadOnlyApi,
    filterset_parameters,
    refuse_repeated,
)
from providers.filters import OfferFilterSet, multi_valued_parameters, offer_filterset, unknown_parameters
from providers.limits import export_slot

from . import dataset
from .kueue import ORDERS, SPOT_FLAVORS, kueue_yaml
from .machines import selection
from .opencost import opencost_csv
from .skypilot import skypilot_yaml

KUEUE_PARAMETERS = frozenset({"gpu_quota", "namespace", "queue", "order", "spot_flavors"})
TOOL_PARAMETERS = {"opencost": frozenset(), "kueue": KUEUE_PARAMETERS, "skypilot": frozenset({"context"})}
CONTENT_TYPES = {"opencost": "text/csv; charset=utf-8", "kueue": "application/yaml; charset=utf-8",
                 "skypilot": "application/yaml; charset=utf-8"}
FILENAMES = {"opencost": "opencost-pricing.csv", "kueue": "kueue-flavors.yaml", "skypilot": "skypilot-pricing.yaml"}
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


class AnyAccept(BaseContentNegotiation):
    """The body's type is the tool's; errors are JSON whatever the client accepts."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type

    def select_parser(self, request, parsers):
        return None


def _whole_number(params, name: str, default: int, maximum: int) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit() and 0 <= int(raw) <= maximum):
        raise ValidationError({name: [f"Use a whole number from 0 to {maximum}; got {raw!r}."]})
    return int(raw)


def _name(params, name: str, default: str) -> str:
    value = params.get(name, default)
    if not re.match(DNS_LABEL, value):
        raise ValidationError({name: ["Use a Kubernetes name: lower-case letters, digits and '-', at most 63."]})
    return value


def tool_options(tool: str, params) -> dict:
    """The tool's own parameters, checked (a bad one is a ValidationError naming it)."""
    if tool == "kueue":
        order = params.get("order", "price")
        if order not in ORDERS:
            raise ValidationError({"order": [f"Use one of: {', '.join(ORDERS)}."]})
        spot_flavors = params.get("spot_flavors", "after")
        if spot_flavors not in SPOT_FLAVORS:
            raise ValidationError({"spot_flavors": [f"Use one of: {', '.join(SPOT_FLAVORS)}."]})
        return {"gpu_quota": _whole_number(params, "gpu_quota", 8, 1_000_000), "namespace": _name(
            params, "namespace", "default"), "queue": _name(params, "queue", "gpu"), "order": order,
            "spot_flavors": spot_flavors}
    if tool == "skypilot":
        context = params.get("context")
        if context is not None and not (0 < len(context) <= 253 and "\x00" not in context):
            raise ValidationError({"context": ["Use a kubeconfig context name (1 to 253 characters)."]})
        return {"context": context}
    return {}


def render(tool: str, chosen, options: dict):
    """The export's text, as an iterable of chunks."""
    if tool == "opencost":
        return opencost_csv(chosen)
    if tool == "kueue":
        return [kueue_yaml(chosen, **options)]
    return [skypilot_yaml(chosen, **options)]


KUEUE_OPTIONS = [
    OpenApiParameter("gpu_quota", {"type": "integer", "minimum": 0, "maximum": 1_000_000},
                     description="nominalQuota of nvidia.com/gpu per flavour (default 8)."),
    OpenApiParameter("namespace", {"type": "string", "pattern": DNS_LABEL},
                     description="the LocalQueue's namespace (default `default`)."),
    OpenApiParameter("queue", {"type": "string", "pattern": DNS_LABEL},
                     description="the ClusterQueue's and LocalQueue's name (default `gpu`)."),
    OpenApiParameter("order", str, enum=list(ORDERS),
                     description="flavours by price per GPU-hour, or that price over the 7-day in-stock share."),
    OpenApiParameter("spot_flavors", str, enum=list(SPOT_FLAVORS),
                     description="spot flavours after every on-demand one (default), mixed in by price, or none."),
]
SKYPILOT_OPTIONS = [
    OpenApiParameter("context", {"type": "string", "minLength": 1, "maxLength": 253, "pattern": "^[^\\x00]*$"},
                     description="Put the block under kubernetes.context_configs.<context>."),
]
BUSY = OpenApiResponse(response=DETAIL_ERROR, description="Every whole-table export slot is in use; retry later.")


class ExportApi(ReadOnlyApi):
    """GET /api/v1/exports/{tool}/: the filtered offers in one tool's format (one subclass, and one operation in the
    OpenAPI schema, per tool, so each documents the options it reads)."""

    renderer_classes = [JSONRenderer]
    content_negotiation_class = AnyAccept
    tool = ""

    def initial(self, request, *args, **kwargs):
        GenericAPIView.initial(self, request, *args, **kwargs)  # throttles; the strict check follows per tool
        reads = set(OfferFilterSet.base_filters) | TOOL_PARAMETERS[self.tool]
        unknown = unknown_parameters(request.query_params, reads=reads)
        if unknown:
            raise ValidationError({name: ["Unknown query parameter for this export."] for name in unknown})
        refuse_repeated(request.query_params, many=multi_valued_parameters(OfferFilterSet))

    def get(self, request):
        options = tool_options(self.tool, request.query_params)
        with versions.data_version_scope():
            filterset = offer_filterset(request.query_params)
            if not filterset.is_valid():
                raise ValidationError(filterset.errors)
            # The one costly step, reading every selected offer, holds one of the site's whole-table export slots
            # (settings.API_CSV_EXPORTS_MAX, shared with the API's CSV streams); rendering works on rows in memory.
            slot = export_slot()
            if slot is None:
                raise ExportsBusy()
            try:
                chosen = selection(filters=filterset, params=request.query_params)
            finally:
                slot.release()
        chunks = render(self.tool, chosen, options)
        response = (StreamingHttpResponse(chunks, content_type=CONTENT_TYPES[self.tool]) if self.tool == "opencost"
                    else HttpResponse("".join(chunks), content_type=CONTENT_TYPES[self.tool]))
        response["Content-Disposition"] = f'attachment; filename="{FILENAMES[self.tool]}"'
        return response


def _export_schema(tool: str, summary: str, description: str, options: list, media_type: str):
    return extend_schema(
        operation_id=f"exports_{tool}", tags=["exports"], summary=summary,
        description=description + " The same filters as /api/v1/offers/; every export states its data's as-of "
                                  "dates, the filter and the product version, and counts what it left out.",
        parameters=[*filterset_parameters(OfferFilterSet), *options],
        responses={(200, media_type): str if media_type == "text/csv" else OpenApiTypes.OBJECT,
                   (400, "application/json"): ERROR_400,
                   (429, "application/json"): ERROR_429, (503, "application/json"): BUSY})


class OpenCostExportApi(ExportApi):
    tool = "opencost"

    @_export_schema("opencost", "Offers as OpenCost/Kubecost CSV pricing",
                    "OpenCost's CSV provider format (8 fields by position; node rows keyed on the instance-type "
                    "label and region; GKE GPU rows per accelerator).", [], "text/csv")
    def get(self, request):
        return super().get(request)


class KueueExportApi(ExportApi):
    tool = "kueue"

    @_export_schema("kueue", "Offers as Kueue ResourceFlavors, a ClusterQueue and a LocalQueue",
                    "kueue.x-k8s.io/v1beta2 objects (Kueue v0.19.2 CRDs), flavours in preference order.",
                    KUEUE_OPTIONS, "application/yaml")
    def get(self, request):
        return super().get(request)


class SkyPilotExportApi(ExportApi):
    tool = "skypilot"

    @_export_schema("skypilot", "Offers as SkyPilot's kubernetes.pricing block",
                    "Per-accelerator all-in hourly rates with SkyPilot's accelerator names.", SKYPILOT_OPTIONS,
                    "application/yaml")
    def get(self, request):
        return super().get(request)


class _NoParameters(ReadOnlyApi):
    renderer_classes = [JSONRenderer]
    content_negotiation_class = AnyAccept

    def initial(self, request, *args, **kwargs):
        GenericAPIView.initial(self, request, *args, **kwargs)
        unknown = unknown_parameters(request.query_params, reads=set())
        if unknown:
            raise ValidationError({name: ["Unknown query parameter: this endpoint reads none."] for name in unknown})


class DatasetIndexApi(_NoParameters):
    """GET /api/v1/dataset/: the open dataset's dated dumps (newest first), its schema and each source's terms."""

    @extend_schema(operation_id="dataset_index", tags=["exports"], summary="The open dataset's daily dumps",
                   responses={(200, "application/json"): OpenApiTypes.OBJECT, (400, "application/json"): ERROR_400,
                              (429, "application/json"): ERROR_429})
    def get(self, request):
        files = dataset.dataset_files()
        base = request.build_absolute_uri("/api/v1/dataset/")
        return Response({
            "licence_note": dataset.LICENCE_NOTE, "schema": f"{base}schema.json",
            "dumps": [{"date": item["date"], "json": f"{base}{item['json']}", "csv": f"{base}{item['csv']}"}
                      for item in files],
            "sources": dataset.source_terms(),
        })


class DatasetFileApi(_NoParameters):
    """GET /api/v1/dataset/{name}: one dump (offers-<date>.json or .csv) or the schema (schema.json)."""

    @extend_schema(operation_id="dataset_file", tags=["exports"], summary="One dump of the open dataset",
                   parameters=[OpenApiParameter("name", str, OpenApiParameter.PATH,
                                                description="offers-YYYY-MM-DD.json, offers-YYYY-MM-DD.csv or "
                                                            "schema.json")],
                   responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): str,
                              (404, "application/json"): ERROR_404, (429, "application/json"): ERROR_429})
    def get(self, request, name: str):
        if name == "schema.json":
            return FileResponse(dataset.SCHEMA_FILE.open("rb"), content_type="application/json")
        match = dataset.FILE_NAME.match(name)
        path = dataset.dataset_dir() / name
        if match is None or not path.is_file():
            raise NotFound(f"No dump {name!r}; /api/v1/dataset/ lists them.")
        content_type = "application/json" if match.group(2) == "json" else "text/csv; charset=utf-8"
        return FileResponse(path.open("rb"), content_type=content_type, as_attachment=match.group(2) == "csv",
                            filename=name)
