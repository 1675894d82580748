"""What a search result shows besides its hits: its session, and the turns around one.

Both the word search (`memory.search.ranking`) and search by meaning
(`memory.search.semantic`) give sessions as `SessionResult`s: each read here in one
statement for all the results, and the context around each one's best turn in another.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from memory.store.records import ContextTurn, Hit, SessionResult, from_epoch


def sessions_by_id(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Any]:
    """The rows (`external_id`, `platform`, `title`, `summary`, `started_at`) of the
    sessions `ids` still stored, by id."""
    if not ids:
        return {}
    return {
        row["id"]: row
        for row in db.execute(
            "SELECT id, external_id, platform, title, summary, started_at FROM sessions "
            f"WHERE id IN ({','.join('?' * len(ids))})",
            list(ids),
        )
    }


def result(row: Any, score: float, hits: list[Hit], context: list[ContextTurn]) -> SessionResult:
    """A session's row (`sessions_by_id`) as a search result."""
    return SessionResult(
        session=row["external_id"],
        session_id=row["id"],
        platform=row["platform"],
        title=row["title"],
        summary=row["summary"],
        started_at=from_epoch(row["started_at"]),
        score=round(score, 6),
        hits=hits,
        context=context,
    )


def contexts(
    db: sqlite3.Connection, anchors: Sequence[tuple[int, int]], size: int
) -> dict[int, list[ContextTurn]]:
    """For each (session id, turn id) of `anchors`, the `size` turns before and after
    that turn in its session, in order, by session id; in one statement."""
    if size <= 0 or not anchors:
        return {}
    parts: list[str] = []
    params: list[Any] = []
    for session_id, turn_id in anchors:
        for op, order in (("<", "DESC"), (">", "ASC")):
            parts.append(
                "SELECT * FROM (SELECT id, session_id, role, ts, content FROM messages "
                f"WHERE session_id = ? AND id {op} ? ORDER BY id {order} LIMIT ?)"
            )
            params += [session_id, turn_id, size]
    around: dict[int, list[ContextTurn]] = {}
    for r in sorted(db.execute(" UNION ALL ".join(parts), params), key=lambda r: r["id"]):
        turn = ContextTurn(r["id"], r["role"], from_epoch(r["ts"]), r["content"])
        around.setdefault(r["session_id"], []).append(turn)
    return around
