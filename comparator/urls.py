"""The site's URL map: each feature's room routes its own pages."""

from django.contrib import admin
from django.urls import include, path

from advisor import api as advisor_api
from exports import api as exports_api

from . import health

urlpatterns = [
    path("", include("web.urls")),  # the website (web)
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the language switcher posts here
    path("api/", include("providers.api_urls")),  # REST API v1, OpenAPI schema and docs (providers.api)
    path("api/v1/advise/", advisor_api.AdviseApi.as_view(), name="api-advise"),  # the advisor's API (advisor)
    path("api/v1/exports/<str:tool>/", exports_api.ExportApi.as_view(), name="api-export"),  # tools' formats (exports)
    path("api/v1/dataset/", exports_api.DatasetIndexApi.as_view(), name="api-dataset"),  # the open dataset (exports)
    path("api/v1/dataset/<str:name>", exports_api.DatasetFileApi.as_view(), name="api-dataset-file"),
    path("advisor/", include("advisor.urls")),  # the workload advisor's page (advisor)
    path("digest/", include("digest.urls")),  # weekly email digest (digest)
    path("admin/", admin.site.urls),
    # Operator endpoints (comparator.health): the orchestrator's probes and Prometheus.
    path("healthz", health.healthz, name="healthz"),
    path("metrics", health.metrics, name="metrics"),
]

handler500 = "web.views.server_error"  # the 500 page with the navigation, rendered with the request (web)
