"""The sessions people choose from before deleting: `kioku history list`, the web page,
`/history` in chat. Each row carries what identifies a session to a person (its name,
id, platform, dates, title) and how much it holds."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.store.database import Store
from memory.store.records import Kind, from_epoch

LISTED = 200


class NoSuchSession(LookupError):
    """A session named by id or name that state.db does not hold."""


@dataclass(frozen=True)
class Listed:
    """One session as listed."""

    id: int
    name: str
    platform: str
    kind: Kind
    person: str | None
    title: str | None
    started_at: datetime
    ended_at: datetime | None
    turns: int

    @property
    def is_open(self) -> bool:
        return self.ended_at is None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "platform": self.platform,
            "kind": self.kind,
            "person": self.person,
            "title": self.title,
            "started_at": self.started_at.isoformat(),
            "ended_at": None if self.ended_at is None else self.ended_at.isoformat(),
            "turns": self.turns,
        }


COLUMNS = (
    "s.id, s.external_id AS name, s.platform, s.kind, s.person_id AS person, s.title, "
    "s.started_at, s.ended_at, (SELECT count(*) FROM turns WHERE session_id = s.id) AS turns"
)
"""What `listed` reads, of `sessions AS s`."""


async def list_sessions(
    store: Store, person: str | None = None, *, dms_only: bool = False, limit: int = LISTED
) -> list[Listed]:
    """Newest first: every session (`person` None, the owner's view), or those `person`
    took part in — their DMs and the groups they spoke in (`dms_only`: their DMs alone,
    the history a person may delete themselves)."""

    def read(db: sqlite3.Connection) -> list[Listed]:
        if person is None:
            where, params = "1", ()
        elif dms_only:
            where, params = "s.kind = 'dm' AND s.person_id = ?", (person,)
        else:
            where = (
                "s.id IN (SELECT id FROM sessions WHERE person_id = ? "
                "UNION SELECT session_id FROM participants WHERE person_id = ?)"
            )
            params = (person, person)
        rows = db.execute(
            f"SELECT {COLUMNS} FROM sessions AS s WHERE {where} "
            "ORDER BY s.started_at DESC, s.id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [listed(row) for row in rows]

    return await store.read(read)


async def find_session(store: Store, ref: str) -> Listed:
    """The session `ref` names: its id (digits) or its name (`kioku history list` shows both)."""
    ref = ref.strip()

    def read(db: sqlite3.Connection) -> Listed | None:
        row = None
        if ref.isascii() and ref.isdigit() and len(ref) <= 18:
            row = db.execute(f"SELECT {COLUMNS} FROM sessions AS s WHERE s.id = ?", (int(ref),))
            row = row.fetchone()
        if row is None:
            row = db.execute(
                f"SELECT {COLUMNS} FROM sessions AS s WHERE s.external_id = ?", (ref,)
            ).fetchone()
        return None if row is None else listed(row)

    found = await store.read(read)
    if found is None:
        raise NoSuchSession(
            f"no session {ref!r}: give a session's id or name as `kioku history list` shows them"
        )
    return found


async def last_dm_session(store: Store, person: str) -> Listed | None:
    """The person's newest DM session, open or not: what `/history forget` takes."""
    found = await list_sessions(store, person, dms_only=True, limit=1)
    return found[0] if found else None


def listed(row: sqlite3.Row) -> Listed:
    """A `Listed` from a row selected as `COLUMNS`."""
    return Listed(
        id=row["id"],
        name=row["name"],
        platform=row["platform"],
        kind=row["kind"],
        person=row["person"],
        title=row["title"],
        started_at=from_epoch(row["started_at"]),
        ended_at=None if row["ended_at"] is None else from_epoch(row["ended_at"]),
        turns=int(row["turns"]),
    )
