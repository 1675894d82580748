"""Each person's own time zone, and the zone their times are shown in."""

from __future__ import annotations

import time
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest

from memory.access.identities import ensure_person
from memory.schedule import timezones
from memory.schedule.timezones import (
    NoSuchPerson,
    effective_zone,
    set_timezone,
    timezone_of,
)
from memory.schedule.timing import BadSchedule
from memory.store.database import Store


async def test_a_person_sets_and_clears_their_zone(store: Store) -> None:
    await ensure_person(store, "alice")
    assert await timezone_of(store, "alice") is None
    await set_timezone(store, "alice", "Asia/Tokyo")
    assert await timezone_of(store, "alice") == "Asia/Tokyo"
    await set_timezone(store, "alice", None)
    assert await timezone_of(store, "alice") is None


async def test_an_unknown_zone_is_refused_and_nothing_changes(store: Store) -> None:
    await ensure_person(store, "alice")
    await set_timezone(store, "alice", "Europe/Berlin")
    with pytest.raises(BadSchedule, match="not a time zone"):
        await set_timezone(store, "alice", "Europe/Atlantis")
    assert await timezone_of(store, "alice") == "Europe/Berlin"


async def test_a_missing_person_is_a_lookup_error(store: Store) -> None:
    with pytest.raises(NoSuchPerson, match="kioku people list"):
        await set_timezone(store, "nobody", "Asia/Tokyo")


def test_own_zone_wins_over_the_default() -> None:
    assert effective_zone("Asia/Tokyo", "Europe/Berlin") == ZoneInfo("Asia/Tokyo")
    assert effective_zone(None, "Europe/Berlin") == ZoneInfo("Europe/Berlin")


def test_without_either_the_servers_iana_zone_from_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    assert effective_zone(None, None) == ZoneInfo("America/New_York")


def test_a_server_without_an_iana_name_gets_its_fixed_offset(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    with monkeypatch.context() as patched:
        patched.setenv("TZ", "XYZ-3")  # POSIX for "three hours east of UTC", no IANA name
        patched.setattr(timezones, "LOCALTIME", tmp_path / "no-localtime")
        time.tzset()
        zone = effective_zone(None, None)
    time.tzset()
    assert zone.utcoffset(None) == timedelta(hours=3)
