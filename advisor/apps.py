from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AdvisorConfig(AppConfig):
    """The workload advisor: one engine behind the /advisor/ page and POST /api/v1/advise/ (no models)."""

    name = "advisor"
    label = "advisor"
    verbose_name = _("Workload advisor")
