"""History in and out of state.db: kioku's jsonl (import and export) and a Hermes Agent home.

The jsonl format is one message a line:
`{"person", "platform", "chat", "session", "role", "content", "ts"}`, optionally
`"speaker_name"` and, for tool turns, `"tool_name"`, `"tool_arguments"`, `"tool_result"`.
A session keeps its `session` value as external id and is a DM of its person.

Importing is idempotent: a session is known by its external id and a turn by
(role, time, content), so the same file twice, or an export of this store, adds
nothing. Every line is checked before anything is written: a line longer than
`MAX_LINE_BYTES`, not UTF-8 text, nesting deeper than `inputs.limits.MAX_JSON_DEPTH`
or not a valid row is refused with its number.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inputs.limits import InputRefused, loads
from inputs.text import ESCAPED_SURROGATE, lone_surrogate, shown, text_lines
from memory.access.identities import ensure_persons, get_person
from memory.access.people import InvalidPersonId, validate_person_id
from memory.store.database import Store
from memory.store.records import (
    ROLES,
    Conversation,
    ImportCounts,
    NewMessage,
    PastSession,
    Session,
    iso,
    to_epoch,
)
from memory.store.sessions import insert_session, session_where
from memory.store.writer import Append, insert_messages, prepared

CHUNK_MESSAGES = 2000
MAX_LINE_BYTES = 8 * 1_048_576
"""One message a line: far above any turn kioku stores, and the most memory a line may take."""
REQUIRED_ORDER = ("person", "platform", "chat", "session", "role", "content", "ts")
REQUIRED = frozenset(REQUIRED_ORDER)
TS_EXAMPLE = "an ISO 8601 time like 2026-05-01T12:00:00Z"
Progress = Callable[[int], None]


@dataclass(frozen=True)
class Problem:
    """A refused line (0 when the session came from no file line), and the `session` it
    refused when it refused one."""

    line: int
    reason: str
    session: str | None = None

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


@dataclass
class Parsed:
    """What a file holds: sessions to store, persons to create, and lines that were refused."""

    sessions: list[PastSession] = field(default_factory=list)
    persons: dict[str, str | None] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    first_line: dict[str, int] = field(default_factory=dict)

    @property
    def messages(self) -> int:
        return sum(len(s.messages) for s in self.sessions)

    def drop_refused(self) -> None:
        """Leave out the sessions a problem refused (`--skip-invalid`); invalid lines never
        made it into a session."""
        refused = {problem.session for problem in self.problems}
        self.sessions[:] = [s for s in self.sessions if s.external_id not in refused]


def parse_jsonl(path: Path) -> Parsed:
    """Read a jsonl history file; bad lines become `problems` with their numbers.

    Raises `InputRefused` for a file that is empty (or blank) or UTF-16, and `OSError`
    when it cannot be read.
    """
    parsed = Parsed()
    owners: dict[str, tuple[str, str, str]] = {}
    messages: dict[str, list[NewMessage]] = {}
    empty = True
    for line in text_lines(path, MAX_LINE_BYTES):
        number = line.number
        if line.refused is None and not line.text.strip():
            continue
        empty = False
        try:
            if line.refused is not None:
                raise ValueError(line.refused)
            row = _jsonl_row(line.text)
        except ValueError as exc:
            parsed.problems.append(Problem(number, str(exc)))
            continue
        where = (row["person"], row["platform"], row["chat"])
        known = owners.setdefault(row["session"], where)
        if known != where:
            parsed.problems.append(
                Problem(
                    number,
                    f"session {row['session']!r} was person/platform/chat {known} on line "
                    f"{parsed.first_line[row['session']]}, here {where}",
                )
            )
            continue
        parsed.first_line.setdefault(row["session"], number)
        if row["role"] == "user" and row.get("speaker_name"):
            parsed.persons[row["person"]] = row["speaker_name"]
        parsed.persons.setdefault(row["person"], None)
        messages.setdefault(row["session"], []).append(row["message"])
    if empty:
        raise InputRefused(f"{path} is empty (no line holds a message): nothing to import")
    for external_id, (person, platform, chat) in owners.items():
        if external_id in messages:
            conversation = Conversation(platform, chat, "dm", person)
            parsed.sessions.append(PastSession(external_id, conversation, messages[external_id]))
    return parsed


def _jsonl_row(line: str) -> dict[str, Any]:
    try:
        raw = loads(line, what="the JSON")
    except json.JSONDecodeError as exc:
        cut = " - was the file cut short?" if exc.pos >= len(line.rstrip()) else ""
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno}){cut}") from None
    if not isinstance(raw, dict):
        raise ValueError("expected a JSON object")
    if not raw.keys() >= REQUIRED:
        missing = [k for k in REQUIRED_ORDER if k not in raw]
        raise ValueError(f"missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    try:
        person = validate_person_id(raw["person"])
    except InvalidPersonId as exc:
        raise ValueError(str(exc)) from None
    text_fields = {k: raw[k] for k in ("platform", "chat", "session")}
    for key, value in text_fields.items():
        if isinstance(value, int) and not isinstance(value, bool):
            text_fields[key] = str(value)
        elif not isinstance(value, str) or not value:
            raise ValueError(f"{key} must be a non-empty string")
    if raw["role"] not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {shown(raw['role'])}")
    if not isinstance(raw["content"], str):
        raise ValueError("content must be a string")
    optional = {
        k: raw.get(k) for k in ("speaker_name", "tool_name", "tool_arguments", "tool_result")
    }
    for key, value in optional.items():
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{key} must be a string")
    if ESCAPED_SURROGATE.search(line):  # the only way a decoded line holds a surrogate
        for key, value in {"content": raw["content"], **text_fields, **optional}.items():
            surrogate = lone_surrogate(value) if value else None
            if surrogate is not None:
                raise ValueError(f"{key} holds a lone surrogate ({surrogate}), which is not text")
    message = NewMessage(
        role=raw["role"],
        content=raw["content"],
        speaker=person if raw["role"] == "user" else None,
        ts=parse_ts(raw["ts"]),
        tool_name=optional["tool_name"],
        tool_arguments=optional["tool_arguments"],
        tool_result=optional["tool_result"],
    )
    return {
        "person": person,
        **text_fields,
        "role": raw["role"],
        "message": message,
        "speaker_name": optional["speaker_name"],
    }


def parse_ts(value: Any) -> datetime:
    """An ISO 8601 time (naive means UTC) or unix seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"ts {shown(value)} is out of range: use {TS_EXAMPLE}") from None
    if not isinstance(value, str):
        raise ValueError(f"ts must be {TS_EXAMPLE}")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"ts {shown(value)} is not {TS_EXAMPLE}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


async def check_conflicts(store: Store, parsed: Parsed) -> None:
    """Refuse sessions whose external id already belongs to someone else's conversation."""
    ids = [past.external_id for past in parsed.sessions]
    stored = await store.read(lambda db: _sessions_by_external_id(db, ids))
    for past in parsed.sessions:
        existing = stored.get(past.external_id)
        if existing is None:
            continue
        person = past.conversation.person
        owned = (
            existing.person == person
            if existing.kind == "dm"
            else any(
                s.id == existing.id for s in await store.recent_sessions(person or "", limit=-1)
            )
        )
        if not owned:
            line = parsed.first_line.get(past.external_id, 0)
            parsed.problems.append(
                Problem(
                    line,
                    f"session {past.external_id!r} already exists for another person",
                    past.external_id,
                )
            )


def _sessions_by_external_id(db: sqlite3.Connection, ids: list[str]) -> dict[str, Session]:
    """The stored sessions among `ids`, looked up in one read (one round trip, not one each)."""
    found = {}
    for external_id in ids:
        session = session_where(db, "external_id = ?", external_id)
        if session is not None:
            found[external_id] = session
    return found


async def store_parsed(
    store: Store, parsed: Parsed, progress: Progress | None = None
) -> ImportCounts:
    """Create the persons, then add the sessions in transactions of about CHUNK_MESSAGES turns."""
    await ensure_persons(store, parsed.persons)
    counts = ImportCounts()
    for chunk in _chunks(parsed.sessions):
        counts += await store.write(_import_op(chunk))
        if progress is not None:
            progress(sum(len(s.messages) for s in chunk))
    return counts


def _chunks(sessions: Iterable[PastSession]) -> Iterable[list[PastSession]]:
    chunk: list[PastSession] = []
    size = 0
    for past in sessions:
        chunk.append(past)
        size += len(past.messages)
        if size >= CHUNK_MESSAGES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


TurnKey = tuple[str, float | None, str]
"""What makes a turn the same turn again: role, time (to the microsecond) and content."""


def _import_op(chunk: list[PastSession]) -> Callable[[sqlite3.Connection], Any]:
    """One transaction for `chunk`: its sessions, then all its new turns in one insert (FTS5
    writes an index segment per statement: one per session made the index merge hundreds)."""

    def op(db: sqlite3.Connection) -> ImportCounts:
        counts = ImportCounts()
        known: dict[int, set[TurnKey]] = {}
        fresh: list[Append] = []
        for past in chunk:
            added, session_id = _session_id(db, past)
            if session_id not in known:
                known[session_id] = set() if added else _stored_keys(db, session_id)
            new = _new_turns(past, session_id, known[session_id])
            fresh += new
            counts += ImportCounts(added, len(new), len(past.messages) - len(new))
        if fresh:
            insert_messages(db, fresh)
        return counts

    return op


def _session_id(db: sqlite3.Connection, past: PastSession) -> tuple[int, int]:
    """(1 if the session was added now else 0, its id)."""
    rows = db.execute(
        "SELECT id FROM sessions WHERE external_id = ?", (past.external_id,)
    ).fetchall()
    if rows:
        return 0, int(next(iter(rows))["id"])
    stamps = [to_epoch(m.ts) for m in past.messages if m.ts is not None]
    started = to_epoch(past.started_at) if past.started_at else min(stamps, default=time.time())
    ended = to_epoch(past.ended_at) if past.ended_at else max(stamps, default=started)
    session = insert_session(
        db, past.external_id, past.conversation, started, ended, past.end_reason
    )
    u = past.usage
    db.execute(
        "UPDATE sessions SET title = ?, summary = ?, input_tokens = ?, output_tokens = ?, "
        "cache_read_tokens = ?, cache_write_tokens = ? WHERE id = ?",
        (
            past.title,
            past.summary,
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            session.id,
        ),
    )
    return 1, session.id


def _stored_keys(db: sqlite3.Connection, session_id: int) -> set[TurnKey]:
    return {
        (r["role"], round(r["ts"], 6), r["content"])
        for r in db.execute(
            "SELECT role, ts, content FROM messages WHERE session_id = ?", (session_id,)
        ).fetchall()
    }


def _new_turns(past: PastSession, session_id: int, present: set[TurnKey]) -> list[Append]:
    """The turns of `past` not in `present`, ready to insert; `present` gains them."""
    fresh = []
    for message in past.messages:
        key = (
            message.role,
            round(to_epoch(message.ts), 6) if message.ts else None,
            message.content,
        )
        if key not in present:
            present.add(key)
            fresh.append(prepared(session_id, message))
    return fresh


async def export_jsonl(store: Store, person: str) -> AsyncIterator[str]:
    """Every session `person` took part in, as jsonl lines (oldest session first)."""
    named = await get_person(store, person)
    name = named.display_name if named else None
    sessions = sorted(await store.recent_sessions(person, limit=-1), key=lambda s: s.started_at)
    for session in sessions:
        for message in await store.messages(session.id):
            row: dict[str, Any] = {
                "person": person,
                "platform": session.platform,
                "chat": session.chat,
                "session": session.external_id,
                "role": message.role,
                "content": message.content,
                "ts": iso(message.ts),
            }
            if name and message.speaker == person:
                row["speaker_name"] = name
            for key in ("tool_name", "tool_arguments", "tool_result"):
                if getattr(message, key) is not None:
                    row[key] = getattr(message, key)
            yield json.dumps(row, ensure_ascii=False)
