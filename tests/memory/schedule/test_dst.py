"""Spring-forward and fall-back days: cron jobs follow cronsim (Debian cron's rules), an
`at` local time in the gap moves forward, an ambiguous one is its first occurrence."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from memory.schedule.timing import first_run, local_time, next_slot, parse_when, upcoming

NEW_YORK = ZoneInfo("America/New_York")  # 2026-03-08 02:00 -> 03:00; 2026-11-01 02:00 -> 01:00
BERLIN = ZoneInfo("Europe/Berlin")  # 2026-03-29 02:00 -> 03:00; 2026-10-25 03:00 -> 02:00


def runs(zone: ZoneInfo, cron: str, day_before: datetime, n: int = 3) -> list[str]:
    when = parse_when(
        at=None, in_=None, cron=cron, every=None, zone=zone, now=day_before, min_interval=900
    )
    return [local_time(run, zone) for run in upcoming(when, day_before, n=n)]


def at(zone: ZoneInfo, local: str) -> str:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    when = parse_when(
        at=local, in_=None, cron=None, every=None, zone=zone, now=now, min_interval=900
    )
    return local_time(first_run(when, now), zone)


@pytest.mark.parametrize(
    ("zone", "day_before", "expected"),
    [
        (NEW_YORK, datetime(2026, 3, 7, 12, tzinfo=UTC), "Sun 8 Mar 03:00 EDT"),
        (BERLIN, datetime(2026, 3, 28, 12, tzinfo=UTC), "Sun 29 Mar 03:00 CEST"),
    ],
)
def test_a_cron_time_in_the_spring_gap_runs_when_the_gap_ends(zone, day_before, expected) -> None:
    first, second, _ = runs(zone, "30 2 * * *", day_before)
    assert first == expected
    assert second.endswith("02:30 " + expected.split()[-1])


@pytest.mark.parametrize(
    ("zone", "cron", "day_before", "expected"),
    [
        (
            NEW_YORK,
            "30 1 * * *",
            datetime(2026, 10, 31, 12, tzinfo=UTC),
            ["Sun 1 Nov 01:30 EDT", "Mon 2 Nov 01:30 EST"],
        ),
        (
            BERLIN,
            "30 2 * * *",
            datetime(2026, 10, 24, 12, tzinfo=UTC),
            ["Sun 25 Oct 02:30 CEST", "Mon 26 Oct 02:30 CET"],
        ),
    ],
)
def test_a_cron_time_in_the_repeated_hour_runs_once_at_its_first_occurrence(
    zone, cron, day_before, expected
) -> None:
    assert runs(zone, cron, day_before, n=2) == expected


def test_a_cron_time_away_from_the_change_keeps_its_local_time() -> None:
    assert runs(NEW_YORK, "30 1 * * *", datetime(2026, 3, 7, 12, tzinfo=UTC)) == [
        "Sun 8 Mar 01:30 EST",
        "Mon 9 Mar 01:30 EDT",
        "Tue 10 Mar 01:30 EDT",
    ]


def test_an_hourly_cron_runs_in_each_real_hour_of_a_fall_back_night() -> None:
    night = runs(NEW_YORK, "30 * * * *", datetime(2026, 11, 1, 4, 0, tzinfo=UTC), n=4)
    assert night == [
        "Sun 1 Nov 00:30 EDT",
        "Sun 1 Nov 01:30 EDT",
        "Sun 1 Nov 01:30 EST",
        "Sun 1 Nov 02:30 EST",
    ]


@pytest.mark.parametrize(
    ("zone", "local", "expected"),
    [
        (NEW_YORK, "2026-03-08T02:30", "Sun 8 Mar 03:30 EDT"),
        (BERLIN, "2026-03-29T02:30", "Sun 29 Mar 03:30 CEST"),
    ],
)
def test_an_at_time_that_does_not_exist_moves_forward_by_the_gap(zone, local, expected) -> None:
    assert at(zone, local) == expected


@pytest.mark.parametrize(
    ("zone", "local", "expected"),
    [
        (NEW_YORK, "2026-11-01T01:30", "Sun 1 Nov 01:30 EDT"),
        (BERLIN, "2026-10-25T02:30", "Sun 25 Oct 02:30 CEST"),
    ],
)
def test_an_ambiguous_at_time_is_its_first_occurrence(zone, local, expected) -> None:
    assert at(zone, local) == expected


def test_an_every_job_keeps_its_interval_in_real_time_across_the_change() -> None:
    made = datetime(2026, 3, 7, 12, tzinfo=UTC)
    when = parse_when(
        at=None, in_=None, cron=None, every="1d", zone=NEW_YORK, now=made, min_interval=900
    )
    assert [local_time(run, NEW_YORK) for run in upcoming(when, made)] == [
        "Sun 8 Mar 08:00 EDT",
        "Mon 9 Mar 08:00 EDT",
        "Tue 10 Mar 08:00 EDT",
    ]
    assert next_slot(when, made, datetime(2026, 3, 8, 13, tzinfo=UTC)) == datetime(
        2026, 3, 9, 12, tzinfo=UTC
    )
