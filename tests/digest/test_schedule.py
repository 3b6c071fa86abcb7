"""The beat entry of the digest: weekly at the send boundary, expiring well before the next run."""

from datetime import UTC, datetime, timedelta

from comparator.celery import BEAT_SCHEDULE


def _runs(schedule, since: datetime, count: int) -> list[datetime]:
    runs, moment = [], since
    for _ in range(count):
        start, delta, _now = schedule.remaining_delta(moment)
        moment = start + delta
        runs.append(moment)
    return runs


def test_the_digest_runs_every_monday_at_0800_utc_and_a_stale_run_expires_first():
    entry = BEAT_SCHEDULE["send-weekly-digest"]
    assert entry["task"] == "digest.tasks.digest_send_due"
    runs = _runs(entry["schedule"], datetime(2026, 11, 18, 12, 0, tzinfo=UTC), 3)
    assert runs[0] == datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
    assert [b - a for a, b in zip(runs, runs[1:], strict=False)] == [timedelta(days=7)] * 2
    assert 0 < entry["options"]["expires"] < 7 * 24 * 3600
