"""The one way history leaves state.db: `survey` says what a selection takes, `erase`
takes exactly that and makes it unreadable.

Every path (the CLI, the web page, /undo and /history in chat, the model's
`history_delete` tool, the retention sweep) surveys first, shows or logs the plan,
then erases it. Between the two the plan is fixed: `erase` removes the sessions and
turns listed, re-checked inside its transaction against the asker's rights and
against ids SQLite may have given to newer rows, and nothing newer.

The files kept with the turns that go (`memory.media`) go too: their rows in the same
transaction, the files themselves after it commits.

A session that keeps some turns loses its title and summary, which may quote what
went (a compaction summary is stored as the session's summary). An open session that
loses turns is ended, so the daemon starts the conversation afresh instead of going
on from a copy that still holds them; `keep_open` is for the daemon's /undo, which
removes the same turns from its live copy itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

import aiosqlite

from memory.history.erase_rows import Deleted, delete_planned
from memory.history.listing import COLUMNS, listed
from memory.history.plan import DoomedSession, DoomedTurn, Plan
from memory.history.scrub import scrubbing
from memory.history.selection import Asker, NotAllowed, Selection
from memory.media.removal import remove_media_files
from memory.store.database import Store
from memory.store.records import ROLES, from_epoch, to_epoch
from memory.store.scalar import scalar_now

PREVIEW_CHARS = 80


class UnknownHistory(LookupError):
    """A session or message id that state.db does not hold."""


@dataclass(frozen=True)
class Erased:
    """What `erase` removed (counts only: this is what gets logged); `files` are the kept
    media files that went with the turns."""

    sessions: int
    turns: int
    ended: tuple[int, ...]
    wal_truncated: bool
    files: int = 0


async def survey(store: Store, asker: Asker, selection: Selection) -> Plan:
    """What erasing `selection` for `asker` would take; nothing is changed.

    Raises `NotAllowed` for a session or message outside the asker's history, and
    `UnknownHistory` for an id state.db does not hold.
    """
    return await store.read(lambda db: _survey(db, asker, selection))


async def erase(store: Store, plan: Plan, *, keep_open: bool = False) -> Erased:
    """Delete what `plan` lists (and only what is still as listed), then scrub it away."""

    async def op(db: aiosqlite.Connection) -> Deleted:
        async with scrubbing(db):
            return await delete_planned(db, plan, keep_open=keep_open)

    sessions, turns, ended, media = await store.write(op)
    truncated = await store.truncate_wal()
    await remove_media_files(store.home, media)
    return Erased(sessions, turns, ended, truncated, files=len(media))


# -- survey -------------------------------------------------------------------------------

_SESSION = (
    f"{COLUMNS}, (SELECT coalesce(max(id), 0) FROM turns WHERE session_id = s.id) AS last_turn"
)


def _survey(db: sqlite3.Connection, asker: Asker, selection: Selection) -> Plan:
    narrow = selection.person if asker.is_owner else asker.person
    whole: set[int] = set()
    turns: dict[int, int] = {}
    for session_id in selection.sessions:
        row = _one(db, f"SELECT {_SESSION} FROM sessions AS s WHERE id = ?", session_id)
        if row is None:
            raise UnknownHistory(f"no session {session_id}; `kioku history list` shows them")
        _check_session(asker, narrow, row)
        if row["kind"] == "group" and narrow is not None:
            turns |= _pairs(
                db,
                "SELECT id, session_id FROM turns WHERE session_id = ? AND speaker_id = ?",
                row["id"],
                narrow,
            )
        else:
            whole.add(row["id"])
    for turn_id in selection.messages:
        row = _one(
            db,
            "SELECT t.id, s.kind, s.person_id AS person, t.speaker_id AS speaker, "
            "s.external_id AS name, t.session_id FROM turns AS t "
            "JOIN sessions AS s ON s.id = t.session_id WHERE t.id = ?",
            turn_id,
        )
        if row is None:
            raise UnknownHistory(f"no message {turn_id}; `kioku history list` shows sessions")
        _check_turn(asker, narrow, row)
        turns[row["id"]] = row["session_id"]
    scope, params = _scope(asker, narrow)
    if selection.before is not None:
        turns |= _pairs(
            db,
            f"SELECT t.id, t.session_id FROM turns AS t JOIN sessions AS s "
            f"ON s.id = t.session_id WHERE t.ts < ? AND {scope}",
            to_epoch(selection.before),
            *params,
        )
    retitled: set[int] = set()
    if selection.matching is not None:
        pattern = _like(selection.matching)
        turns |= _pairs(
            db,
            "SELECT t.id, t.session_id FROM turns AS t JOIN sessions AS s ON s.id = t.session_id "
            "WHERE (t.content LIKE ?1 ESCAPE '\\' OR t.tool_arguments LIKE ?1 ESCAPE '\\' "
            f"OR t.tool_result LIKE ?1 ESCAPE '\\') AND {_numbered(scope, 2)}",
            pattern,
            *params,
        )
        session_scope, session_params = _session_scope(asker, narrow)
        retitled |= _ids(
            db,
            "SELECT s.id FROM sessions AS s WHERE (s.title LIKE ?1 ESCAPE '\\' "
            f"OR s.summary LIKE ?1 ESCAPE '\\') AND {_numbered(session_scope, 2)}",
            pattern,
            *session_params,
        )
    return _plan(db, asker, whole, turns, retitled)


def _plan(
    db: sqlite3.Connection,
    asker: Asker,
    whole: set[int],
    turns: dict[int, int],
    retitled: set[int],
) -> Plan:
    """Sessions losing every turn go whole; the others keep theirs and lose their title."""
    by_session: dict[int, list[int]] = {}
    for turn_id, session_id in turns.items():
        by_session.setdefault(session_id, []).append(turn_id)
    for session_id, ids in by_session.items():
        if session_id not in whole and len(ids) == _count_turns(db, session_id):
            whole.add(session_id)
    sessions = tuple(
        DoomedSession(**vars(listed(row)), last_turn=row["last_turn"])
        for row in _rows(db, f"SELECT {_SESSION} FROM sessions AS s WHERE id = ?", sorted(whole))
    )
    kept = sorted(t for sid, ids in by_session.items() if sid not in whole for t in ids)
    doomed_turns = tuple(
        DoomedTurn(
            id=row["id"],
            session_id=row["session_id"],
            session_name=row["name"],
            role=ROLES[row["role"]],
            speaker=row["speaker_id"],
            ts=from_epoch(row["ts"]),
            preview=_preview(row["content"]),
        )
        for row in _rows(
            db,
            "SELECT t.id, t.session_id, s.external_id AS name, t.role, t.speaker_id, t.ts, "
            "t.content FROM turns AS t JOIN sessions AS s ON s.id = t.session_id WHERE t.id = ?",
            kept,
        )
    )
    retitled |= {t.session_id for t in doomed_turns}
    return Plan(asker, sessions, doomed_turns, tuple(sorted(retitled - whole)))


def _check_session(asker: Asker, narrow: str | None, row: sqlite3.Row) -> None:
    name, kind, person = row["name"], row["kind"], row["person"]
    if kind == "dm" and narrow is not None and person != narrow:
        raise NotAllowed(f"session {name} holds the direct messages of {person}, not of {narrow}")
    if kind == "group" and not asker.is_owner:
        raise NotAllowed(
            f"session {name} is a group's history; only the owner deletes it "
            "(`kioku history delete` or the web page's admin view)"
        )


def _check_turn(asker: Asker, narrow: str | None, row: sqlite3.Row) -> None:
    turn_id, kind, person = row["id"], row["kind"], row["person"]
    speaker, name = row["speaker"], row["name"]
    if kind == "group" and not asker.is_owner:
        raise NotAllowed(
            f"message {turn_id} is in a group's history ({name}); only the owner deletes it"
        )
    if narrow is None:
        return
    mine = person == narrow if kind == "dm" else speaker == narrow
    if not mine:
        raise NotAllowed(f"message {turn_id} is not part of {narrow}'s history")


def _scope(asker: Asker, narrow: str | None) -> tuple[str, tuple[str, ...]]:
    """The turns (alias t, session s) an asker's before/matching may reach."""
    if narrow is None:
        return "1", ()
    if not asker.is_owner:
        return "s.kind = 'dm' AND s.person_id = ?", (narrow,)
    return (
        "((s.kind = 'dm' AND s.person_id = ?) OR (s.kind = 'group' AND t.speaker_id = ?))",
        (narrow, narrow),
    )


def _session_scope(asker: Asker, narrow: str | None) -> tuple[str, tuple[str, ...]]:
    """The sessions whose title and summary an asker's phrase may clear: their own DMs
    (a group's title is the group's, kept unless the owner asks)."""
    if narrow is None:
        return "1", ()
    return "s.kind = 'dm' AND s.person_id = ?", (narrow,)


def _numbered(clause: str, first: int) -> str:
    """`clause` with its `?` placeholders numbered from `first` (after a numbered ?1)."""
    parts = clause.split("?")
    return parts[0] + "".join(f"?{first + i}{part}" for i, part in enumerate(parts[1:]))


def _like(phrase: str) -> str:
    escaped = phrase.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def _count_turns(db: sqlite3.Connection, session_id: int) -> int:
    return scalar_now(db, "SELECT count(*) FROM turns WHERE session_id = ?", (session_id,))


def _one(db: sqlite3.Connection, sql: str, *params: object) -> sqlite3.Row | None:
    return db.execute(sql, params).fetchone()


def _ids(db: sqlite3.Connection, sql: str, *params: object) -> set[int]:
    """The `id`s `sql` selects."""
    return {int(row["id"]) for row in db.execute(sql, params)}


def _pairs(db: sqlite3.Connection, sql: str, *params: object) -> dict[int, int]:
    """Turn id → session id, from a query selecting the two (`id`, `session_id`)."""
    return {int(row["id"]): int(row["session_id"]) for row in db.execute(sql, params)}


def _rows(db: sqlite3.Connection, sql: str, keys: Iterable[int]) -> list[sqlite3.Row]:
    """`sql` (one `?` for a key) run for each key, the rows in key order."""
    return [row for key in keys for row in db.execute(sql, (key,))]
