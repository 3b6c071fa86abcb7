"""Admin for every model: the only writer besides the scrapers and the curated-data loader."""

from django.contrib import admin

from .models import (
    AvailabilityChange,
    AvailabilityPoll,
    Capability,
    CapabilityChange,
    DataSource,
    ExchangeRate,
    GpuModel,
    InstanceTypeFact,
    KubernetesFact,
    KubernetesProfile,
    LinkCheck,
    Offer,
    PriceObservation,
    Provider,
    ScrapeRun,
)


class RefreshesKubernetesAnswers:
    """An admin edit of a layer the per-offer Kubernetes answers derive from (a provider cell, an instance fact, a
    GPU model) recomputes the stored answers it feeds (kubernetes_profiles.offer_kubernetes_refresh), like a curated
    sync."""

    def _refresh(self, obj) -> None:
        from .kubernetes_profiles import offer_kubernetes_refresh

        provider_id = getattr(obj, "provider_id", None) or (obj.pk if isinstance(obj, Provider) else None)
        offer_kubernetes_refresh(provider_ids=[provider_id] if provider_id else None)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        self._refresh(form.instance)

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        self._refresh(obj)


class CapabilityInline(admin.TabularInline):
    model = Capability
    extra = 0
    fields = ("key", "value", "label", "source_url", "verified_on", "confidence", "origin")


@admin.register(Provider)
class ProviderAdmin(RefreshesKubernetesAnswers, admin.ModelAdmin):
    list_display = ("name", "slug", "kind", "headquarters")
    list_filter = ("kind",)
    search_fields = ("name", "slug", "name_zh")
    inlines = [CapabilityInline]


@admin.register(Capability)
class CapabilityAdmin(RefreshesKubernetesAnswers, admin.ModelAdmin):
    list_display = ("provider", "key", "value", "label", "confidence", "verified_on", "origin")
    list_filter = ("key", "value", "confidence", "origin")
    search_fields = ("provider__name", "label", "detail")


@admin.register(CapabilityChange)
class CapabilityChangeAdmin(admin.ModelAdmin):
    list_display = ("provider", "key", "old_value", "new_value", "origin", "changed_at")
    list_filter = ("origin", "key")


@admin.register(GpuModel)
class GpuModelAdmin(RefreshesKubernetesAnswers, admin.ModelAdmin):
    list_display = ("name", "slug", "vendor", "family", "memory_gb", "form_factor")
    list_filter = ("vendor", "family")
    search_fields = ("name", "slug")


@admin.register(DataSource)
class DataSourceAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "kind", "provider", "revision", "as_of")
    list_filter = ("kind",)


@admin.register(ScrapeRun)
class ScrapeRunAdmin(admin.ModelAdmin):
    list_display = ("source", "started_at", "status", "created", "updated", "unchanged", "deactivated", "skipped",
                    "capabilities_changed", "capabilities_rejected")
    list_filter = ("status", "source")
    date_hierarchy = "started_at"


@admin.register(Offer)
class OfferAdmin(admin.ModelAdmin):
    list_display = ("provider", "instance_type", "region", "gpu", "gpu_count", "price_per_gpu_hour_usd", "is_active")
    list_filter = ("is_active", "provider", "gpu__family")
    search_fields = ("instance_type", "region", "gpu_name")
    list_select_related = ("provider", "gpu")
    raw_id_fields = ("last_run",)


@admin.register(PriceObservation)
class PriceObservationAdmin(admin.ModelAdmin):
    list_display = ("offer", "observed_at", "price_hour", "spot_price_hour", "currency", "availability")
    list_select_related = ("offer", "offer__provider")
    raw_id_fields = ("offer", "run")


@admin.register(ExchangeRate)
class ExchangeRateAdmin(admin.ModelAdmin):
    list_display = ("date", "currency", "per_eur")
    list_filter = ("currency",)


@admin.register(KubernetesFact)
class KubernetesFactAdmin(admin.ModelAdmin):
    list_display = ("provider", "name", "source", "fetched_at")
    list_filter = ("provider",)
    search_fields = ("name",)


@admin.register(LinkCheck)
class LinkCheckAdmin(admin.ModelAdmin):
    """The weekly check of curated source links: broken ones first."""

    list_display = ("url", "ok", "status_code", "error", "checked_at", "failing_since")
    list_filter = ("ok",)
    search_fields = ("url",)


@admin.register(AvailabilityPoll)
class AvailabilityPollAdmin(admin.ModelAdmin):
    list_display = ("source", "started_at", "status", "offline", "checked", "changed", "unmatched")
    list_filter = ("status", "source")
    readonly_fields = [field.name for field in AvailabilityPoll._meta.fields]


@admin.register(AvailabilityChange)
class AvailabilityChangeAdmin(admin.ModelAdmin):
    list_display = ("offer", "changed_at", "availability", "available_count", "recorded")
    list_filter = ("availability", "recorded")
    raw_id_fields = ("offer",)
    date_hierarchy = "changed_at"


@admin.register(InstanceTypeFact)
class InstanceTypeFactAdmin(RefreshesKubernetesAnswers, admin.ModelAdmin):
    list_display = ("provider", "pattern", "key", "value", "number", "confidence", "origin", "verified_on")
    list_filter = ("provider", "key", "origin", "confidence")
    search_fields = ("pattern", "detail")


@admin.register(KubernetesProfile)
class KubernetesProfileAdmin(admin.ModelAdmin):
    """Derived answers: read-only here (edit the facts they come from)."""

    list_display = ("provider", "instance_type", "gpu", "gpu_count", "managed_node", "mig", "rdma", "fabric",
                    "computed_at")
    list_filter = ("provider", "managed_node", "mig", "rdma", "fabric")
    search_fields = ("instance_type",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
