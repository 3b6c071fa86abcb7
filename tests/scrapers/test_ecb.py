"""The ECB reference-rate parser and client: the bundled real file, and every way a response can be broken."""

import logging
from datetime import date
from decimal import Decimal

import httpx
import pytest

from scrapers import ecb
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client

ENVELOPE = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" '
    'xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">\n'
    "\t<gesmes:subject>Reference rates</gesmes:subject>\n\t<Cube>\n{days}\t</Cube>\n</gesmes:Envelope>"
)


def day_cube(day="2026-11-27", rates=(("USD", "1.1000"), ("CNY", "7.9000"))):
    rows = "".join(f"\t\t\t<Cube currency='{currency}' rate='{rate}'/>\n" for currency, rate in rates)
    return f"\t\t<Cube time='{day}'>\n{rows}\t\t</Cube>\n"


def ecb_xml(*days):
    return ENVELOPE.format(days="".join(days or (day_cube(),)))


def client_for(handler) -> ecb.EcbClient:
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == ecb.DAILY_URL, f"unexpected request {request.url}"
        return handler(request)

    return ecb.EcbClient(build_client(transport=httpx.MockTransport(route)))


def serve(body, status=200, headers=None):
    return lambda request: httpx.Response(status, content=body.encode() if isinstance(body, str) else body,
                                          headers=headers or {})


def test_bundled_real_ecb_file_parses_with_its_date_usd_and_cny():
    (day,) = ecb.parse_reference_rates(ecb.RECORDED.read_bytes())
    assert day.day == date(2026, 7, 6)
    assert len(day.per_eur) == 29
    assert day.per_eur["USD"] == Decimal("1.1415")
    assert day.per_eur["CNY"] == Decimal("7.7573")
    assert day.source_url == ecb.DAILY_URL


def test_offline_client_replays_the_bundled_file_without_network():
    (day,) = ecb.make_client(offline=True).fetch()
    assert day.day == date(2026, 7, 6) and day.per_eur["JPY"] == Decimal("185.31")


def test_live_client_reads_the_daily_url():
    (day,) = client_for(serve(ecb_xml(day_cube("2026-11-27")))).fetch()
    assert day.day == date(2026, 11, 27)
    assert day.per_eur == {"USD": Decimal("1.1000"), "CNY": Decimal("7.9000")}


def test_several_days_are_all_returned():
    days = ecb.parse_reference_rates(ecb_xml(day_cube("2026-11-27"), day_cube("2026-11-26")).encode())
    assert [d.day for d in days] == [date(2026, 11, 27), date(2026, 11, 26)]


def test_missing_cny_is_logged_but_usd_rates_are_kept(caplog):
    with caplog.at_level(logging.WARNING, logger="scrapers.ecb"):
        (day,) = ecb.parse_reference_rates(ecb_xml(day_cube(rates=(("USD", "1.1"),))).encode())
    assert day.per_eur == {"USD": Decimal("1.1")}
    assert "no CNY" in caplog.text


@pytest.mark.parametrize("body, message", [
    ("", "empty response"),
    ("<html><body>Service unavailable</body></html>", "no <Cube time="),
    ("<gesmes:Envelope><Cube><Cube time='2026-11-27'>", "not well-formed"),
    (ecb_xml().replace("</gesmes:Envelope>", ""), "not well-formed"),
    (ENVELOPE.format(days=""), "no <Cube time="),
    (ecb_xml(day_cube(day="27.11.2026")), "not an ISO date"),
    (ecb_xml(day_cube(rates=(("USD", "1,1476"), ("CNY", "7.9")))), "USD rate '1,1476' is not a number"),
    (ecb_xml(day_cube(rates=(("USD", "N/A"),))), "is not a number"),
    (ecb_xml(day_cube(rates=(("USD", "1.1"), ("CNY", "0")))), "CNY rate '0' is not a positive number"),
    (ecb_xml(day_cube(rates=(("USD", "-1.1"),))), "is not a positive number"),
    (ecb_xml(day_cube(rates=(("USD", "1.1"), ("CNY", "")))), "is not a positive number"),
    (ecb_xml(day_cube(rates=(("usd", "1.1"),))), "not ISO 4217"),
    (ecb_xml(day_cube(rates=(("CNY", "7.9"),))), "no rate for USD"),
    ('<!DOCTYPE x [<!ENTITY a "aaaa">]>\n' + ecb_xml().split("\n", 1)[1], "DOCTYPE"),
])
def test_broken_responses_raise_schema_errors(body, message):
    with pytest.raises(SchemaScrapeError, match=message):
        client_for(serve(body)).fetch()
