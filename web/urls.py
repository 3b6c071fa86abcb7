"""The website's pages (web.views)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.offers, name="home"),
    path("charts/", views.charts, name="charts"),
    path("offers/<int:pk>/", views.offer_detail, name="offer-detail"),
    path("offers/kubernetes/<int:profile_id>/", views.kubernetes_answers, name="kubernetes-answers"),
    path("gpus/", views.gpu_index, name="gpu-index"),
    path("gpus/<slug:slug>/", views.gpu_detail, name="gpu-detail"),
    path("providers/", views.provider_index, name="provider-index"),
    path("providers/<slug:slug>/", views.provider_detail, name="provider-detail"),
    path("compare/", views.compare, name="compare"),
    path("sources/", views.source_status, name="source-status"),
    path("guides/", views.guide_index, name="guide-index"),
    path("guides/<slug:slug>/", views.guide_detail, name="guide-detail"),
]
