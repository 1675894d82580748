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
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite

from inputs.limits import InputRefused, loads
from inputs.text import lone_surrogate, shown, text_lines
from memory.access.identities import ensure_person, get_person
from memory.access.people import InvalidPersonId, validate_person_id
from memory.store.database import Store
from memory.store.records import (
    ROLES,
    Conversation,
    ImportCounts,
    NewMessage,
    PastSession,
    iso,
    to_epoch,
)
from memory.store.sessions import insert_session
from memory.store.writer import insert_messages, prepared

CHUNK_MESSAGES = 2000
MAX_LINE_BYTES = 8 * 1_048_576
"""One message a line: far above any turn kioku stores, and the most memory a line may take."""
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
    missing = [
        k
        for k in ("person", "platform", "chat", "session", "role", "content", "ts")
        if k not in raw
    ]
    if missing:
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
    for past in parsed.sessions:
        existing = await store.session_by_external_id(past.external_id)
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


async def store_parsed(
    store: Store, parsed: Parsed, progress: Progress | None = None
) -> ImportCounts:
    """Create the persons, then add the sessions in transactions of about CHUNK_MESSAGES turns."""
    for person, name in parsed.persons.items():
        await ensure_person(store, person, name)
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


def _import_op(chunk: list[PastSession]) -> Callable[[aiosqlite.Connection], Any]:
    async def op(db: aiosqlite.Connection) -> ImportCounts:
        counts = ImportCounts()
        for past in chunk:
            counts += await _import_session(db, past)
        return counts

    return op


async def _import_session(db: aiosqlite.Connection, past: PastSession) -> ImportCounts:
    rows = await db.execute_fetchall(
        "SELECT id FROM sessions WHERE external_id = ?", (past.external_id,)
    )
    stamps = [to_epoch(m.ts) for m in past.messages if m.ts is not None]
    added = 0
    if rows:
        session_id = int(next(iter(rows))["id"])
    else:
        started = to_epoch(past.started_at) if past.started_at else min(stamps, default=time.time())
        ended = to_epoch(past.ended_at) if past.ended_at else max(stamps, default=started)
        session = await insert_session(
            db, past.external_id, past.conversation, started, ended, past.end_reason
        )
        session_id, added = session.id, 1
        u = past.usage
        await db.execute(
            "UPDATE sessions SET title = ?, summary = ?, input_tokens = ?, output_tokens = ?, "
            "cache_read_tokens = ?, cache_write_tokens = ? WHERE id = ?",
            (
                past.title,
                past.summary,
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens,
                session_id,
            ),
        )
    present = {
        (r["role"], round(r["ts"], 6), r["content"])
        for r in await db.execute_fetchall(
            "SELECT role, ts, content FROM messages WHERE session_id = ?", (session_id,)
        )
    }
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
    if fresh:
        await insert_messages(db, fresh)
    return ImportCounts(added, len(fresh), len(past.messages) - len(fresh))


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
