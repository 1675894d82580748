"""The sessions table: starting, finding, ending and totting up a conversation's sessions.

A session is one stretch of a conversation, from its first turn to idle, `/new` or
shutdown; its row carries the title, summary and token totals search and `/usage`
show. Every function takes the connection it works on: those that change a session
run inside `store.write(op)`, the lookups on a plain read connection from `store.read`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from memory.store.errors import UnknownSession
from memory.store.records import Activity, Conversation, Session, Usage, from_epoch

COLUMNS = (
    "id, external_id, conversation, platform, chat, thread, kind, person_id, title, summary, "
    "started_at, ended_at, end_reason, input_tokens, output_tokens, cache_read_tokens, "
    "cache_write_tokens"
)


def open_session(db: sqlite3.Connection, conversation: Conversation) -> Session:
    """The open session of `conversation`, or a new one started now."""
    row = db.execute(
        f"SELECT {COLUMNS} FROM sessions WHERE conversation = ? AND ended_at IS NULL",
        (conversation.key,),
    ).fetchone()
    if row is not None:
        return session_from_row(row)
    if conversation.person and not _person_exists(db, conversation.person):
        raise LookupError(f"no person {conversation.person!r}; create it first")
    started = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(started))
    external_id = f"{stamp}-{os.urandom(4).hex()}"
    return insert_session(db, external_id, conversation, started, None, None)


def insert_session(
    db: sqlite3.Connection,
    external_id: str,
    conversation: Conversation,
    started: float,
    ended: float | None,
    end_reason: str | None,
) -> Session:
    """Add a session row (its scope created if new); imports pass a past one's times."""
    db.execute("INSERT OR IGNORE INTO scopes(name) VALUES (?)", (conversation.scope,))
    scope = db.execute("SELECT id FROM scopes WHERE name = ?", (conversation.scope,)).fetchone()
    assert scope is not None
    scope_id = int(scope["id"])
    row = db.execute(
        "INSERT INTO sessions(external_id, conversation, platform, chat, thread, kind, person_id, "
        "scope_id, started_at, ended_at, end_reason) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
        f"RETURNING {COLUMNS}",
        (
            external_id,
            conversation.key,
            conversation.platform,
            conversation.chat,
            conversation.thread,
            conversation.kind,
            conversation.person,
            scope_id,
            started,
            ended,
            end_reason,
        ),
    ).fetchone()
    assert row is not None
    return session_from_row(row)


def close_session(
    db: sqlite3.Connection,
    session_id: int,
    reason: str,
    title: str | None,
    summary: str | None,
) -> None:
    """End the session now, keeping a first end and filling in the title and summary given."""
    cursor = db.execute(
        "UPDATE sessions SET ended_at = coalesce(ended_at, ?), "
        "end_reason = coalesce(end_reason, ?), title = coalesce(?, title), "
        "summary = coalesce(?, summary) WHERE id = ?",
        (time.time(), reason, title, summary, session_id),
    )
    if cursor.rowcount == 0:
        raise UnknownSession(f"no session {session_id}")


def finish_open_session(
    db: sqlite3.Connection,
    session_id: int,
    external_id: str,
    reason: str,
    title: str | None,
    summary: str | None,
) -> bool:
    """End the session with the title and summary given only if it is still the open
    session `external_id`: one deleted, or ended by a deletion, meanwhile stays as it is
    (the agent's live copy may still hold the deleted turns). False if it was not open."""
    cursor = db.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ?, title = coalesce(?, title), "
        "summary = coalesce(?, summary) WHERE id = ? AND external_id = ? AND ended_at IS NULL",
        (time.time(), reason, title, summary, session_id, external_id),
    )
    return cursor.rowcount > 0


def set_open_summary(
    db: sqlite3.Connection, session_id: int, external_id: str, summary: str
) -> bool:
    """Replace the summary of a session still open as `external_id` (compaction); False,
    and nothing written, once it was deleted or ended."""
    cursor = db.execute(
        "UPDATE sessions SET summary = ? WHERE id = ? AND external_id = ? AND ended_at IS NULL",
        (summary, session_id, external_id),
    )
    return cursor.rowcount > 0


def session_where(db: sqlite3.Connection, where: str, value: object) -> Session | None:
    """The one session matching `where` (a unique column, e.g. `id = ?`), if any."""
    row = db.execute(f"SELECT {COLUMNS} FROM sessions WHERE {where}", (value,)).fetchone()
    return None if row is None else session_from_row(row)


def recent_sessions(db: sqlite3.Connection, person: str, limit: int) -> list[Session]:
    """Sessions `person` took part in (DMs and groups, every platform), newest first."""
    rows = db.execute(
        f"SELECT {COLUMNS} FROM sessions WHERE id IN ("
        "SELECT id FROM sessions WHERE person_id = ? UNION "
        "SELECT session_id FROM participants WHERE person_id = ?) "
        "ORDER BY started_at DESC, id DESC LIMIT ?",
        (person, person, limit),
    )
    return [session_from_row(row) for row in rows]


def activity(db: sqlite3.Connection, session_id: int) -> Activity:
    """How many messages the person sent in the session, and when the last turn was."""
    row = db.execute(
        "SELECT count(*) FILTER (WHERE role = 'user') AS sent, max(ts) AS last FROM messages "
        "WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    last = row["last"]
    return Activity(row["sent"], None if last is None else from_epoch(last))


def _person_exists(db: sqlite3.Connection, person: str) -> bool:
    """Checked before a DM's session is started, so a missing person is a clear error."""
    return db.execute("SELECT 1 FROM persons WHERE id = ?", (person,)).fetchone() is not None


def session_from_row(row: Any) -> Session:
    """A `Session` from a row selected as `COLUMNS`."""
    return Session(
        id=row["id"],
        external_id=row["external_id"],
        conversation=row["conversation"],
        platform=row["platform"],
        chat=row["chat"],
        thread=row["thread"],
        kind=row["kind"],
        person=row["person_id"],
        title=row["title"],
        summary=row["summary"],
        started_at=from_epoch(row["started_at"]),
        ended_at=None if row["ended_at"] is None else from_epoch(row["ended_at"]),
        end_reason=row["end_reason"],
        usage=Usage(
            row["input_tokens"],
            row["output_tokens"],
            row["cache_read_tokens"],
            row["cache_write_tokens"],
        ),
    )
