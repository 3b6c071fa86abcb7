"""Chart figures for the pages: pure functions from plain rows (what the selectors return) to plotly figures, plus
the small pandas analytics behind them (price spreads, daily series).

Nothing here reads the database or the request: views pass in the rows, the display currency's Conversion and the
already translated labels, so every function can be tested with a handful of tuples. Figures are embedded as JSON
(`figure_json`) and drawn by the vendored plotly.js through static/js/charts.js; pages without charts never load
plotly.js.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal

import pandas as pd
import plotly.graph_objects as go

from .currency import Conversion

# At most this many GPU models in one distribution chart (the most offered ones): more boxes are unreadable.
MAX_BOXES = 30
# A box with more offers than this is sent as its five numbers plus the offers outside its whiskers, not as every
# offer: on the unfiltered chart (up to 20,000 offers) the points were most of the inline JSON and of the time
# plotly took to draw on a slow link, while a box of hundreds of overlapping dots shows no more than its summary.
MAX_POINTS_PER_BOX = 200

_LAYOUT = {
    "margin": {"l": 10, "r": 10, "t": 30, "b": 40},
    "font": {"family": 'system-ui, -apple-system, "Segoe UI", "PingFang SC", "Microsoft YaHei", sans-serif'},
    "paper_bgcolor": "#ffffff",
    "plot_bgcolor": "#ffffff",
    "hovermode": "closest",
}


def _amount(value: Decimal | None, conversion: Conversion) -> float | None:
    converted = conversion.convert(value)
    return None if converted is None else float(converted)


def price_frame(points: Iterable[tuple[str, str, Decimal]], conversion: Conversion) -> pd.DataFrame:
    """(GPU, provider, USD per GPU-hour) rows as a frame with the price in the display currency."""
    frame = pd.DataFrame(list(points), columns=["gpu", "provider", "usd"])
    frame["price"] = [_amount(value, conversion) for value in frame["usd"]]
    return frame.dropna(subset=["price"])


def price_spread(points: Iterable[tuple[str, str, Decimal]], conversion: Conversion, by: str = "gpu") -> list[dict]:
    """Per GPU model, lowest median first, or per provider (`by="provider"`, for one GPU model's page), cheapest
    first: number of offers (and, per GPU model, of providers), cheapest, median and dearest price."""
    frame = price_frame(points, conversion)
    if frame.empty:
        return []
    grouped = frame.groupby(by)
    counts = {"offers": grouped.size()} | ({"providers": grouped["provider"].nunique()} if by == "gpu" else {})
    stats = pd.DataFrame({
        **counts, "min": grouped["price"].min(), "median": grouped["price"].median(), "max": grouped["price"].max(),
    }).sort_values(["median", "min"] if by == "gpu" else ["min", "median"])
    # A row of the frame is one float Series: counts are made whole numbers again ("6 offers", not "6.0").
    return [{by: name, **{key: row[key] for key in stats.columns}, **{key: int(row[key]) for key in counts}}
            for name, row in stats.iterrows()]


def _summary_traces(rows: pd.DataFrame, name: str, *, other: str, hover: str) -> list:
    """One horizontal box from its precomputed quartiles (plotly's default linear method) and whiskers (the most
    extreme prices within 1.5 IQR of the box), plus the offers beyond the whiskers as points on the same row."""
    prices = rows["price"]
    q1, median, q3 = (float(prices.quantile(q)) for q in (0.25, 0.5, 0.75))
    reach = 1.5 * (q3 - q1)
    inside = prices[(prices >= q1 - reach) & (prices <= q3 + reach)]
    low, high = float(inside.min()), float(inside.max())
    traces = [go.Box(
        y=[name], q1=[round(q1, 4)], median=[round(median, 4)], q3=[round(q3, 4)], lowerfence=[round(low, 4)],
        upperfence=[round(high, 4)], name=name, orientation="h", line={"width": 1}, showlegend=False,
        boxpoints=False, hoverinfo="x",
    )]
    outliers = rows[(prices < low) | (prices > high)]
    if not outliers.empty:
        traces.append(go.Scatter(
            x=outliers["price"].round(4).tolist(), y=[name] * len(outliers), name=name, mode="markers",
            text=outliers[other].tolist(), marker={"size": 4, "opacity": 0.6}, showlegend=False,
            hovertemplate=hover,
        ))
    return traces


def price_distribution(points: Iterable[tuple[str, str, Decimal]], conversion: Conversion, *, by: str = "gpu",
                       title: str = "", axis_title: str = "", max_points: int = MAX_POINTS_PER_BOX) -> go.Figure:
    """Horizontal box plot of prices per GPU model (`by="gpu"`) or per provider (`by="provider"`), every offer a
    point so outliers stay visible; the hover names the provider (or GPU). Boxes are ordered by median. A box of more
    than `max_points` offers is drawn from its summary, with only its outliers as points."""
    frame = price_frame(points, conversion)
    other = "provider" if by == "gpu" else "gpu"
    figure = go.Figure()
    if not frame.empty:
        keep = frame[by].value_counts().index[:MAX_BOXES]
        frame = frame[frame[by].isin(keep)]
        order = frame.groupby(by)["price"].median().sort_values(ascending=False).index
        hover = "%{text}<br>%{x:.3f} " + conversion.currency + "<extra>%{fullData.name}</extra>"
        for name in order:
            rows = frame[frame[by] == name]
            if len(rows) <= max_points:
                figure.add_trace(go.Box(
                    x=rows["price"].round(4).tolist(), name=str(name), boxpoints="all", jitter=0.4, pointpos=0,
                    orientation="h", text=rows[other].tolist(), marker={"size": 4, "opacity": 0.6},
                    line={"width": 1}, showlegend=False, hovertemplate=hover,
                ))
                continue
            figure.add_traces(_summary_traces(rows, str(name), other=other, hover=hover))
    height = max(260, 60 + 26 * len({trace.name for trace in figure.data}))
    figure.update_layout(**_LAYOUT, height=height, title={"text": title, "x": 0},
                         xaxis={"title": {"text": axis_title}, "rangemode": "tozero", "zeroline": False},
                         yaxis={"automargin": True})
    return figure


DAY_MS = 86_400_000


def _date_axis(moments: Sequence[datetime]) -> dict:
    """An x axis of dates. Moments within two days of each other (one observation, or one and the last sighting
    the same day) get a three-day range with one tick a day: plotly's own ticks would repeat one date along the
    axis, a tick every few hours all printed as the same day."""
    axis = {"tickformat": "%Y-%m-%d"}
    if moments and max(moments) - min(moments) < timedelta(days=2):
        first = min(moments).replace(hour=0, minute=0, second=0, microsecond=0)
        axis.update(range=[first - timedelta(days=1), first + timedelta(days=2)], dtick=DAY_MS)
    return axis


def offer_history(observations: Sequence[dict], *, gpu_count: Decimal, until: datetime, conversion: Conversion,
                  names: dict[str, str], title: str = "", axis_title: str = "") -> go.Figure:
    """Step lines of one offer's on-demand and spot price per GPU-hour, each observation holding until the next
    one and the last one until `until` (when the offer was last seen). `names` labels the two traces."""
    figure = go.Figure()
    count = gpu_count if gpu_count else Decimal(1)
    moments = [row["observed_at"] for row in observations] + ([until] if observations else [])
    for field, key in (("price_hour_usd", "on_demand"), ("spot_price_hour_usd", "spot")):
        xs = [row["observed_at"] for row in observations]
        ys = [_amount(row[field] / count if row[field] is not None else None, conversion) for row in observations]
        if not any(y is not None for y in ys):
            continue
        if xs and until > xs[-1]:
            xs, ys = [*xs, until], [*ys, ys[-1]]
        figure.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", line={"shape": "hv"}, name=names[key],
                                    connectgaps=False,
                                    hovertemplate="%{x|%Y-%m-%d %H:%M}<br>%{y:.3f} " + conversion.currency))
    figure.update_layout(**_LAYOUT, height=320, title={"text": title, "x": 0}, xaxis=_date_axis(moments),
                         yaxis={"title": {"text": axis_title}, "rangemode": "tozero", "automargin": True},
                         legend={"orientation": "h", "y": -0.2})
    return figure


def offer_stock(changes: Sequence[dict], *, until: datetime, names: dict[str, str], title: str = "") -> go.Figure:
    """A step line of one offer's stock over time from its changes (each state holds until the next change, the
    last one until `until`): 1 in stock (available or limited), 0 sold out; the hover names the state and the count
    where the source gave one. `names` labels the trace and the two levels ("in_stock", "sold_out", "trace")."""
    xs = [row["changed_at"] for row in changes]
    ys = [0 if row["availability"] == "unavailable" else 1 for row in changes]
    hover = [names.get(row["availability"], row["availability"])
             + (f" ({row['available_count']})" if row["available_count"] is not None else "") for row in changes]
    if xs and until > xs[-1]:
        xs, ys, hover = [*xs, until], [*ys, ys[-1]], [*hover, hover[-1]]
    figure = go.Figure(go.Scatter(x=xs, y=ys, mode="lines+markers", line={"shape": "hv"}, name=names["trace"],
                                  customdata=hover, hovertemplate="%{x|%Y-%m-%d %H:%M}<br>%{customdata}"))
    figure.update_layout(**_LAYOUT, height=220, title={"text": title, "x": 0}, showlegend=False,
                         xaxis=_date_axis(xs),
                         yaxis={"tickvals": [0, 1], "ticktext": [names["sold_out"], names["in_stock"]],
                                "range": [-0.2, 1.2]})
    return figure


def daily_series(rows: Sequence[dict], *, today: datetime, conversion: Conversion) -> pd.DataFrame:
    """From every observation of every offer of a GPU model, the cheapest and median on-demand and the cheapest
    spot price per GPU-hour of each day.

    An observation holds until the offer's next one; an offer that is no longer listed stops on the day it was
    last seen. Days are UTC calendar days; a day's value is the price in force at the end of that day."""
    columns = ["day", "min", "median", "spot_min"]
    if not rows:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(rows)
    count = frame["offer__gpu_count"].map(lambda c: c if c else Decimal(1))
    for field, target in (("price_hour_usd", "price"), ("spot_price_hour_usd", "spot")):
        frame[target] = [_amount(p / c if p is not None else None, conversion) for p, c in zip(frame[field], count,
                                                                                               strict=True)]
    frame["day"] = pd.to_datetime(frame["observed_at"], utc=True).dt.floor("D")
    end_today = pd.Timestamp(today).tz_convert("UTC").floor("D")
    series = []
    for _offer_id, group in frame.groupby("offer_id"):
        active = bool(group["offer__is_active"].iloc[-1])
        last_seen = pd.Timestamp(group["offer__last_seen"].iloc[-1]).tz_convert("UTC").floor("D")
        prices = group.drop_duplicates("day", keep="last").set_index("day")[["price", "spot"]]
        stop = max(prices.index.max(), end_today if active else last_seen)
        series.append(prices.reindex(pd.date_range(prices.index.min(), stop, freq="D")).ffill())
    daily = pd.concat(series)
    result = daily.groupby(level=0).agg(min=("price", "min"), median=("price", "median"), spot_min=("spot", "min"))
    result.index.name = "day"
    return result.reset_index()[columns]


def gpu_history(daily: pd.DataFrame, *, conversion: Conversion, names: dict[str, str], title: str = "",
                axis_title: str = "") -> go.Figure:
    """Lines of a GPU model's daily cheapest and median on-demand price and cheapest spot price."""
    figure = go.Figure()
    for column, key, dash in (("min", "min", "solid"), ("median", "median", "dot"), ("spot_min", "spot", "dash")):
        if daily.empty or daily[column].isna().all():
            continue
        figure.add_trace(go.Scatter(
            x=[day.strftime("%Y-%m-%d") for day in daily["day"]], y=daily[column].round(4).tolist(),
            mode="lines+markers", name=names[key], line={"shape": "hv", "dash": dash},
            hovertemplate="%{x}<br>%{y:.3f} " + conversion.currency,
        ))
    figure.update_layout(**_LAYOUT, height=320, title={"text": title, "x": 0}, xaxis={"type": "date"},
                         yaxis={"title": {"text": axis_title}, "rangemode": "tozero", "automargin": True},
                         legend={"orientation": "h", "y": -0.2})
    return figure


def figure_json(figure: go.Figure) -> str:
    """The figure as JSON safe to place inside <script type="application/json"> (no closing tags, no entities).

    Without plotly.py's default template (6.5 KB of styles per chart, whose white grid was invisible on our white
    background anyway): plotly.js's own defaults draw the same colours with a visible grey grid."""
    data = json.loads(figure.to_json())
    data.get("layout", {}).pop("template", None)
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
