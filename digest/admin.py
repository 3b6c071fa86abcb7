"""Admin: subscriptions, the record of every weekly send (read-only: only the sending run writes it, except the
operator's decision on an unknown outcome), and the sending problems a run raised (docs/operations.md, "Mail")."""

from datetime import UTC, datetime, time

from django.conf import settings
from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _
from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from .models import Delivery, DeliveryStatus, SendProblem, Subscription
from .tasks import digest_send_due


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
    actions = ["mark_sent", "send_again"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description=_("Outcome unknown: count as sent (the recipient has it)"), permissions=["delete"])
    def mark_sent(self, request, queryset):
        count = queryset.filter(status=DeliveryStatus.UNKNOWN).update(status=DeliveryStatus.SENT)
        self.message_user(request, _("%(count)d delivery(ies) counted as sent.") % {"count": count})

    @admin.action(description=_("Outcome unknown: send again (the recipient may get two copies)"),
                  permissions=["delete"])
    def send_again(self, request, queryset):
        unknown = queryset.filter(status=DeliveryStatus.UNKNOWN)
        weeks = sorted(set(unknown.values_list("week", flat=True)))
        count, _by_model = unknown.delete()
        for week in weeks:
            boundary = datetime.combine(week, time(settings.DIGEST_SEND_HOUR, settings.DIGEST_SEND_MINUTE), UTC)
            try:
                digest_send_due.delay(at=boundary.isoformat())
            except (KombuError, RedisError, OSError):
                self.message_user(request, _("The task queue is unreachable: run `manage.py send_digest --at "
                                             "%(at)s` to send them.") % {"at": boundary.isoformat()},
                                  messages.WARNING)
        self.message_user(request, _("%(count)d delivery(ies) will be sent again.") % {"count": count})


@admin.register(SendProblem)
class SendProblemAdmin(admin.ModelAdmin):
    list_display = ("created_at", "week", "kind", "pending", "reply")
    list_filter = ("kind", "week")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
