"""The stored turn of a platform message: what an edit or a deletion on the platform changes.

A person's message is stored as a user turn carrying the platform's message id
(`turns.platform_message_id`), in a session of the chat it came from (`sessions.platform`,
`sessions.chat`). Message ids are unique only within a chat (Telegram numbers each chat's
messages from 1), so the chat is always part of the look-up. With `sessions.dm_scope =
"person"` one DM session spans all of a person's chats and records only the chat it
started in, so the caller that keys DMs that way also names the session's conversation
key. Only the person's own turn is found, never kioku's answer or a tool's row.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from memory.store.database import Store
from memory.store.records import Kind
from memory.store.schema import ROLE_CODES


@dataclass(frozen=True)
class Said:
    """One stored user turn of a platform message.

    `speaker` is the person who wrote it (None for a group member kioku does not know);
    `person` is the DM's person (None in a group); `conversation` is the session's key
    (the gateway's line for it); `is_open` whether that session is still going on.
    """

    session_id: int
    turn_id: int
    speaker: str | None
    person: str | None
    kind: Kind
    conversation: str
    is_open: bool


# `turns` has no index on message ids: CROSS JOIN makes SQLite read the chat's sessions
# first and only their turns (by `turns_session`), not every turn of state.db.
_MATCHING = (
    "SELECT t.id, t.session_id, t.speaker_id, t.content, s.kind, s.person_id, s.conversation, "
    "s.ended_at FROM sessions AS s CROSS JOIN turns AS t ON t.session_id = s.id "
    "WHERE ((s.platform = ? AND s.chat = ?) OR s.conversation = ?) "
    "AND t.platform_message_id = ? AND t.role = ? ORDER BY t.id"
)


def matching(
    db: sqlite3.Connection,
    platform: str,
    chat: str,
    message_id: str,
    conversation: str | None = None,
) -> list[sqlite3.Row]:
    """Every user turn holding `message_id` of that chat, oldest first (the delivery
    ledger stores a message once; should it be held twice, edits reach every copy)."""
    return db.execute(
        _MATCHING, (platform, chat, conversation, message_id, ROLE_CODES["user"])
    ).fetchall()


def said_of(row: sqlite3.Row) -> Said:
    """The `Said` of a row `matching` returned."""
    return Said(
        session_id=int(row["session_id"]),
        turn_id=int(row["id"]),
        speaker=row["speaker_id"],
        person=row["person_id"],
        kind=row["kind"],
        conversation=row["conversation"],
        is_open=row["ended_at"] is None,
    )


async def find_said(
    store: Store,
    platform: str,
    chat: str,
    message_id: str,
    *,
    conversation: str | None = None,
) -> Said | None:
    """The stored user turn of `message_id` in `platform`'s `chat` (the newest, should there
    be more than one), or None when kioku never stored it. `conversation` also looks in
    the session with that key (a person-wide DM session that started in another chat)."""
    rows = await store.read(lambda db: matching(db, platform, chat, message_id, conversation))
    return said_of(rows[-1]) if rows else None


async def answered(store: Store, said: Said) -> bool:
    """Whether kioku's answer to `said` is stored: a reply of kioku's after it in its session."""
    return await store.read(
        lambda db: (
            db.execute(
                "SELECT 1 FROM turns WHERE session_id = ? AND id > ? AND role = ? LIMIT 1",
                (said.session_id, said.turn_id, ROLE_CODES["assistant"]),
            ).fetchone()
            is not None
        )
    )
