from django.contrib import admin
from django.urls import include, path

from . import health, views
from .advisor import api as advisor_api
from .advisor import views as advisor_views

urlpatterns = [
    # Site pages (comparator.views).
    path("", views.offers, name="home"),
    path("charts/", views.charts, name="charts"),
    path("offers/<int:pk>/", views.offer_detail, name="offer-detail"),
    path("gpus/", views.gpu_index, name="gpu-index"),
    path("gpus/<slug:slug>/", views.gpu_detail, name="gpu-detail"),
    path("providers/", views.provider_index, name="provider-index"),
    path("providers/<slug:slug>/", views.provider_detail, name="provider-detail"),
    path("compare/", views.compare, name="compare"),
    path("sources/", views.source_status, name="source-status"),
    path("guides/", views.guide_index, name="guide-index"),
    path("guides/<slug:slug>/", views.guide_detail, name="guide-detail"),
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the language switcher posts here
    path("api/", include("providers.api_urls")),  # REST API v1, OpenAPI schema and docs (providers.api)
    # The workload advisor (comparator.advisor): one engine behind the page and the API.
    path("advisor/", advisor_views.advisor_page, name="advisor"),
    path("api/v1/advise/", advisor_api.AdviseApi.as_view(), name="api-advise"),
    path("digest/", include("comparator.digest.urls")),  # weekly email digest (comparator.digest)
    path("admin/", admin.site.urls),
    # Operator endpoints (comparator.health): the orchestrator's probes and Prometheus.
    path("healthz", health.healthz, name="healthz"),
    path("metrics", health.metrics, name="metrics"),
]
