"""Time travel over week boundaries and time zones: which 7 days a digest run covers."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from digest.weeks import digest_week

BOUNDARY = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)  # a Monday


def test_the_boundary_itself_opens_the_new_week():
    week = digest_week(BOUNDARY)
    assert (week.start, week.end) == (BOUNDARY - timedelta(days=7), BOUNDARY)
    assert week.key.isoformat() == "2026-11-23"


def test_a_microsecond_before_the_boundary_is_still_the_previous_week():
    assert digest_week(BOUNDARY - timedelta(microseconds=1)).end == BOUNDARY - timedelta(days=7)


def test_a_run_retried_days_later_keeps_its_week():
    assert digest_week(BOUNDARY + timedelta(days=6, hours=23)).end == BOUNDARY


@pytest.mark.parametrize(
    ("local", "expected_end"),
    [
        # Shanghai (UTC+8): Monday 15:59 local is 07:59 UTC, before the boundary; 16:00 local is the boundary.
        (datetime(2026, 11, 23, 15, 59, tzinfo=ZoneInfo("Asia/Shanghai")), BOUNDARY - timedelta(days=7)),
        (datetime(2026, 11, 23, 16, 0, tzinfo=ZoneInfo("Asia/Shanghai")), BOUNDARY),
        # Los Angeles: Monday 00:30 PST is 08:30 UTC, already in the new week although it is Monday locally too...
        (datetime(2026, 11, 23, 0, 30, tzinfo=ZoneInfo("America/Los_Angeles")), BOUNDARY),
        # ...and Sunday 23:59 PST is Monday 07:59 UTC: the previous week.
        (datetime(2026, 11, 22, 23, 59, tzinfo=ZoneInfo("America/Los_Angeles")), BOUNDARY - timedelta(days=7)),
        # Summer time does not move the UTC boundary: Monday 01:00 PDT is 08:00 UTC.
        (datetime(2026, 7, 6, 1, 0, tzinfo=ZoneInfo("America/Los_Angeles")), datetime(2026, 7, 6, 8, 0, tzinfo=UTC)),
    ],
)
def test_moments_in_other_time_zones_fall_in_the_week_of_their_utc_instant(local, expected_end):
    assert digest_week(local).end == expected_end


def test_the_boundary_follows_the_settings(settings):
    settings.DIGEST_SEND_WEEKDAY, settings.DIGEST_SEND_HOUR, settings.DIGEST_SEND_MINUTE = 5, 17, 30  # Friday
    week = digest_week(datetime(2026, 11, 23, 8, 0, tzinfo=UTC))
    assert week.end == datetime(2026, 11, 20, 17, 30, tzinfo=UTC)
    assert digest_week(datetime(2026, 11, 27, 17, 30, tzinfo=UTC)).end == datetime(2026, 11, 27, 17, 30, tzinfo=UTC)


def test_a_naive_datetime_is_refused():
    with pytest.raises(ValueError):
        digest_week(datetime(2026, 11, 23, 8, 0))
