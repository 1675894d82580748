"""What left history, for copies of it kept outside state.db (memory providers).

A trigger on `turns` logs every deleted turn with its scope name (`person:<id>`,
`group:<platform>:<chat>`), and forgetting a person logs their whole scope (a row
without a turn). Whoever mirrors history reads the log in order with `pending` and
removes what it has passed on with `taken`; the rows hold ids, never text.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

import aiosqlite

from memory.store.database import Store

BATCH = 1000


@dataclass(frozen=True)
class Erasure:
    """One turn (`turn_id`) or a whole scope (`turn_id` None) that left history."""

    id: int
    scope: str
    turn_id: int | None


async def forget_scope(db: aiosqlite.Connection, scope: str) -> None:
    """Log that everything of `scope` went; run inside the transaction that removes it."""
    await db.execute(
        "INSERT INTO erasures(scope, turn_id, at) VALUES (?, NULL, ?)", (scope, time.time())
    )


async def pending(store: Store, limit: int = BATCH) -> list[Erasure]:
    """The oldest erasures not yet taken, in the order they happened."""

    def read(db: sqlite3.Connection) -> list[Erasure]:
        rows = db.execute(
            "SELECT id, scope, turn_id FROM erasures ORDER BY id LIMIT ?", (limit,)
        ).fetchall()
        return [Erasure(int(row["id"]), str(row["scope"]), row["turn_id"]) for row in rows]

    return await store.read(read)


async def taken(store: Store, through: int) -> None:
    """Remove the log's rows up to id `through`: they have been passed on."""

    async def op(db: aiosqlite.Connection) -> None:
        await db.execute("DELETE FROM erasures WHERE id <= ?", (through,))

    await store.write(op)


async def forget_erasures(store: Store) -> None:
    """Empty the log: nothing outside state.db holds a copy to pass deletions on to."""

    async def op(db: aiosqlite.Connection) -> None:
        await db.execute("DELETE FROM erasures")

    await store.write(op)
