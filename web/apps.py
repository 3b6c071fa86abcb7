from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebConfig(AppConfig):
    """The website: the offers page, charts, GPU, offer, provider and compare pages, and our guides."""

    name = "web"
    label = "web"
    verbose_name = _("Website")
