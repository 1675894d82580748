"""Platform message ids already taken in, so a second delivery of one message is dropped.

Platforms redeliver after a reconnect or a slow acknowledgement; the ids are kept in
state.db, so a redelivery after a restart is dropped too. A week of ids is plenty:
no platform redelivers older messages, and pruning keeps the table small.
"""

from __future__ import annotations

import time

import aiosqlite

from memory.store.database import Store

KEEP_SECONDS = 7 * 24 * 3600
# How far back in an open session a stored-but-unrecorded message is looked for: far
# more than the messages one conversation can have in flight when the daemon dies.
RECENT_TURNS = 200


async def known(store: Store, platform: str, chat: str, message_id: str) -> bool:
    """True if this message id was already recorded in this chat, or is among the latest
    turns of one of the chat's open sessions: a crash between storing a message and
    recording its delivery must not let the redelivery be stored (and answered) twice.
    Only the newest turns can be in that window, so the look stays cheap in long sessions."""
    return await store.read(
        lambda db: (
            db.execute(
                "SELECT 1 FROM deliveries WHERE platform = ? AND chat = ? AND message_id = ? "
                "UNION ALL SELECT 1 FROM sessions AS s "
                "WHERE s.platform = ? AND s.chat = ? AND s.ended_at IS NULL AND EXISTS ("
                "SELECT 1 FROM (SELECT platform_message_id FROM turns WHERE session_id = s.id "
                f"ORDER BY id DESC LIMIT {RECENT_TURNS}) WHERE platform_message_id = ?) "
                "LIMIT 1",
                (platform, chat, message_id, platform, chat, message_id),
            ).fetchone()
            is not None
        )
    )


async def seen(
    store: Store, platform: str, chat: str, message_id: str, *, now: float | None = None
) -> bool:
    """Record the delivery; True if this message id was already recorded in this chat."""
    stamp = time.time() if now is None else now

    async def op(db: aiosqlite.Connection) -> bool:
        cursor = await db.execute(
            "INSERT OR IGNORE INTO deliveries(platform, chat, message_id, seen_at) "
            "VALUES (?, ?, ?, ?)",
            (platform, chat, message_id, stamp),
        )
        return cursor.rowcount == 0

    return await store.write(op)


async def record(
    store: Store, platform: str, chat: str, message_id: str, *, now: float | None = None
) -> None:
    """Count the message as handled: later deliveries of it are dropped."""
    await seen(store, platform, chat, message_id, now=now)


async def prune(store: Store, *, keep: float = KEEP_SECONDS, now: float | None = None) -> int:
    """Forget deliveries older than `keep` seconds; returns how many were removed."""
    cutoff = (time.time() if now is None else now) - keep

    async def op(db: aiosqlite.Connection) -> int:
        cursor = await db.execute("DELETE FROM deliveries WHERE seen_at < ?", (cutoff,))
        return cursor.rowcount

    return await store.write(op)
