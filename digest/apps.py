from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DigestConfig(AppConfig):
    name = "digest"
    label = "digest"
    verbose_name = _("Weekly digest")
