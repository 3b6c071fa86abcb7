"""web.charts and web.currency: pure functions, tested with a handful of rows."""

import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from web import charts
from web.currency import conversions

USD = conversions({}, None)["USD"]
POINTS = [("H100", "Acme", Decimal("2.00")), ("H100", "Dear", Decimal("4.00")), ("H100", "Dear", Decimal("3.00")),
          ("L4", "Acme", Decimal("0.70"))]


def test_conversions_from_ecb_rates_and_missing_rates():
    rates = conversions({"USD": Decimal("1.25"), "CNY": Decimal("9")}, date(2026, 11, 27))
    assert rates["EUR"].convert(Decimal("2.50")) == Decimal("2")
    assert rates["CNY"].convert(Decimal("2.50")) == Decimal("18")
    assert rates["CNY"].rate_date == date(2026, 11, 27) and rates["USD"].rate_date is None
    missing = conversions({"USD": Decimal("1.25")}, date(2026, 11, 27))
    assert not missing["CNY"].available and missing["CNY"].convert(Decimal(1)) is None
    assert not conversions({}, None)["EUR"].available


def test_price_spread_per_gpu_and_per_provider():
    spread = charts.price_spread(POINTS, USD)
    assert [row["gpu"] for row in spread] == ["L4", "H100"]
    assert (spread[1]["offers"], spread[1]["providers"], spread[1]["min"], spread[1]["median"],
            spread[1]["max"]) == (3, 2, 2.0, 3.0, 4.0)
    assert all(type(row[key]) is int for row in spread for key in ("offers", "providers"))
    by_provider = charts.price_spread(POINTS, USD, by="provider")
    assert [row["provider"] for row in by_provider] == ["Acme", "Dear"]
    assert [row["offers"] for row in by_provider] == [2, 2] and all(type(row["offers"]) is int for row in by_provider)
    assert charts.price_spread([], USD) == []


def test_distribution_has_one_box_per_gpu_with_providers_in_the_hover():
    figure = charts.price_distribution(POINTS, USD, axis_title="USD per GPU-hour")
    assert [trace.name for trace in figure.data] == ["H100", "L4"]  # dearest median drawn first (at the bottom)
    assert list(figure.data[0].text) == ["Acme", "Dear", "Dear"]


def test_offer_history_steps_to_the_last_seen_time_per_gpu():
    rows = [{"observed_at": datetime(2026, 11, 1, tzinfo=UTC), "price_hour_usd": Decimal("16"),
             "spot_price_hour_usd": None},
            {"observed_at": datetime(2026, 11, 5, tzinfo=UTC), "price_hour_usd": Decimal("12"),
             "spot_price_hour_usd": None}]
    figure = charts.offer_history(rows, gpu_count=Decimal(8), until=datetime(2026, 11, 9, tzinfo=UTC),
                                  conversion=USD, names={"on_demand": "On-demand", "spot": "Spot"})
    assert len(figure.data) == 1  # no spot trace without spot prices
    assert list(figure.data[0].y) == [2.0, 1.5, 1.5]
    assert figure.data[0].line.shape == "hv"


def test_a_history_within_one_day_shows_one_tick_a_day_not_one_date_repeated():
    """One observation (the bundled snapshot's offers) seen again minutes later: a three-day axis with one tick a
    day around it; a longer history keeps plotly's own ticks."""
    rows = [{"observed_at": datetime(2026, 12, 2, 8, 4, tzinfo=UTC), "price_hour_usd": Decimal("23.6"),
             "spot_price_hour_usd": Decimal("10")}]
    figure = charts.offer_history(rows, gpu_count=Decimal(8), until=datetime(2026, 12, 2, 9, 30, tzinfo=UTC),
                                  conversion=USD, names={"on_demand": "On-demand", "spot": "Spot"})
    axis = figure.layout.xaxis
    assert axis.dtick == charts.DAY_MS
    assert [str(end)[:10] for end in axis.range] == ["2026-12-01", "2026-12-04"]
    longer = charts.offer_history(rows, gpu_count=Decimal(8), until=datetime(2026, 12, 9, tzinfo=UTC),
                                  conversion=USD, names={"on_demand": "On-demand", "spot": "Spot"})
    assert longer.layout.xaxis.dtick is None and longer.layout.xaxis.range is None
    stock = charts.offer_stock([{"changed_at": datetime(2026, 12, 2, 8, tzinfo=UTC), "availability": "available",
                                 "available_count": None}], until=datetime(2026, 12, 2, 8, 30, tzinfo=UTC),
                               names={"trace": "Stock", "in_stock": "In stock", "sold_out": "Sold out"})
    assert stock.layout.xaxis.dtick == charts.DAY_MS


def test_daily_series_holds_prices_until_the_next_observation_and_stops_inactive_offers():
    def row(offer, day, price, active=True, last_seen=None):
        return {"offer_id": offer, "observed_at": datetime(2026, 11, day, 12, tzinfo=UTC),
                "price_hour_usd": Decimal(price), "spot_price_hour_usd": None, "offer__gpu_count": Decimal(1),
                "offer__is_active": active, "offer__last_seen": last_seen or datetime(2026, 11, 4, tzinfo=UTC)}

    rows = [row(1, 1, "3"), row(1, 3, "2"), row(2, 1, "1", active=False, last_seen=datetime(2026, 11, 2, tzinfo=UTC))]
    daily = charts.daily_series(rows, today=datetime(2026, 11, 4, tzinfo=UTC), conversion=USD)
    assert [d.strftime("%d") for d in daily["day"]] == ["01", "02", "03", "04"]
    assert list(daily["min"]) == [1.0, 1.0, 2.0, 2.0]  # offer 2 stops on the day it was last seen
    assert charts.daily_series([], today=datetime(2026, 11, 4, tzinfo=UTC), conversion=USD).empty


def test_figure_json_is_safe_inside_a_script_tag():
    figure = charts.price_distribution([("</script><b>", "A&B", Decimal(1))], USD)
    text = charts.figure_json(figure)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["data"][0]["name"] == "</script><b>"


def test_offer_stock_steps_between_in_stock_and_sold_out_until_now():
    offer_stock = charts.offer_stock
    t = [datetime(2026, 11, day, tzinfo=UTC) for day in (1, 3, 5)]
    changes = [{"changed_at": t[0], "availability": "available", "available_count": None},
               {"changed_at": t[1], "availability": "unavailable", "available_count": None},
               {"changed_at": t[2], "availability": "limited", "available_count": 2}]
    names = {"trace": "Stock", "in_stock": "in stock", "sold_out": "sold out", "available": "available",
             "limited": "limited", "unavailable": "sold out"}
    until = datetime(2026, 11, 7, tzinfo=UTC)
    trace = offer_stock(changes, until=until, names=names).data[0]
    assert list(trace.y) == [1, 0, 1, 1] and list(trace.x)[-1] == until
    assert list(trace.customdata) == ["available", "sold out", "limited (2)", "limited (2)"]
    assert trace.line.shape == "hv"


@pytest.mark.django_db
def test_pages_are_compressed_for_clients_that_accept_gzip(client):
    import gzip

    response = client.get("/guides/", HTTP_ACCEPT_ENCODING="gzip, br")
    assert response["Content-Encoding"] == "gzip"
    assert b"<!doctype html>" in gzip.decompress(response.content)
    assert "Accept-Encoding" in response["Vary"]
    assert "Content-Encoding" not in client.get("/guides/")  # and plain for clients that do not


def test_a_crowded_box_is_sent_as_its_summary_with_only_the_outliers_as_points():
    points = [("H100", f"P{i % 7}", Decimal("2.00") + Decimal(i % 50) / 100) for i in range(300)]
    points += [("H100", "Dearest", Decimal("40")), ("L4", "Acme", Decimal("0.70"))]
    figure = charts.price_distribution(points, USD, max_points=200)
    box, outliers, small = figure.data
    assert box.type == "box" and box.x is None and list(box.y) == ["H100"]
    assert (box.q1[0], box.median[0], box.q3[0]) == (2.12, 2.25, 2.37)  # pandas' linear quartiles of the prices
    assert box.upperfence[0] == 2.49 and box.lowerfence[0] == 2.0  # whiskers end at the last price within 1.5 IQR
    assert outliers.type == "scatter" and list(outliers.x) == [40.0] and list(outliers.text) == ["Dearest"]
    assert list(outliers.y) == ["H100"]  # drawn on the box's row
    assert small.type == "box" and list(small.x) == [0.7]  # a small box keeps every offer as a point
    text = charts.figure_json(figure)
    # Not 301 points, nor plotly.py's 6.5 KB default template.
    assert len(text) < 1500 and "template" not in json.loads(text)["layout"]
