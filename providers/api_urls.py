"""URLs of the REST API, included under /api/ by comparator.urls: the versioned operations, the OpenAPI 3 schema and
the interactive docs (Swagger UI from the vendored drf-spectacular-sidecar assets, never a CDN).

Path parameters are matched as text and checked by the views, so `/api/v1/offers/abc/` is a JSON 404 like any
other missing object rather than the site's HTML error page.
"""

from django.urls import path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import api

app_name = "api"

urlpatterns = [
    path("v1/offers/", api.OfferListApi.as_view(), name="offer-list"),
    path("v1/offers.csv", api.OfferListCsvApi.as_view(), name="offer-list-csv"),
    path("v1/offers/<str:offer_id>/history.csv", api.OfferHistoryCsvApi.as_view(), name="offer-history-csv"),
    path("v1/providers.csv", api.ProviderListCsvApi.as_view(), name="provider-list-csv"),
    path("v1/gpus.csv", api.GpuListCsvApi.as_view(), name="gpu-list-csv"),
    path("v1/sources.csv", api.SourceListCsvApi.as_view(), name="source-list-csv"),
    path("v1/offers/<str:offer_id>/", api.OfferDetailApi.as_view(), name="offer-detail"),
    path("v1/offers/<str:offer_id>/history/", api.OfferHistoryApi.as_view(), name="offer-history"),
    path("v1/providers/", api.ProviderListApi.as_view(), name="provider-list"),
    path("v1/providers/<str:slug>/", api.ProviderDetailApi.as_view(), name="provider-detail"),
    path("v1/gpus/", api.GpuListApi.as_view(), name="gpu-list"),
    path("v1/gpus/<str:slug>/", api.GpuDetailApi.as_view(), name="gpu-detail"),
    path("v1/sources/", api.SourceListApi.as_view(), name="source-list"),
    path("v1/compare/", api.CompareApi.as_view(), name="compare"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Where people look for them next to the versioned operations: sent on to the one schema and docs page.
    path("v1/schema/", RedirectView.as_view(pattern_name="api:schema", query_string=True)),
    path("v1/docs/", RedirectView.as_view(pattern_name="api:docs", query_string=True)),
    # The split view serves Swagger UI's start-up script from its own URL, and our template moves its inline style
    # to a file: the strict Content-Security-Policy (comparator.security) allows no inline script or style.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema", template_name="api/swagger_ui.html"),
         name="docs"),
]
