"""The last exchange of a session: the person's latest message and every turn after it
(kioku's reply, its tool calls). `/undo` takes it back; a confirmed `history_delete`
takes the exchange that asked for the deletion, since its list quotes what went."""

from __future__ import annotations

import sqlite3

from memory.store.database import Store
from memory.store.schema import ROLE_CODES


async def last_exchange(store: Store, session_id: int) -> tuple[int, ...]:
    """Turn ids of the session's latest user message and the turns after it, in order;
    empty when the session holds no user message."""

    def read(db: sqlite3.Connection) -> tuple[int, ...]:
        start = db.execute(
            "SELECT max(id) AS start FROM turns WHERE session_id = ? AND role = ?",
            (session_id, ROLE_CODES["user"]),
        ).fetchone()["start"]
        if start is None:
            return ()
        rows = db.execute(
            "SELECT id FROM turns WHERE session_id = ? AND id >= ? ORDER BY id",
            (session_id, start),
        )
        return tuple(int(row["id"]) for row in rows)

    return await store.read(read)
