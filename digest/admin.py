"""Admin: subscriptions and the record of every weekly send (read-only: only the sending run writes it)."""

from django.contrib import admin

from .models import Delivery, Subscription


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ("email", "status", "language", "filter_query", "always_send", "confirmed_at")
    list_filter = ("status", "language", "always_send")
    search_fields = ("email", "filter_query")
    readonly_fields = ("key", "confirmed_at", "updated_at", "unsubscribed_at", "claim_token", "claimed_at")


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("subscription", "week", "status", "changes", "created_at", "error")
    list_filter = ("status", "week")
    search_fields = ("subscription__email", "message_id")
    list_select_related = ("subscription",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
