"""Read a Hermes Agent home folder: its `state.db` sessions and its memory notes.

Hermes (hermes_state.SessionDB, schema 22) keeps one `sessions` row per session
(id, source, chat_id, title, started/ended, token counters...) and `messages` rows
with role user/assistant/tool/system. An assistant turn's tool calls live in its
`tool_calls` JSON and each result in a following `tool` row; kioku stores one tool
row per call (name, arguments, result), so the two are paired by `tool_call_id`.
Rewound turns (`active = 0`) and system rows are left out. Older Hermes schemas
lack some columns; only the ones present are read.

Everything goes to one person: Hermes is a single-user agent. A session with a value
kioku cannot take (JSON nesting past `inputs.limits.MAX_JSON_DEPTH`, a time that is no
number, text that is not text) is refused as a `Problem` naming it, like a bad jsonl line.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from inputs.limits import loads
from inputs.text import lone_surrogate, shown
from memory.importers.jsonl import Problem
from memory.notes.files import NotesFileError, read_notes
from memory.notes.format import FILE_NAMES, Target
from memory.store.records import Conversation, NewMessage, PastSession, Usage, from_epoch

JSON_PREFIX = "\x00json:"
USAGE_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


class HermesError(ValueError):
    """The folder is not a Hermes home kioku can read; the message says what is missing."""


class _BadRow(ValueError):
    """A value in a row that kioku cannot take; the session holding it is refused."""


def read_hermes_sessions(home: Path, person: str) -> tuple[list[PastSession], list[Problem]]:
    """All sessions of the Hermes home `home` as finished sessions of `person`, and the
    sessions refused for a value kioku cannot take."""
    path = home / "state.db"
    if not path.is_file():
        raise HermesError(f"{home} has no state.db: give the Hermes home folder (e.g. ~/.hermes)")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise HermesError(f"cannot open {path}: {exc}") from None
    try:
        db.row_factory = sqlite3.Row
        session_cols = _columns(db, "sessions")
        message_cols = _columns(db, "messages")
        needed = {"id", "source", "started_at"}, {"session_id", "role", "content", "timestamp"}
        if not needed[0] <= session_cols or not needed[1] <= message_cols:
            raise HermesError(f"{path} does not look like a Hermes state.db (tables missing)")
        sessions = db.execute("SELECT * FROM sessions ORDER BY started_at, id").fetchall()
        active = " AND coalesce(active, 1) = 1" if "active" in message_cols else ""
        result, problems = [], []
        for row in sessions:
            messages = db.execute(
                f"SELECT * FROM messages WHERE session_id = ?{active} ORDER BY timestamp, id",
                (row["id"],),
            ).fetchall()
            try:
                result.append(_session(dict(row), [dict(m) for m in messages], person))
            except _BadRow as exc:
                reason = f"session {shown(row['id'])}: {exc}"
                problems.append(Problem(0, reason, f"hermes:{row['id']}"))
        return result, problems
    except sqlite3.Error as exc:
        raise HermesError(f"cannot read {path}: {exc}") from None
    finally:
        db.close()


def read_hermes_notes(home: Path) -> dict[Target, list[str]]:
    """Entries of `memories/MEMORY.md` and `memories/USER.md` (missing files: no entries);
    `HermesError` when one cannot be read as notes."""
    try:
        return {
            target: list(read_notes(home / "memories" / name).entries)
            for target, name in FILE_NAMES.items()
        }
    except NotesFileError as exc:
        raise HermesError(str(exc)) from None


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}


def _session(row: dict[str, Any], messages: list[dict[str, Any]], person: str) -> PastSession:
    platform = str(row["source"] or "hermes")
    chat = str(row.get("chat_id") or row.get("user_id") or platform)
    title = row.get("title")
    past = PastSession(
        external_id=f"hermes:{row['id']}",
        conversation=Conversation(platform, chat, "dm", person),
        messages=_messages(messages, person),
        title=None if title is None else str(title),
        started_at=_time(row["started_at"], "started_at"),
        ended_at=_time(row["ended_at"], "ended_at") if row.get("ended_at") else None,
        end_reason=str(row.get("end_reason") or "imported"),
        usage=Usage(*(_count(row, key) for key in USAGE_COLUMNS)),
    )
    texts = [platform, chat, past.title or "", past.end_reason]
    for message in past.messages:
        texts += [message.content, message.tool_name or "", message.tool_arguments or ""]
        texts.append(message.tool_result or "")
    surrogate = next(filter(None, map(lone_surrogate, texts)), None)
    if surrogate is not None:
        raise _BadRow(f"holds a lone surrogate ({surrogate}), which is not text")
    return past


def _time(value: Any, column: str) -> datetime:
    try:
        return from_epoch(value)
    except (TypeError, ValueError, OverflowError, OSError):
        raise _BadRow(f"{column} {shown(value)} is not a time in unix seconds") from None


def _count(row: dict[str, Any], column: str) -> int:
    value = row.get(column) or 0
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise _BadRow(f"{column} {shown(value)} is not a whole number") from None


def _messages(rows: list[dict[str, Any]], person: str) -> list[NewMessage]:
    calls: dict[str, tuple[str, str]] = {}
    out: list[NewMessage] = []
    for row in rows:
        try:
            message = _message(row, person, calls)
        except _BadRow as exc:
            raise _BadRow(f"message {shown(row.get('id'))}: {exc}") from None
        if message is not None:
            out.append(message)
    return out


def _message(
    row: dict[str, Any], person: str, calls: dict[str, tuple[str, str]]
) -> NewMessage | None:
    """The turn of one Hermes row (None for none); an assistant's tool calls go in `calls`."""
    ts = _time(row["timestamp"], "timestamp")
    text = _text(row.get("content"))
    role = row["role"]
    if role == "user":
        return NewMessage("user", text, speaker=person, ts=ts)
    if role == "assistant":
        for call in _json_list(row.get("tool_calls")):
            function = call.get("function")
            function = function if isinstance(function, dict) else {}
            calls[str(call.get("id"))] = (
                str(function.get("name") or call.get("name") or "tool"),
                _arguments(function.get("arguments", call.get("arguments"))),
            )
        return NewMessage("assistant", text, ts=ts) if text else None
    if role == "tool":
        name, arguments = calls.get(str(row.get("tool_call_id")), (None, None))
        return NewMessage(
            "tool",
            "",
            ts=ts,
            tool_name=str(row.get("tool_name") or name or "tool"),
            tool_arguments=arguments,
            tool_result=text,
        )
    return None


def _text(content: Any) -> str:
    """Hermes stores multimodal content as "\\x00json:" + a list of parts; keep the text."""
    if content is None:
        return ""
    text = str(content)
    if not text.startswith(JSON_PREFIX):
        return text
    try:
        parts = _json(text[len(JSON_PREFIX) :], "content")
    except json.JSONDecodeError:
        return text[len(JSON_PREFIX) :]
    if isinstance(parts, list):
        return "\n".join(
            str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("text")
        )
    return json.dumps(parts, ensure_ascii=False)


def _json_list(value: Any) -> list[dict[str, Any]]:
    if not value:
        return []
    try:
        parsed = _json(value, "tool_calls") if isinstance(value, str | bytes) else value
    except json.JSONDecodeError:
        return []
    return [item for item in parsed if isinstance(item, dict)] if isinstance(parsed, list) else []


def _json(text: str | bytes, column: str) -> Any:
    """Bounded JSON; malformed JSON raises `JSONDecodeError` (the caller keeps the text),
    JSON kioku will not read (too deep, a number too long) refuses the session."""
    try:
        return loads(text, what=column)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # InputRefused, or a number too long for int()
        raise _BadRow(str(exc)) from None


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False, sort_keys=True)
