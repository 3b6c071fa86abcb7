from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "providers"
    verbose_name = "Providers, GPUs and offers"

    def ready(self):
        from . import lookups  # noqa: F401  registers `__any`
