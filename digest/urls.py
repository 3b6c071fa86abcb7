from django.urls import path

from . import views

app_name = "digest"

urlpatterns = [
    path("", views.index, name="index"),
    path("subscribe/", views.subscribe, name="subscribe"),
    path("confirm/<str:token>/", views.confirm, name="confirm"),
    path("manage/<str:token>/", views.manage, name="manage"),
    path("unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    path("preview/", views.preview, name="preview"),
]
