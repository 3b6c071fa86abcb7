"""How a page says an offer's stock: "available now (checked 12 minutes ago)", "sold out since 28 Nov 2026", a
recording's state with the recording's date, or "unknown". Plain functions of the offer's stored values, so the
offers table, the offer page and the GPU and provider pages say it the same way."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext


def stock_text(*, availability: str, available_count: int | None, checked_at: datetime | None,
               since: datetime | None, recorded: bool | None) -> str:
    """One line for an offer's stock; "" when no check ever stated it (the caller then shows the bare state, or
    "unknown")."""
    if availability not in ("available", "limited", "unavailable") or checked_at is None:
        return ""
    if recorded and checked_at is not None:
        day = date_format(timezone.localtime(checked_at), "DATE_FORMAT")
        state = {"available": gettext("available"), "limited": gettext("limited"),
                 "unavailable": gettext("sold out")}[availability]
        return gettext("%(state)s in a recording of %(date)s") % {"state": state, "date": day}
    if availability == "unavailable":
        text = gettext("sold out")
        if since is not None:
            text = gettext("sold out since %(date)s") % {
                "date": date_format(timezone.localtime(since), "DATETIME_FORMAT")}
    elif availability == "limited":
        text = gettext("limited now")
        if available_count is not None:
            text = f"{text} ({available_count})"
    else:
        text = gettext("available now")
        if available_count is not None:
            text = f"{text} ({available_count})"
    if checked_at is not None:
        text = gettext("%(state)s (checked %(ago)s)") % {"state": text, "ago": naturaltime(checked_at)}
    return text


def share_text(share) -> str:
    """0.8333 -> "83%"; None -> "" (never checked in the window)."""
    return "" if share is None else f"{round(float(share) * 100)}%"


def duration_text(length: timedelta | None) -> str:
    """A stock-out's length in days and hours ("2 d 5 h", "40 min"); "" for none."""
    if length is None:
        return ""
    minutes = int(length.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return gettext("%(days)s d %(hours)s h") % {"days": days, "hours": hours}
    if hours:
        return gettext("%(hours)s h %(minutes)s min") % {"hours": hours, "minutes": minutes}
    return gettext("%(minutes)s min") % {"minutes": minutes}


def when_text(*, availability: str, checked_at: datetime | None, since: datetime | None,
              recorded: bool | None) -> str:
    """The short companion of a state already shown (the offers table's cell): "checked 12 minutes ago", "since
    28 Nov 2026" for a stock-out, or "in a recording of ..."; "" when no check ever stated it."""
    if checked_at is None or availability not in ("available", "limited", "unavailable"):
        return ""
    if recorded:
        return gettext("in a recording of %(date)s") % {
            "date": date_format(timezone.localtime(checked_at), "DATE_FORMAT")}
    if availability == "unavailable" and since is not None:
        return gettext("since %(date)s") % {"date": date_format(timezone.localtime(since), "DATETIME_FORMAT")}
    return gettext("checked %(ago)s") % {"ago": naturaltime(checked_at)}
