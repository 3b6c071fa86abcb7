from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "providers"
    verbose_name = "Providers, GPUs and offers"

    def ready(self):
        from . import offer_reads  # noqa: F401  registers the `__any` lookup
