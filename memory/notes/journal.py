"""The journal of every change to a person's notes, in state.db (issue 39).

An event is one write cycle of `PersonNotes` (one tool call or batch, one `/remember`,
one edit, one whole tidy, one revert): when, who or what made it (`NoteOrigin`), the
session it came from, and a row per entry added, replaced or removed with the text
before and after. `note_files` holds each file as the journal last knew it.

Nothing is lost when the file and the journal disagree. The file is the record: it is
written first, and its event is inserted afterwards under the same file lock. If the
insert fails (a full disk, a crash in between), the file holds the change and
`note_files` the state before it; the next time the file is compared with the journal
(at a session's start, and before any write is journaled) the difference is journaled
as a `hand edit`, with its text before and after. An event is never inserted for a
write that failed, so the journal never holds a change the file does not.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from memory.notes.changes import Entries, EntryChange, changes_between
from memory.notes.format import Target, parse_entries, serialise_entries
from memory.notes.origin import NoteOrigin, NoteSource
from memory.store.database import Store


@dataclass(frozen=True)
class JournalEvent:
    """One write: `reverts` is the event a revert undid."""

    id: int
    person: str
    at: datetime
    source: NoteSource
    session_id: int | None
    reverts: int | None
    changes: tuple[EntryChange, ...]


@dataclass(frozen=True)
class Written:
    """When and by what an entry's current text was written."""

    event_id: int
    at: datetime
    source: NoteSource
    session_id: int | None


@dataclass(frozen=True)
class SeenFile:
    """A notes file as read under its lock: its entries and when it was last modified."""

    entries: Entries
    modified: float


class NotesJournal:
    """The journal over `store`; `clock` gives the time of each event (seconds since the epoch)."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    async def differs(self, person: str, seen: Mapping[Target, SeenFile]) -> bool:
        """Whether a file holds entries the journal does not know (an edit made outside kioku)."""
        known = await self.store.read(lambda db: _known(db, person, tuple(seen)))
        return any(known[target] != file.entries for target, file in seen.items())

    async def reconcile(self, person: str, seen: Mapping[Target, SeenFile]) -> int | None:
        """Journal what changed in the files outside kioku as one `hand edit`; its id, if any.
        Call it holding the files' locks."""
        return await self.store.write(lambda db: _hand_edit(db, person, seen, self.clock()))

    async def record(
        self,
        person: str,
        seen: Mapping[Target, SeenFile],
        after: Mapping[Target, Entries],
        origin: NoteOrigin,
        reverts: int | None = None,
    ) -> int | None:
        """Journal a write from the files as `seen` to `after` (a hand edit found first is its
        own event); the write's event id, None if it changed nothing. Call it holding the
        files' locks, after the files were written."""

        def op(db: sqlite3.Connection) -> int | None:
            now = self.clock()
            _hand_edit(db, person, seen, now)
            before = {target: file.entries for target, file in seen.items()}
            event = _insert(db, person, now, origin, changes_between(before, after), reverts)
            _remember(db, person, after)
            return event

        return await self.store.write(op)

    async def events(
        self, person: str | None = None, target: Target | None = None, limit: int = 50
    ) -> list[JournalEvent]:
        """The newest events first, of one person or everyone's, touching `target` or either."""
        return await self.store.read(lambda db: _events(db, person, target, limit))

    async def event(self, event_id: int) -> JournalEvent | None:
        found = await self.store.read(lambda db: _events(db, None, None, 1, event_id))
        return found[0] if found else None

    async def reverted_by(self, event_id: int) -> int | None:
        """The revert that undid `event_id`, if one did."""
        row = await self.store.read(
            lambda db: db.execute(
                "SELECT max(id) FROM note_events WHERE reverts = ?", (event_id,)
            ).fetchone()
        )
        return None if row[0] is None else int(row[0])

    async def written(self, person: str, target: Target, entries: Entries) -> dict[str, Written]:
        """For each of `entries`, the latest event that wrote that text into `target`."""

        def read(db: sqlite3.Connection) -> dict[str, Written]:
            rows = db.execute(
                "SELECT c.after, e.id, e.at, e.source, e.session_id "
                "FROM note_events AS e JOIN note_changes AS c ON c.event_id = e.id "
                "WHERE e.person_id = ? AND c.target = ? "
                "AND c.after IN (SELECT value FROM json_each(?)) ORDER BY e.id, c.seq",
                (person, target, json.dumps(list(entries))),
            ).fetchall()
            return {str(row[0]): Written(row[1], _time(row[2]), row[3], row[4]) for row in rows}

        return await self.store.read(read)


def _known(
    db: sqlite3.Connection, person: str, targets: tuple[Target, ...]
) -> dict[Target, Entries]:
    """Each file as the journal last knew it (no row: an empty file)."""
    rows = dict(
        db.execute("SELECT target, text FROM note_files WHERE person_id = ?", (person,)).fetchall()
    )
    return {target: tuple(parse_entries(rows.get(target, ""))) for target in targets}


def _hand_edit(
    db: sqlite3.Connection, person: str, seen: Mapping[Target, SeenFile], now: float
) -> int | None:
    """Journal the files' difference from what the journal knew as a `hand edit`, dated when
    the file was last modified (not before the journal's last event, not after now)."""
    known = _known(db, person, tuple(seen))
    entries = {target: file.entries for target, file in seen.items()}
    changes = changes_between(known, entries)
    if not changes:
        return None
    touched = {change.target for change in changes}
    last = db.execute(
        "SELECT coalesce(max(at), 0) FROM note_events WHERE person_id = ?", (person,)
    ).fetchone()[0]
    modified = max(seen[target].modified for target in touched)
    at = min(now, max(modified, last))
    event = _insert(db, person, at, NoteOrigin("hand edit"), changes, None)
    _remember(db, person, entries)
    return event


def _insert(
    db: sqlite3.Connection,
    person: str,
    at: float,
    origin: NoteOrigin,
    changes: tuple[EntryChange, ...],
    reverts: int | None,
) -> int | None:
    if not changes:
        return None
    cursor = db.execute(
        "INSERT INTO note_events(person_id, at, source, session_id, reverts) "
        "VALUES (?, ?, ?, (SELECT id FROM sessions WHERE id = ?), ?)",
        (person, at, origin.source, origin.session_id, reverts),
    )
    event = int(cursor.lastrowid or 0)
    db.executemany(
        "INSERT INTO note_changes(event_id, seq, target, action, position, before, after) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (event, seq, c.target, c.action, c.position, c.before, c.after)
            for seq, c in enumerate(changes)
        ],
    )
    return event


def _remember(db: sqlite3.Connection, person: str, files: Mapping[Target, Entries]) -> None:
    db.executemany(
        "INSERT INTO note_files(person_id, target, text) VALUES (?, ?, ?) "
        "ON CONFLICT(person_id, target) DO UPDATE SET text = excluded.text",
        [(person, target, serialise_entries(entries)) for target, entries in files.items()],
    )


def _events(
    db: sqlite3.Connection,
    person: str | None,
    target: Target | None,
    limit: int,
    event_id: int | None = None,
) -> list[JournalEvent]:
    rows = db.execute(
        "SELECT id, person_id, at, source, session_id, reverts FROM note_events AS e "
        "WHERE (:person IS NULL OR person_id = :person) AND (:id IS NULL OR id = :id) "
        "AND (:target IS NULL OR EXISTS (SELECT 1 FROM note_changes "
        "WHERE event_id = e.id AND target = :target)) ORDER BY id DESC LIMIT :limit",
        {"person": person, "target": target, "limit": limit, "id": event_id},
    ).fetchall()
    changes: dict[int, list[EntryChange]] = {row[0]: [] for row in rows}
    if rows:
        for row in db.execute(
            "SELECT event_id, target, action, position, before, after FROM note_changes "
            "WHERE event_id IN (SELECT value FROM json_each(?)) ORDER BY event_id, seq",
            (json.dumps(list(changes)),),
        ):
            changes[row[0]].append(EntryChange(row[1], row[2], row[3], row[4], row[5]))
    return [
        JournalEvent(row[0], row[1], _time(row[2]), row[3], row[4], row[5], tuple(changes[row[0]]))
        for row in rows
    ]


def _time(at: float) -> datetime:
    return datetime.fromtimestamp(at, UTC)
