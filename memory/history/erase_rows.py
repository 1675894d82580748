"""The deleting half of `memory.history.erase`: the rows a surveyed plan lists, and
only those still as listed, inside one write transaction."""

from __future__ import annotations

from datetime import datetime

import aiosqlite

from memory.history.plan import Plan
from memory.media.records import StoredMedia
from memory.media.removal import take_media
from memory.store.records import to_epoch

END_REASON = "history_deleted"
"""Why an open session that lost turns was ended."""

# Sessions and turns deleted, the open sessions ended, the media rows taken.
Deleted = tuple[int, int, tuple[int, ...], list[StoredMedia]]


async def delete_planned(db: aiosqlite.Connection, plan: Plan, *, keep_open: bool) -> Deleted:
    """Delete what `plan` lists, re-checked against the asker's rights and against ids
    SQLite may have given to newer rows since the survey; inside the caller's transaction."""
    mine = "1" if plan.asker.is_owner else "kind = 'dm' AND person_id = ?"
    who = () if plan.asker.is_owner else (plan.asker.person,)
    sessions = turns = 0
    touched: set[int] = set()
    media: list[StoredMedia] = []
    for session in plan.sessions:
        media += await take_media(
            db,
            f"session_id = (SELECT id FROM sessions WHERE id = ? AND external_id = ? AND {mine}) "
            "AND message_id <= ?",
            (session.id, session.name, *who, session.last_turn),
        )
        cursor = await db.execute(
            f"DELETE FROM turns WHERE session_id = (SELECT id FROM sessions "
            f"WHERE id = ? AND external_id = ? AND {mine}) AND id <= ?",
            (session.id, session.name, *who, session.last_turn),
        )
        turns += cursor.rowcount
        # A turn added since the survey keeps the session (without what went before it).
        cursor = await db.execute(
            f"DELETE FROM sessions WHERE id = ? AND external_id = ? AND {mine} "
            "AND NOT EXISTS (SELECT 1 FROM turns WHERE session_id = sessions.id)",
            (session.id, session.name, *who),
        )
        if cursor.rowcount:
            sessions += 1
        else:
            touched.add(session.id)
    for turn in plan.turns:
        doomed = (
            "id = ? AND session_id = ? AND abs(ts - ?) < 0.001 "
            f"AND session_id IN (SELECT id FROM sessions WHERE external_id = ? AND {mine})"
        )
        values = (turn.id, turn.session_id, to_epoch(turn.ts), turn.session_name, *who)
        media += await take_media(
            db, f"message_id IN (SELECT id FROM turns WHERE {doomed})", values
        )
        cursor = await db.execute(f"DELETE FROM turns WHERE {doomed}", values)
        if cursor.rowcount:
            turns += 1
            touched.add(turn.session_id)
    for session_id in {*plan.retitled, *touched}:
        await db.execute(
            f"UPDATE sessions SET title = NULL, summary = NULL WHERE id = ? AND {mine}",
            (session_id, *who),
        )
    ended: tuple[int, ...] = ()
    if not keep_open and touched:
        marks = ",".join("?" * len(touched))
        rows = await db.execute_fetchall(
            f"UPDATE sessions SET ended_at = ?, end_reason = ? "
            f"WHERE id IN ({marks}) AND ended_at IS NULL RETURNING id",
            (to_epoch(datetime.now().astimezone()), END_REASON, *sorted(touched)),
        )
        ended = tuple(sorted(int(row["id"]) for row in rows))
    return sessions, turns, ended, media
