"""Where each chat was last read: the newest message kioku saw in each chat (and thread)
it talks in, so that after a restart or a reconnect it reads only what came after.

A chat gets a cursor when kioku is addressed there (or it is a direct chat); from then
on every message seen there moves it on, so a pass in a busy channel does not read
the chatter again. A cursor only moves forward, by the time its message was sent: a
catch-up pass that reads older messages after live ones leaves it where it is.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from memory.store.database import Store


@dataclass(frozen=True)
class Seen:
    """One message seen in a chat; `addressed` when it was meant for kioku."""

    platform: str
    chat: str
    thread: str
    message_id: str
    is_direct: bool
    at: float
    addressed: bool


@dataclass(frozen=True)
class CursorRow:
    chat: str
    thread: str
    message_id: str
    is_direct: bool


async def advance(store: Store, seen: Seen) -> None:
    """Move the chat's cursor to `seen` if it is newer; a chat kioku was never addressed
    in gets no cursor."""
    await store.write(lambda db: _advance(db, seen))


def _advance(db: sqlite3.Connection, seen: Seen) -> None:
    key = (seen.platform, seen.chat, seen.thread)
    if seen.addressed or seen.is_direct:
        db.execute(
            "INSERT INTO cursors(platform, chat, thread, message_id, is_direct, seen_at, "
            "addressed_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
            "message_id = CASE WHEN excluded.seen_at >= seen_at "
            "THEN excluded.message_id ELSE message_id END, "
            "seen_at = max(seen_at, excluded.seen_at), "
            "addressed_at = max(coalesce(addressed_at, 0), excluded.addressed_at)",
            (*key, seen.message_id, int(seen.is_direct), seen.at, seen.at),
        )
        return
    db.execute(
        "UPDATE cursors SET message_id = ?, seen_at = ? "
        "WHERE platform = ? AND chat = ? AND thread = ? AND seen_at <= ?",
        (seen.message_id, seen.at, *key, seen.at),
    )


async def due(store: Store, platform: str, addressed_since: float) -> list[CursorRow]:
    """The platform's chats to catch up: every direct chat, and every other chat kioku
    was addressed in at `addressed_since` or later."""
    return await store.read(
        lambda db: [
            CursorRow(row["chat"], row["thread"], row["message_id"], bool(row["is_direct"]))
            for row in db.execute(
                "SELECT chat, thread, message_id, is_direct FROM cursors WHERE platform = ? "
                "AND (is_direct OR addressed_at >= ?) ORDER BY seen_at DESC",
                (platform, addressed_since),
            )
        ]
    )


async def watched(store: Store) -> set[tuple[str, str, str]]:
    """(platform, chat, thread) of every chat with a cursor: the gateway moves these on
    for messages not meant for kioku, and writes nothing for other chats' chatter."""
    return await store.read(
        lambda db: {
            (row["platform"], row["chat"], row["thread"])
            for row in db.execute("SELECT platform, chat, thread FROM cursors")
        }
    )
