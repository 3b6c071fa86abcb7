"""The workload advisor's page; its API operation is routed with the rest of the API (comparator.urls)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.advisor_page, name="advisor"),
]
