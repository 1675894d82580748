"""Properties of the next-run arithmetic over many intervals, zones and downtimes."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory.schedule.timing import When, next_after, next_slot

CREATED = datetime(2026, 1, 1, tzinfo=UTC)
ZONES = st.sampled_from(["Asia/Tokyo", "America/New_York", "Europe/Berlin", "UTC"])


@given(
    step=st.integers(min_value=60, max_value=30 * 86_400),
    down=st.floats(min_value=0, max_value=400 * 86_400, allow_nan=False),
)
def test_an_every_job_next_slot_is_on_its_grid_within_one_step_after_now(
    step: int, down: float
) -> None:
    now = CREATED + timedelta(seconds=down)
    found = next_slot(When("every", str(step), "UTC"), CREATED, now)
    assert found is not None
    assert now < found <= now + timedelta(seconds=step)
    assert (found - CREATED).total_seconds() % step == 0


@settings(max_examples=60, deadline=None)
@given(
    zone=ZONES,
    minute=st.integers(0, 59),
    hour=st.integers(0, 23),
    after=st.integers(min_value=0, max_value=2 * 365 * 86_400),
)
@example(zone="America/New_York", minute=30, hour=2, after=65 * 86_400 + 12 * 3600)
def test_a_daily_cron_runs_after_the_moment_at_its_local_time_or_after_a_gap(
    zone: str, minute: int, hour: int, after: int
) -> None:
    moment = CREATED + timedelta(seconds=after)
    found = next_after(When("cron", f"{minute} {hour} * * *", zone), moment)
    assert found is not None
    assert moment < found <= moment + timedelta(hours=25)
    local = found.astimezone(ZoneInfo(zone))
    if (local.hour, local.minute) != (hour, minute):
        # Only on a spring-forward day, when the time does not exist: the gap's end.
        wall = datetime.combine(local.date(), time(hour, minute), ZoneInfo(zone))
        assert wall.astimezone(UTC).astimezone(ZoneInfo(zone)) != wall
        assert local.minute == 0 and local.hour == hour + 1
