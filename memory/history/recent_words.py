"""What a person said lately, newest first and bounded: the evidence a notes tidy weighs.

A tidy drops notes the person's later words contradict ("lives in Tokyo" after "we moved
to Osaka"), so it needs those words, but not the whole history: the person's own
messages of their latest sessions (DMs and groups alike: every line is theirs) and
the summaries of their own DM sessions (a group's summary tells of other people too),
until `max_chars`. Read through the sessions' indexes only: a handful of sessions and
their turns, whatever the size of state.db.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from memory.store.database import Store
from memory.store.records import from_epoch
from memory.store.schema import ROLE_CODES
from memory.store.sessions import recent_sessions

SESSIONS = 20
"""How many of the person's latest sessions are read at most."""
LINE_CHARS = 400
"""A longer message is cut: what it says of the person is in its opening."""


@dataclass(frozen=True)
class Words:
    """One thing the person said (`kind` "said"), or a DM session's summary ("summary")."""

    when: datetime
    kind: str
    text: str


async def recent_words(store: Store, person: str, max_chars: int) -> list[Words]:
    """The person's latest words and DM summaries, newest first, `max_chars` in all."""
    return await store.read(lambda db: _recent(db, person, max_chars))


def _recent(db: sqlite3.Connection, person: str, max_chars: int) -> list[Words]:
    found: list[Words] = []
    left = max_chars
    for session in recent_sessions(db, person, SESSIONS):
        rows = db.execute(
            "SELECT ts, content FROM turns WHERE session_id = ? AND role = ? AND speaker_id = ? "
            "ORDER BY id DESC",
            (session.id, ROLE_CODES["user"], person),
        ).fetchall()
        said = [Words(from_epoch(ts), "said", _cut(content)) for ts, content in rows]
        if session.kind == "dm" and session.person == person and session.summary:
            when = session.ended_at or session.started_at
            said.insert(0, Words(when, "summary", _cut(session.summary)))
        for words in said:
            if not words.text:
                continue
            if len(words.text) > left:
                return found
            found.append(words)
            left -= len(words.text)
    return found


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 1] + "…"
