"""Reading schedules in a person's zone, their next runs, and the refusals that say what to send."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory.schedule.timing import (
    BadSchedule,
    When,
    first_run,
    local_time,
    next_after,
    next_slot,
    parse_when,
    upcoming,
    zone_name,
    zone_named,
)

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)  # Thu 3 Dec 21:00 JST
MIN = 900.0


def when(zone=TOKYO, now=NOW, min_interval=MIN, **asked: str) -> When:
    values = {"at": None, "in_": None, "cron": None, "every": None, **asked}
    return parse_when(**values, zone=zone, now=now, min_interval=min_interval)


def test_at_without_offset_is_local_time_in_the_persons_zone() -> None:
    made = when(at="2026-12-04T09:00")
    assert made == When("once", "2026-12-04T00:00:00+00:00", "Asia/Tokyo")
    assert local_time(first_run(made, NOW), TOKYO) == "Fri 4 Dec 09:00 JST"


def test_at_with_an_offset_keeps_it() -> None:
    made = when(at="2026-12-04T09:00+01:00")
    assert first_run(made, NOW) == datetime(2026, 12, 4, 8, 0, tzinfo=UTC)


def test_in_counts_from_now() -> None:
    assert first_run(when(in_="20m"), NOW) == NOW + timedelta(minutes=20)
    assert next_after(when(in_="20m"), NOW + timedelta(minutes=20)) is None


def test_every_counts_from_creation() -> None:
    made = when(every="1d")
    assert made.spec == "86400"
    assert upcoming(made, NOW, n=2) == [
        NOW + timedelta(days=1),
        NOW + timedelta(days=2),
    ]


def test_cron_runs_in_the_persons_zone() -> None:
    made = when(cron="0 9 * * 1")
    assert [local_time(run, TOKYO) for run in upcoming(made, NOW, n=2)] == [
        "Mon 7 Dec 09:00 JST",
        "Mon 14 Dec 09:00 JST",
    ]


def test_upcoming_stops_at_until_and_remaining() -> None:
    made = when(every="1h")
    start = first_run(made, NOW)
    assert len(upcoming(made, NOW, n=5, remaining=2)) == 2
    assert upcoming(made, NOW, n=5, until=start + timedelta(minutes=90)) == [
        start,
        start + timedelta(hours=1),
    ]


def test_a_repeating_job_that_missed_slots_runs_next_after_now() -> None:
    made = when(every="1h")
    later = NOW + timedelta(hours=5, minutes=10)
    assert next_slot(made, NOW, later) == NOW + timedelta(hours=6)
    cron = when(cron="0 * * * *")
    assert next_slot(cron, NOW, later) == NOW + timedelta(hours=6)
    assert next_slot(when(in_="1m"), NOW, later) is None


@pytest.mark.parametrize(
    ("asked", "says"),
    [
        ({}, "exactly one of at, in, cron or every (got none)"),
        ({"at": "2026-12-04T09:00", "in_": "2h"}, "(got at and in)"),
        ({"at": "2026-12-03T09:00"}, "has passed"),
        ({"at": "tomorrow at nine"}, "not an ISO 8601 date-time"),
        ({"at": "2026-12-04"}, '"2026-12-04T09:00"'),
        ({"in_": "soon"}, "send a number and a unit"),
        ({"in_": "0s"}, "not a duration above zero"),
        ({"every": "5m"}, "send every 15m or longer"),
        ({"in_": "99999999999w"}, "more than ten years; send a shorter duration"),
        ({"every": "600w"}, "more than ten years"),
        ({"at": "2040-01-01T09:00"}, "more than ten years ahead; send a nearer time"),
        ({"at": "9999-12-31T23:59-05:00"}, "beyond the year 9999; send a nearer time"),
        ({"cron": "0 9 * *"}, "has 4 fields; send 5"),
        ({"cron": "0 25 * * *"}, "is not a cron expression"),
        ({"cron": "0 9 31 2 *"}, "is not a cron expression"),
    ],
)
def test_bad_schedules_say_what_to_send_instead(asked: dict[str, str], says: str) -> None:
    with pytest.raises(BadSchedule) as refused:
        when(**asked)
    assert says in str(refused.value)
    assert "send" in str(refused.value)


def test_an_unknown_zone_is_refused_with_examples() -> None:
    with pytest.raises(BadSchedule, match="IANA name such as Asia/Tokyo"):
        zone_named("Mars/Olympus")
    for wrong in ("", "America", "Asia/", "a" * 300, "../etc/passwd", "zone.tab"):
        with pytest.raises(BadSchedule):
            zone_named(wrong)


def test_fixed_offsets_round_trip_through_their_names() -> None:
    assert zone_name(zone_named("+05:30")) == "+05:30"
    assert zone_name(zone_named("Europe/Berlin")) == "Europe/Berlin"
    assert zone_name(UTC) == "UTC"


def test_local_time_shows_an_offset_where_the_zone_has_no_abbreviation() -> None:
    moment = datetime(2026, 12, 4, 0, 0, 5, tzinfo=UTC)
    assert local_time(moment, ZoneInfo("America/Sao_Paulo")) == "Thu 3 Dec 21:00:05 -03:00"


@pytest.mark.parametrize(("cron", "gap"), [("* * * * *", "1m"), ("0,10 9 * * *", "10m")])
def test_a_cron_whose_runs_come_closer_than_min_interval_is_refused(cron: str, gap: str) -> None:
    with pytest.raises(BadSchedule, match=rf"runs {gap} apart \(.*closer than the minimum of 15m"):
        when(cron=cron)


def test_a_cron_gap_across_midnight_counts() -> None:
    """23:50 and 00:05 are 15 minutes apart though far apart on the clock."""
    with pytest.raises(BadSchedule, match="runs 15m apart"):
        when(cron="50,5 23,0 * * *", min_interval=1200)


def test_a_cron_gap_is_real_time_across_a_dst_change() -> None:
    """In New York, 02:30 on the spring-forward day runs at 03:00, 30 minutes before 03:30."""
    new_york = ZoneInfo("America/New_York")
    before = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
    with pytest.raises(BadSchedule, match="runs 30m apart"):
        when(zone=new_york, now=before, min_interval=3600, cron="30 2,3 * * *")
    assert when(zone=new_york, now=before, min_interval=1800, cron="30 2,3 * * *").kind == "cron"


def test_crons_at_least_min_interval_apart_are_kept() -> None:
    for cron in ("*/15 * * * *", "0 9 * * 1", "0 8,20 * * *"):
        assert when(cron=cron).spec == cron


def test_a_schedule_over_400_characters_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(BadSchedule, match="cron is 1,009 characters long"):
        when(cron="1," * 500 + "2 * * * *")
