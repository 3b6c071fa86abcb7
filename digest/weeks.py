"""Which 7 days a digest covers. Plain Python on aware datetimes; no database.

The digest week ends at the send boundary (settings DIGEST_SEND_WEEKDAY/HOUR/MINUTE, in UTC, Monday 08:00 by
default) and starts 7 days earlier; a run at any moment belongs to the latest boundary at or before it. So a task
that is retried or redelivered hours later still reports, and claims, the same week, and a moment given in any time
zone (a Shanghai or a Los Angeles clock) lands in the week its UTC instant belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.conf import settings

WEEK = timedelta(days=7)


@dataclass(frozen=True)
class DigestWeek:
    start: datetime
    end: datetime

    @property
    def key(self) -> date:
        """Identifies the week in Delivery rows: the UTC date of its closing boundary."""
        return self.end.date()


def digest_week(at: datetime) -> DigestWeek:
    """The digest week whose closing boundary is the latest one at or before `at` (an aware datetime)."""
    if at.tzinfo is None:
        raise ValueError("digest_week needs an aware datetime")
    at = at.astimezone(UTC)
    weekday = settings.DIGEST_SEND_WEEKDAY - 1  # settings use ISO numbering (1 = Monday); Python's Monday is 0
    boundary = at.replace(hour=settings.DIGEST_SEND_HOUR, minute=settings.DIGEST_SEND_MINUTE, second=0,
                          microsecond=0)
    boundary -= timedelta(days=(at.weekday() - weekday) % 7)
    if boundary > at:
        boundary -= WEEK
    return DigestWeek(start=boundary - WEEK, end=boundary)


def trailing_week(at: datetime) -> DigestWeek:
    """The 7 days that end at `at`: what a staff preview shows mid-week."""
    at = at.astimezone(UTC)
    return DigestWeek(start=at - WEEK, end=at)
