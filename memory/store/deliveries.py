"""The delivery ledger: platform message ids already taken in, so a second delivery of
one message is dropped, and the messages taken in whose turn is not stored yet.

Platforms redeliver after a reconnect or a slow acknowledgement, and a catch-up pass
reads again what was delivered live; the ids are kept in state.db, so a redelivery after
a restart is dropped too. A message is *held* (`hold`: its row carries the message as
`waiting`) before its platform is told kioku has it, and *recorded* (`record`: `waiting`
cleared) once its turn is stored: what is still waiting when kioku starts was never
answered (`waiting_rows`). A week of recorded ids is plenty: no platform redelivers older
messages, and pruning keeps the table small; a waiting row stays until it is answered.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

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


async def record(
    store: Store, platform: str, chat: str, message_id: str, *, now: float | None = None
) -> None:
    """Count the message as handled (its turn stored, or nothing to store): later
    deliveries of it are dropped, and it no longer waits."""
    stamp = time.time() if now is None else now
    await store.write(
        lambda db: db.execute(
            "INSERT INTO deliveries(platform, chat, message_id, seen_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO UPDATE SET waiting = NULL",
            (platform, chat, message_id, stamp),
        )
    )


async def hold(
    store: Store,
    platform: str,
    chat: str,
    message_id: str,
    waiting: str,
    *,
    now: float | None = None,
) -> bool:
    """Take the message in before it is answered: `waiting` (the message, as the gateway
    writes it) is kept until `record`. False if the id was already taken in."""
    stamp = time.time() if now is None else now

    def op(db: sqlite3.Connection) -> bool:
        cursor = db.execute(
            "INSERT OR IGNORE INTO deliveries(platform, chat, message_id, seen_at, waiting) "
            "VALUES (?, ?, ?, ?, ?)",
            (platform, chat, message_id, stamp, waiting),
        )
        return cursor.rowcount == 1

    return await store.write(op)


async def rewrite(store: Store, platform: str, chat: str, message_id: str, waiting: str) -> bool:
    """Replace a waiting message (it was edited before its turn); False if it no longer waits."""

    def op(db: sqlite3.Connection) -> bool:
        cursor = db.execute(
            "UPDATE deliveries SET waiting = ? "
            "WHERE platform = ? AND chat = ? AND message_id = ? AND waiting IS NOT NULL",
            (waiting, platform, chat, message_id),
        )
        return cursor.rowcount == 1

    return await store.write(op)


async def let_go(store: Store, platform: str, chat: str, message_id: str) -> None:
    """Forget a held message that was refused before its turn (the conversation's line was
    full): a later delivery of it is taken in again."""
    await store.write(
        lambda db: db.execute(
            "DELETE FROM deliveries "
            "WHERE platform = ? AND chat = ? AND message_id = ? AND waiting IS NOT NULL",
            (platform, chat, message_id),
        )
    )


@dataclass(frozen=True)
class Waiting:
    """A message taken in whose turn was never stored, as `hold` kept it."""

    platform: str
    chat: str
    message_id: str
    waiting: str


async def waiting_rows(store: Store) -> list[Waiting]:
    """Every message still waiting, in the order they were taken in."""
    return await store.read(
        lambda db: [
            Waiting(row["platform"], row["chat"], row["message_id"], row["waiting"])
            for row in db.execute(
                "SELECT platform, chat, message_id, waiting FROM deliveries "
                "WHERE waiting IS NOT NULL ORDER BY seen_at, message_id"
            )
        ]
    )


async def prune(store: Store, *, keep: float = KEEP_SECONDS, now: float | None = None) -> int:
    """Forget deliveries older than `keep` seconds; returns how many were removed."""
    cutoff = (time.time() if now is None else now) - keep

    def op(db: sqlite3.Connection) -> int:
        cursor = db.execute(
            "DELETE FROM deliveries WHERE seen_at < ? AND waiting IS NULL", (cutoff,)
        )
        return cursor.rowcount

    return await store.write(op)
