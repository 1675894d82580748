"""Read a Hermes Agent home folder: its `state.db` sessions and its memory notes.

Hermes (hermes_state.SessionDB, schema 22) keeps one `sessions` row per session
(id, source, chat_id, title, started/ended, token counters...) and `messages` rows
with role user/assistant/tool/system. An assistant turn's tool calls live in its
`tool_calls` JSON and each result in a following `tool` row; kioku stores one tool
row per call (name, arguments, result), so the two are paired by `tool_call_id`.
Rewound turns (`active = 0`) and system rows are left out. Older Hermes schemas
lack some columns; only the ones present are read.

Everything goes to one person: Hermes is a single-user agent.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from memory.notes.format import FILE_NAMES, Target, parse_entries
from memory.store.records import Conversation, NewMessage, PastSession, Usage, from_epoch

JSON_PREFIX = "\x00json:"


class HermesError(ValueError):
    """The folder is not a Hermes home kioku can read; the message says what is missing."""


def read_hermes_sessions(home: Path, person: str) -> list[PastSession]:
    """All sessions of the Hermes home `home` as finished sessions of `person`."""
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
        result = []
        for row in sessions:
            messages = db.execute(
                f"SELECT * FROM messages WHERE session_id = ?{active} ORDER BY timestamp, id",
                (row["id"],),
            ).fetchall()
            result.append(_session(dict(row), [dict(m) for m in messages], person))
        return result
    except sqlite3.Error as exc:
        raise HermesError(f"cannot read {path}: {exc}") from None
    finally:
        db.close()


def read_hermes_notes(home: Path) -> dict[Target, list[str]]:
    """Entries of `memories/MEMORY.md` and `memories/USER.md` (missing files: no entries)."""
    notes: dict[Target, list[str]] = {}
    for target, name in FILE_NAMES.items():
        path = home / "memories" / name
        notes[target] = parse_entries(path.read_text(encoding="utf-8")) if path.is_file() else []
    return notes


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _session(row: dict[str, Any], messages: list[dict[str, Any]], person: str) -> PastSession:
    platform = str(row["source"] or "hermes")
    chat = str(row.get("chat_id") or row.get("user_id") or platform)
    return PastSession(
        external_id=f"hermes:{row['id']}",
        conversation=Conversation(platform, chat, "dm", person),
        messages=_messages(messages, person),
        title=row.get("title"),
        started_at=from_epoch(row["started_at"]),
        ended_at=from_epoch(row["ended_at"]) if row.get("ended_at") else None,
        end_reason=row.get("end_reason") or "imported",
        usage=Usage(
            int(row.get("input_tokens") or 0),
            int(row.get("output_tokens") or 0),
            int(row.get("cache_read_tokens") or 0),
            int(row.get("cache_write_tokens") or 0),
        ),
    )


def _messages(rows: list[dict[str, Any]], person: str) -> list[NewMessage]:
    calls: dict[str, tuple[str, str]] = {}
    out: list[NewMessage] = []
    for row in rows:
        ts = from_epoch(row["timestamp"])
        text = _text(row.get("content"))
        role = row["role"]
        if role == "user":
            out.append(NewMessage("user", text, speaker=person, ts=ts))
        elif role == "assistant":
            for call in _json_list(row.get("tool_calls")):
                function = call.get("function") or {}
                calls[str(call.get("id"))] = (
                    str(function.get("name") or call.get("name") or "tool"),
                    _arguments(function.get("arguments", call.get("arguments"))),
                )
            if text:
                out.append(NewMessage("assistant", text, ts=ts))
        elif role == "tool":
            name, arguments = calls.get(str(row.get("tool_call_id")), (None, None))
            out.append(
                NewMessage(
                    "tool",
                    "",
                    ts=ts,
                    tool_name=row.get("tool_name") or name or "tool",
                    tool_arguments=arguments,
                    tool_result=text,
                )
            )
    return out


def _text(content: Any) -> str:
    """Hermes stores multimodal content as "\\x00json:" + a list of parts; keep the text."""
    if content is None:
        return ""
    text = str(content)
    if not text.startswith(JSON_PREFIX):
        return text
    try:
        parts = json.loads(text[len(JSON_PREFIX) :])
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
        parsed = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return []
    return [item for item in parsed if isinstance(item, dict)] if isinstance(parsed, list) else []


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False, sort_keys=True)
