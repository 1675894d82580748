"""The user-turn header gives the speaker's local time, its offset and zone name; the zone
never reaches the system prompt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from agent.prompt import header_time
from memory.schedule.timezones import set_timezone
from tests.helpers.agent_rig import Rig

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


@pytest.mark.parametrize("agent_env", [{"KIOKU_SCHEDULE__DEFAULT_TIMEZONE": "UTC"}])
async def test_a_reopened_session_shows_its_stored_turns_in_the_speakers_zone_now(
    rig: Rig,
) -> None:
    session = await rig.dm()
    rig.say("hi")
    await rig.agent.respond(rig.turn(session, "first"))
    system = rig.system_of(rig.api.last)
    await set_timezone(rig.store, "aiko", "Asia/Tokyo")
    rig.agent.forget(session.id)  # the live view is rebuilt from the store
    rig.say("ok")
    await rig.agent.respond(rig.turn(session, "second"))
    sent = rig.texts_of(rig.api.last)
    assert "[Wed 2026-12-02 18:30 +09:00 (Asia/Tokyo) · telegram]\nfirst" in sent
    assert "[Wed 2026-12-02 18:30 +09:00 (Asia/Tokyo) · telegram]\nsecond" in sent
    assert rig.system_of(rig.api.last) == system
