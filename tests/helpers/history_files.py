"""History files for import tests: kioku jsonl lines and a small Hermes Agent home."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

LINES = [
    {"person": "alice", "platform": "telegram", "chat": "42", "session": "s1", "role": "user",
     "content": "We planned the schema", "ts": "2026-01-01T10:00:00+00:00",
     "speaker_name": "Alice"},
    {"person": "alice", "platform": "telegram", "chat": "42", "session": "s1",
     "role": "assistant", "content": "Orders get their own table.",
     "ts": "2026-01-01T10:00:05+00:00"},
    {"person": "bob", "platform": "cli", "chat": "bob@box", "session": "s2", "role": "user",
     "content": "京都の抹茶", "ts": "2026-01-02T08:00:00.250000+09:00"},
]  # fmt: skip


def make_hermes_home(home: Path) -> Path:
    """A Hermes home: two sessions (one with a tool call), a rewound turn, both notes files."""
    home.mkdir(parents=True)
    db = sqlite3.connect(home / "state.db")
    db.executescript(HERMES_SCHEMA)
    db.execute(
        "INSERT INTO sessions(id, source, user_id, chat_id, chat_type, started_at, ended_at, "
        "end_reason, input_tokens, output_tokens, title) VALUES "
        "('20260101_abc', 'telegram', '123', '123', 'dm', 1767261600, 1767262000, 'idle', "
        "120, 40, 'Schema talk')"
    )
    db.execute("INSERT INTO sessions(id, source, started_at) VALUES ('cli_1', 'cli', 1767348000)")
    calls = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "web_search", "arguments": '{"q": "wal mode"}'},
        }
    ]
    rows = [
        ("20260101_abc", "user", "We planned the database schema", None, None, None, 1767261601, 1),
        ("20260101_abc", "assistant", None, None, json.dumps(calls), None, 1767261602, 1),
        ("20260101_abc", "tool", "WAL lets readers run", "c1", None, "web_search", 1767261603, 1),
        ("20260101_abc", "assistant", "Use WAL mode.", None, None, None, 1767261604, 1),
        ("20260101_abc", "user", "rewound turn", None, None, None, 1767261605, 0),
        ("cli_1", "system", "You are Hermes.", None, None, None, 1767348000, 1),
        ("cli_1", "user", "\x00json:" + json.dumps([{"type": "text", "text": "京都で抹茶"},
                                                    {"type": "image_url", "image_url": "x"}]),
         None, None, None, 1767348001, 1),
    ]  # fmt: skip
    db.executemany(
        "INSERT INTO messages(session_id, role, content, tool_call_id, tool_calls, tool_name, "
        "timestamp, active) VALUES (?,?,?,?,?,?,?,?)",
        rows,
    )
    db.commit()
    db.close()
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("Runs Postgres 16 at home\n§\nPrefers uv\n")
    (home / "memories" / "USER.md").write_text("Name: Ben\n")
    return home


def write_jsonl(path: Path, rows: list[dict[str, object]] | list[str]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# Hermes Agent's state.db tables (hermes_state.SessionDB, schema version 22), trimmed to
# the columns kioku reads plus a few it must ignore.
HERMES_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, session_key TEXT, chat_id TEXT,
    chat_type TEXT, thread_id TEXT, model TEXT, system_prompt TEXT, parent_session_id TEXT,
    started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0, title TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    platform_message_id TEXT, active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0
);
INSERT INTO schema_version VALUES (22);
"""
