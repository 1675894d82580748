"""Each person's time zone: their own choice, or `schedule.default_timezone`, or the server's.

The zone decides how times are read and shown to the person (the turn header, their
reminders); it is stored as its IANA name on the person's row (NULL: the default).
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memory.schedule.timing import zone_name, zone_named

if TYPE_CHECKING:
    from memory.store.database import Store

LOCALTIME = Path("/etc/localtime")


class NoSuchPerson(LookupError):
    """A person state.db does not hold."""


async def timezone_of(store: Store, person: str) -> str | None:
    """The person's own zone, None when they follow the default (or do not exist)."""
    return await store.read(lambda db: timezone_in(db, person))


def timezone_in(db: sqlite3.Connection, person: str) -> str | None:
    """`timezone_of` on a plain connection, for a command that reads state.db directly."""
    row = db.execute("SELECT timezone FROM persons WHERE id = ?", (person,)).fetchone()
    return None if row is None else row["timezone"]


async def set_timezone(store: Store, person: str, zone: str | None) -> None:
    """Set `person`'s zone (checked: `BadSchedule` names examples), or clear it with None."""
    name = None if zone is None else zone_name(zone_named(zone))

    def op(db: sqlite3.Connection) -> int:
        cursor = db.execute("UPDATE persons SET timezone = ? WHERE id = ?", (name, person))
        return cursor.rowcount

    if not await store.write(op):
        raise NoSuchPerson(f"no person {person!r}; `kioku people list` shows them")


def effective_zone(own: str | None, default: str | None) -> tzinfo:
    """The zone a person's times are in: their own, else `default`, else the server's.

    The server's is its IANA zone when one can be found (`TZ`, the /etc/localtime link);
    otherwise the fixed offset the clock has now, which does not follow DST changes.
    """
    for name in (own, default):
        if name:
            return zone_named(name)
    return server_zone()


def server_zone() -> tzinfo:
    """The server's local zone (see `effective_zone`)."""
    for name in (os.environ.get("TZ", "").lstrip(":"), _linked_zone()):
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    local = datetime.now().astimezone().tzinfo
    assert local is not None
    return zone_named(zone_name(local))


def _linked_zone() -> str | None:
    """`Europe/Berlin` from /etc/localtime -> /usr/share/zoneinfo/Europe/Berlin."""
    try:
        target = os.readlink(LOCALTIME)
    except OSError:
        return None
    _, found, name = target.partition("zoneinfo/")
    return name if found else None
