"""The site's URL map: each feature's room routes its own pages."""

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path

from advisor import api as advisor_api
from exports import api as exports_api

from . import health

urlpatterns = [
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the language switcher posts here
    path("api/", include("providers.api_urls")),  # REST API v1, OpenAPI schema and docs (providers.api)
    path("api/v1/advise/", advisor_api.AdviseApi.as_view(), name="api-advise"),  # the advisor's API (advisor)
    # The offers in Kubernetes tools' own formats, and the open dataset (exports)
    path("api/v1/exports/opencost/", exports_api.OpenCostExportApi.as_view(), name="api-export-opencost"),
    path("api/v1/exports/kueue/", exports_api.KueueExportApi.as_view(), name="api-export-kueue"),
    path("api/v1/exports/skypilot/", exports_api.SkyPilotExportApi.as_view(), name="api-export-skypilot"),
    path("api/v1/dataset/", exports_api.DatasetIndexApi.as_view(), name="api-dataset"),
    path("api/v1/dataset/<str:name>", exports_api.DatasetFileApi.as_view(), name="api-dataset-file"),
    path("admin/", admin.site.urls),
    # Operator endpoints (comparator.health): the orchestrator's probes and Prometheus.
    path("healthz", health.healthz, name="healthz"),
    path("metrics", health.metrics, name="metrics"),
]
# The pages: English unprefixed, Chinese under /zh-hans/ (comparator.locale picks the language from the path).
urlpatterns += i18n_patterns(
    path("", include("web.urls")),  # the website (web)
    path("advisor/", include("advisor.urls")),  # the workload advisor's page (advisor)
    path("digest/", include("digest.urls")),  # weekly email digest (digest)
    prefix_default_language=False,
)

handler404 = "web.views.not_found"  # JSON under /api/, the 404 page elsewhere (web)
handler500 = "web.views.server_error"  # the 500 page with the navigation, rendered with the request (web)
