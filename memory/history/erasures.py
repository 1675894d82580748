"""What left history, for copies of it kept outside state.db (memory providers).

A trigger on `turns` logs every deleted turn with its scope name (`person:<id>`,
`group:<platform>:<chat>`), forgetting a person logs their whole scope (a row
without a turn), and a turn whose text a platform edit changed is logged as if deleted,
so its old copies go (`memory.history.platform_edits`). Whoever mirrors history reads
the log in order with `pending` and removes what it has passed on with `taken`; the
rows hold ids, never text.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from memory.store.database import Store

BATCH = 1000


@dataclass(frozen=True)
class Erasure:
    """One turn (`turn_id`) or a whole scope (`turn_id` None) that left history."""

    id: int
    scope: str
    turn_id: int | None


def forget_scope(db: sqlite3.Connection, scope: str) -> None:
    """Log that everything of `scope` went; run inside the transaction that removes it."""
    db.execute("INSERT INTO erasures(scope, turn_id, at) VALUES (?, NULL, ?)", (scope, time.time()))


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

    def op(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM erasures WHERE id <= ?", (through,))

    await store.write(op)


async def forget_erasures(store: Store) -> None:
    """Empty the log: nothing outside state.db holds a copy to pass deletions on to."""

    def op(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM erasures")

    await store.write(op)


def turn_changed(db: sqlite3.Connection, turn_id: int) -> None:
    """Log that a turn's text changed (a platform edit): the copies made of it are stale and
    go as a deleted turn's do. Run inside the transaction that changes it."""
    db.execute(
        "INSERT INTO erasures(scope, turn_id, at) SELECT sc.name, t.id, ? FROM turns AS t "
        "JOIN sessions AS s ON s.id = t.session_id JOIN scopes AS sc ON sc.id = s.scope_id "
        "WHERE t.id = ?",
        (time.time(), turn_id),
    )
