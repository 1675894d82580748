"""How long history is kept: `history.keep_days` for everyone, a person's own choice
over it (`kioku history keep`, their web page), and the sweep that deletes what is older.

A person's choice covers their direct messages; a group's history follows the setting,
since no one person owns it. The sweep goes through `erase` like every other deletion
and never takes a session that is still open (its conversation is going on).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.access.identities import has_person
from memory.history.erase import UnknownHistory, erase, survey
from memory.history.selection import Asker, Selection
from memory.store.database import Store
from memory.store.records import to_epoch

FOREVER = 0
"""A person's keep_days that keeps everything, whatever `history.keep_days` says."""
BATCH = 200
"""Sessions per erase: a first sweep over years of history stays many short transactions."""


class UnknownPerson(LookupError):
    """A person state.db does not hold."""


@dataclass(frozen=True)
class Swept:
    """What one sweep removed (counts only: this is what gets logged)."""

    sessions: int
    turns: int


async def keep_days_of(store: Store, person: str) -> int | None:
    """The person's own choice (0 = forever), or None when they follow the setting."""

    def read(db: sqlite3.Connection) -> int | None:
        row = db.execute("SELECT keep_days FROM retention WHERE person_id = ?", (person,))
        found = row.fetchone()
        return None if found is None else int(found["keep_days"])

    return await store.read(read)


async def set_keep_days(store: Store, person: str, days: int | None) -> None:
    """Keep `person`'s DMs `days` days (0 = forever); None goes back to the setting."""
    if days is not None and days < 0:
        raise ValueError(f"keep days must be 0 (forever) or more, not {days}")

    def op(db: sqlite3.Connection) -> bool:
        if not has_person(db, person):
            return False
        if days is None:
            db.execute("DELETE FROM retention WHERE person_id = ?", (person,))
        else:
            db.execute(
                "INSERT INTO retention(person_id, keep_days) VALUES (?, ?) "
                "ON CONFLICT(person_id) DO UPDATE SET keep_days = excluded.keep_days",
                (person, days),
            )
        return True

    if not await store.write(op):
        raise UnknownPerson(f"no person {person!r}; `kioku people list` shows them")


def effective_keep_days(own: int | None, default: int | None) -> int | None:
    """Days a person's DMs are kept, None for forever."""
    if own is None:
        return default
    return None if own == FOREVER else own


async def due(store: Store, default: int | None, now: datetime) -> list[int]:
    """Closed sessions older than their keep days, oldest first."""

    def read(db: sqlite3.Connection) -> list[int]:
        overrides = dict(db.execute("SELECT person_id, keep_days FROM retention").fetchall())
        found: list[int] = []
        if default is not None:
            cutoff = to_epoch(now - timedelta(days=default))
            found += _ids(
                db,
                "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ? "
                "AND (kind = 'group' OR person_id NOT IN (SELECT person_id FROM retention))",
                cutoff,
            )
        for person, own in overrides.items():
            days = effective_keep_days(int(own), default)
            if days is not None:
                found += _ids(
                    db,
                    "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ? "
                    "AND kind = 'dm' AND person_id = ?",
                    to_epoch(now - timedelta(days=days)),
                    person,
                )
        return sorted(found)

    return await store.read(read)


async def sweep(store: Store, default: int | None, now: datetime) -> Swept:
    """Delete every session `due` says is too old, `BATCH` at a time.

    A session deleted meanwhile by someone else (the CLI, the web page) is simply no
    longer due: the batch is looked up again.
    """
    sessions = turns = 0
    while batch := (await due(store, default, now))[:BATCH]:
        try:
            plan = await survey(store, Asker.owner(), Selection(sessions=tuple(batch)))
        except UnknownHistory:
            continue
        erased = await erase(store, plan)
        sessions += erased.sessions
        turns += erased.turns
        if erased.sessions == 0:
            break
    return Swept(sessions, turns)


def _ids(db: sqlite3.Connection, sql: str, *params: object) -> list[int]:
    return [row["id"] for row in db.execute(sql, params)]
