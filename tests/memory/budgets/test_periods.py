"""A budget's day and month are the person's own: local midnight to local midnight."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from memory.budgets.periods import period_of

TOKYO = ZoneInfo("Asia/Tokyo")
BERLIN = ZoneInfo("Europe/Berlin")


def test_the_day_ends_at_the_persons_local_midnight_not_the_servers() -> None:
    moment = datetime(2026, 12, 7, 14, 59, tzinfo=UTC)  # 23:59 in Tokyo
    day = period_of("day", moment, TOKYO)
    assert day.start == datetime(2026, 12, 6, 15, 0, tzinfo=UTC)
    assert day.end == datetime(2026, 12, 7, 15, 0, tzinfo=UTC)
    assert day.key == "day:2026-12-07"
    assert period_of("day", moment + timedelta(minutes=1), TOKYO).key == "day:2026-12-08"


def test_the_month_is_the_persons_calendar_month() -> None:
    moment = datetime(2026, 12, 31, 16, 0, tzinfo=UTC)  # 1 January 01:00 in Tokyo
    month = period_of("month", moment, TOKYO)
    assert month.key == "month:2027-01"
    assert month.start == datetime(2027, 1, 1, tzinfo=TOKYO).astimezone(UTC)
    assert month.renews == datetime(2027, 2, 1, tzinfo=TOKYO)


def test_december_renews_on_the_first_of_january() -> None:
    month = period_of("month", datetime(2026, 12, 7, 12, tzinfo=UTC), BERLIN)
    assert month.renews == datetime(2027, 1, 1, tzinfo=BERLIN)


def test_a_day_across_a_dst_change_has_its_real_length() -> None:
    spring = period_of("day", datetime(2026, 3, 29, 12, tzinfo=UTC), BERLIN)
    autumn = period_of("day", datetime(2026, 10, 25, 12, tzinfo=UTC), BERLIN)
    assert spring.end - spring.start == timedelta(hours=23)
    assert autumn.end - autumn.start == timedelta(hours=25)


def test_where_the_clock_skips_midnight_the_day_starts_when_it_really_began() -> None:
    santiago = ZoneInfo("America/Santiago")  # 2026-09-06 00:00 -04 became 01:00 -03
    day = period_of("day", datetime(2026, 9, 6, 12, tzinfo=UTC), santiago)
    assert day.start == datetime(2026, 9, 6, 4, 0, tzinfo=UTC)
    assert day.end - day.start == timedelta(hours=23)
