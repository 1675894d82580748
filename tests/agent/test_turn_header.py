"""The user-turn header gives the speaker's local time, its offset and zone name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from agent.prompt import header_time

NOON_UTC = datetime(2026, 3, 29, 12, 0, tzinfo=UTC)


def test_a_named_zone_shows_weekday_offset_and_name() -> None:
    assert header_time(NOON_UTC.astimezone(ZoneInfo("Asia/Tokyo"))) == (
        "Sun 2026-03-29 21:00 +09:00 (Asia/Tokyo)"
    )


def test_summer_time_shows_in_the_offset() -> None:
    assert header_time(NOON_UTC.astimezone(ZoneInfo("Europe/Paris"))) == (
        "Sun 2026-03-29 14:00 +02:00 (Europe/Paris)"
    )


def test_a_fixed_offset_has_no_name_to_show() -> None:
    india = timezone(timedelta(hours=5, minutes=30))
    assert header_time(NOON_UTC.astimezone(india)) == "Sun 2026-03-29 17:30 +05:30"
