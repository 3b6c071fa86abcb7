from django.contrib import admin
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("providers/", views.provider_index, name="provider-index"),
    path("providers/<slug:slug>/", views.provider_detail, name="provider-detail"),
    path("sources/", views.source_status, name="source-status"),
    path("admin/", admin.site.urls),
]
