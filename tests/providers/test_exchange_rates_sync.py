"""exchange_rates_sync against the real test database: idempotent upsert of the ECB rates, old rates kept when a
response is broken, and CNY/EUR offers priced in USD by offers_sync once the rates are in."""

from datetime import date
from decimal import Decimal

import httpx
import pytest
from django.db import transaction
from django.utils import timezone

from providers import exchange_rates, facts_sync, ingest, runs, selectors
from providers.models import ExchangeRate, Offer, RunStatus, ScrapeRun
from scrapers import ecb
from scrapers.base import SchemaScrapeError, TransientScrapeError
from tests.factories import DataSourceFactory, result, scraped
from tests.scrapers.test_ecb import day_cube, ecb_xml

pytestmark = pytest.mark.django_db


def serving(body: str, status: int = 200) -> httpx.MockTransport:
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == ecb.DAILY_URL, f"unexpected request {request.url}"
        return httpx.Response(status, content=body.encode())

    return httpx.MockTransport(route)


def stored() -> list[tuple]:
    return list(ExchangeRate.objects.order_by("date", "currency").values_list("currency", "date", "per_eur",
                                                                               "source_url"))


def test_offline_sync_stores_the_bundled_ecb_day():
    assert exchange_rates.exchange_rates_sync(offline=True) == 29
    assert ExchangeRate.objects.count() == 29
    usd = ExchangeRate.objects.get(currency="USD")
    assert (usd.date, usd.per_eur, usd.source_url) == (date(2026, 7, 6), Decimal("1.1415"), ecb.DAILY_URL)
    assert selectors.exchange_rates_latest()["CNY"] == Decimal("7.7573")


def test_running_twice_changes_nothing():
    exchange_rates.exchange_rates_sync(offline=True)
    before = stored()
    assert exchange_rates.exchange_rates_sync(offline=True) == 29
    assert stored() == before


def test_new_day_is_added_and_becomes_the_latest():
    exchange_rates.exchange_rates_sync(offline=True)
    exchange_rates.exchange_rates_sync(
        transport=serving(ecb_xml(day_cube("2026-11-27", (("USD", "1.16"), ("CNY", "8.2"))))))
    assert ExchangeRate.objects.count() == 31  # the bundled 29 and the new day's 2
    assert selectors.exchange_rate_date() == date(2026, 11, 27)
    assert selectors.exchange_rates_latest() == {"USD": Decimal("1.16"), "CNY": Decimal("8.2")}


def test_a_corrected_rate_for_the_same_day_replaces_the_old_value():
    exchange_rates.exchange_rates_sync(transport=serving(ecb_xml(day_cube("2026-11-27", (("USD", "1.16"),)))))
    exchange_rates.exchange_rates_sync(transport=serving(ecb_xml(day_cube("2026-11-27", (("USD", "1.1612"),)))))
    assert stored() == [("USD", date(2026, 11, 27), Decimal("1.161200"), ecb.DAILY_URL)]


@pytest.mark.parametrize("body, status, error", [
    ("<html>maintenance</html>", 200, SchemaScrapeError),
    (ecb_xml(day_cube(rates=(("USD", "n/a"), ("CNY", "7.9")))), 200, SchemaScrapeError),
    (ecb_xml(day_cube(rates=(("CNY", "7.9"),))), 200, SchemaScrapeError),
    ("", 200, SchemaScrapeError),
    ("busy", 503, TransientScrapeError),
])
def test_broken_response_raises_and_keeps_the_stored_rates(body, status, error):
    exchange_rates.exchange_rates_sync(offline=True)
    before = stored()
    with pytest.raises(error):
        exchange_rates.exchange_rates_sync(transport=serving(body, status))
    assert stored() == before


def test_curated_cny_offer_gets_usd_price_once_rates_are_loaded():
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()
    run = runs.source_scrape(slug="curated-baidu", offline=True)
    assert run.status == RunStatus.SUCCEEDED and run.source.kind == "curated"
    offer = Offer.objects.get(source__slug="curated-baidu")
    assert (offer.price_hour, offer.currency, offer.price_hour_usd) == (Decimal("11.10"), "CNY", None)
    assert offer.gpu.slug == "v100" and (offer.country, offer.continent) == ("CN", "AS")

    exchange_rates.exchange_rates_sync(offline=True)
    runs.source_scrape(slug="curated-baidu", offline=True)
    offer.refresh_from_db()
    # 11.10 CNY / 7.7573 CNY per EUR * 1.1415 USD per EUR (ECB, 2026-07-06)
    assert offer.price_hour_usd == Decimal("1.63338")
    assert offer.price_per_gpu_hour_usd == Decimal("1.63338")
    assert offer.price_hour == Decimal("11.10") and offer.currency == "CNY"


def test_eur_offer_gets_usd_price_after_sync():
    facts_sync.gpu_catalog_sync()
    source = DataSourceFactory(slug="test-eur", provider__slug="hetzner")
    exchange_rates.exchange_rates_sync(offline=True)
    now = timezone.now()
    run = ScrapeRun.objects.create(source=source, started_at=now)
    with transaction.atomic():
        ingest.offers_sync(source=source, run=run, result=result(scraped(currency="EUR", price="10")), now=now)
    # 10 EUR * 1.1415 USD per EUR (ECB, 2026-07-06)
    assert Offer.objects.get(source=source).price_hour_usd == Decimal("11.41500")
