"""Fixtures of the digest tests: a small world of offers with a week of history written at chosen moments (time
travel by timestamps, not by patching the clock), and a real SMTP server on loopback (aiosmtpd)."""

from __future__ import annotations

import email
import socket
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from email import policy

import pytest
from aiosmtpd.controller import Controller
from django.core.cache import cache
from django.utils import timezone

from digest.models import Subscription
from digest.weeks import digest_week
from providers import facts_sync
from providers.models import GpuModel, Offer, PriceObservation, RunStatus, ScrapeRun
from tests.factories import DataSourceFactory

# The digest week used throughout: Monday 2026-11-16 08:00 UTC to Monday 2026-11-23 08:00 UTC.
WEEK = digest_week(datetime(2026, 11, 23, 9, 0, tzinfo=UTC))
START, END = WEEK.start, WEEK.end
SEND_AT = END + timedelta(hours=1)


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()  # the subscribe rate limits count in the cache
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _tasks_in_process(request):
    """Tasks queued by a request (the confirmation email) run in the test's process, as under `make run`; the
    end-to-end tests with a real worker (the `worker` fixture) send them through the broker."""
    from comparator.celery import app

    if "worker" in request.fixturenames:
        yield
        return
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture
def catalog(db):
    facts_sync.gpu_catalog_sync()


class World:
    """Builds offers and their history; every write states its moment."""

    def __init__(self):
        self.source = DataSourceFactory(slug="lambda-api", provider__slug="lambda", provider__name="Lambda")
        self.provider = self.source.provider

    def offer(self, instance_type, *, gpu="h100", price="2.00", spot=None, availability="available", at=None,
              gpu_count="1", source=None, region="us-east-1") -> Offer:
        at = at or START - timedelta(days=3)
        source = source or self.source
        price_d = Decimal(price) if price is not None else None
        spot_d = Decimal(spot) if spot is not None else None
        count = Decimal(gpu_count)
        offer = Offer.objects.create(
            provider=source.provider, source=source, instance_type=instance_type, region=region, country="US",
            continent="NA", region_confirmed=True, gpu=GpuModel.objects.get(slug=gpu) if gpu else None,
            gpu_name=gpu or "Mystery",
            gpu_count=count, currency="USD", price_hour=price_d, spot_price_hour=spot_d, price_hour_usd=price_d,
            spot_price_hour_usd=spot_d, price_per_gpu_hour_usd=price_d / count if price_d is not None else None,
            spot_price_per_gpu_hour_usd=spot_d / count if spot_d is not None else None,
            availability=availability, first_seen=at, last_seen=at, is_active=True,
        )
        self._observe(offer, at)
        return offer

    def change(self, offer: Offer, *, at, price=None, spot=None, availability=None) -> Offer:
        if price is not None:
            offer.price_hour = offer.price_hour_usd = Decimal(price)
            offer.price_per_gpu_hour_usd = Decimal(price) / offer.gpu_count
        if spot is not None:
            offer.spot_price_hour = offer.spot_price_hour_usd = Decimal(spot)
            offer.spot_price_per_gpu_hour_usd = Decimal(spot) / offer.gpu_count
        if availability is not None:
            offer.availability = availability
        offer.last_seen = max(offer.last_seen, at)
        offer.save()
        self._observe(offer, at)
        return offer

    def vanish(self, offer: Offer, *, last_listed, removed_by_run_at) -> Offer:
        """The offer was listed by a run at `last_listed` and missing from the source's next run."""
        self.run(last_listed, source=offer.source)
        self.run(removed_by_run_at, source=offer.source)
        offer.last_seen = last_listed
        offer.is_active = False
        offer.save()
        return offer

    def run(self, at, source=None) -> ScrapeRun:
        return ScrapeRun.objects.create(source=source or self.source, started_at=at, finished_at=at,
                                        status=RunStatus.SUCCEEDED)

    @staticmethod
    def _observe(offer: Offer, at) -> None:
        PriceObservation.objects.create(
            offer=offer, observed_at=at, price_hour=offer.price_hour, spot_price_hour=offer.spot_price_hour,
            price_hour_usd=offer.price_hour_usd, spot_price_hour_usd=offer.spot_price_hour_usd,
            currency=offer.currency, availability=offer.availability, available_count=offer.available_count,
        )


@pytest.fixture
def world(catalog) -> World:
    return World()


def subscriber(email_address, *, query="", language="en", always_send=False, status="active") -> Subscription:
    return Subscription.objects.create(email=email_address, filter_query=query, language=language,
                                       always_send=always_send, status=status, confirmed_at=timezone.now())


# --- a real SMTP server on loopback ------------------------------------------------------------------------------


class SmtpRecorder:
    """aiosmtpd handler: keeps every accepted message; answers RCPT for chosen addresses with a chosen reply."""

    def __init__(self):
        self.messages: list[email.message.EmailMessage] = []
        self.rcpt_replies: dict[str, str] = {}

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        reply = self.rcpt_replies.get(address)
        if reply:
            return reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=policy.default)
        self.messages.append(message)
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[email.message.EmailMessage]:
        return [m for m in self.messages if m["To"] == address]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def smtp_server():
    recorder = SmtpRecorder()
    controller = Controller(recorder, hostname="127.0.0.1", port=free_port())
    controller.start()
    recorder.port = controller.port
    try:
        yield recorder
    finally:
        controller.stop()


@pytest.fixture
def smtp_settings(settings, smtp_server):
    """Point Django's SMTP backend at the loopback server for this test."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = smtp_server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 10
    return smtp_server
