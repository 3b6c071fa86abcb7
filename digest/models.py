"""Digest subscriptions and the record of every weekly send.

A subscription row exists only once its address is confirmed (double opt-in): until then the request lives in the
signed confirmation link alone, so nothing about unconfirmed addresses is stored and nothing can be sent to them.

`claim_token`/`claimed_at` are the conditional claim of one sending run (services.digest_send); a `Delivery` row per
(subscription, week) is the record that the week is done, whatever its outcome, and its unique constraint is what
makes a second run for the same week send nothing.
"""

import uuid

from django.db import models
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _


class Language(models.TextChoices):
    ENGLISH = "en", "English"
    CHINESE = "zh-hans", "简体中文"


class SubscriptionStatus(models.TextChoices):
    ACTIVE = "active", _("Active")
    PAUSED = "paused", _("Paused")
    UNSUBSCRIBED = "unsubscribed", _("Unsubscribed")
    UNDELIVERABLE = "undeliverable", _("Undeliverable")


class Subscription(models.Model):
    key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False,
                           help_text="Public identifier signed into manage and unsubscribe links")
    email = models.EmailField(max_length=254)
    language = models.CharField(max_length=10, choices=Language.choices, default=Language.ENGLISH)
    filter_query = models.CharField(
        max_length=2000, blank=True, db_index=True,
        help_text="Canonical OfferFilterSet query string; subscribers sharing it share one change computation",
    )
    always_send = models.BooleanField(default=False, help_text="Send even in a week with no change")
    status = models.CharField(max_length=16, choices=SubscriptionStatus.choices, default=SubscriptionStatus.ACTIVE)
    confirmed_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)
    unsubscribed_at = models.DateTimeField(null=True, blank=True)
    undeliverable_reason = models.CharField(max_length=300, blank=True)
    claim_token = models.UUIDField(null=True, blank=True, db_index=True,
                                   help_text="The sending run that currently holds this subscriber")
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(Lower("email"), name="digest_subscription_unique_email")]
        indexes = [models.Index(fields=["status", "filter_query"])]

    def __str__(self) -> str:
        return f"{self.email} ({self.status})"


class DeliveryStatus(models.TextChoices):
    SENT = "sent", _("Sent")
    SKIPPED = "skipped", _("Skipped: no change")
    FAILED = "failed", _("Failed")
    UNKNOWN = "unknown", _("Outcome unknown: the operator decides")


class Delivery(models.Model):
    """One subscriber's digest of one week: sent, skipped (no change), failed (the address refused at RCPT, or a
    saved filter no longer valid), or unknown (sent in full, no reply: never sent again unless the operator says so,
    see DeliveryAdmin)."""

    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="deliveries")
    week = models.DateField(help_text="Date of the send boundary that ends the digest's 7 days (UTC)")
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices)
    changes = models.PositiveIntegerField(default=0)
    message_id = models.CharField(max_length=200, blank=True)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subscription", "week"], name="digest_delivery_once_a_week")]
        indexes = [models.Index(fields=["week", "status"])]
        verbose_name_plural = "deliveries"

    def __str__(self) -> str:
        return f"{self.subscription_id} {self.week} {self.status}"


class SendProblemKind(models.TextChoices):
    RELAY_FAILURE = "relay_failure", _("Relay failure: sending stopped, the rest kept for a retry")
    OUTCOME_UNKNOWN = "outcome_unknown", _("Outcome unknown: a message got no reply")


class SendProblem(models.Model):
    """An alert for the operator: a digest run stopped on a relay- or message-level failure, or sent a message whose
    outcome is unknown. Nobody is marked undeliverable by either (docs/operations.md, "Mail")."""

    week = models.DateField()
    kind = models.CharField(max_length=20, choices=SendProblemKind.choices)
    reply = models.CharField(max_length=500, help_text="What the relay answered, or how the connection failed")
    pending = models.PositiveIntegerField(help_text="Subscribers of the week left to send after this run")
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["kind", "created_at"])]

    def __str__(self) -> str:
        return f"{self.week} {self.kind}: {self.reply[:60]}"
