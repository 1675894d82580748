"""The `media` table's rows as `StoredMedia`, and the SQL that reads and takes them.

Reads run on a plain read-only connection (`store.read`); `take_*` run inside a
deletion's write transaction and return the rows they deleted, whose files the
caller removes once that transaction has committed (`memory.media.files.remove_files`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

import aiosqlite

from memory.media.records import MediaCount, StoredMedia
from memory.store.records import from_epoch

COLUMNS = "id, message_id, session_id, owner, kind, name, mime, bytes, path, created_at"
# SQLite binds at most 32766 values a statement (999 before 3.32): ids go in chunks.
CHUNK = 500


def stored(row: Any) -> StoredMedia:
    return StoredMedia(
        id=int(row["id"]),
        message_id=int(row["message_id"]),
        session_id=int(row["session_id"]),
        owner=str(row["owner"]),
        kind=str(row["kind"]),
        name=str(row["name"]),
        mime=str(row["mime"]),
        bytes=int(row["bytes"]),
        path=str(row["path"]),
        created_at=from_epoch(float(row["created_at"])),
    )


def count(db: sqlite3.Connection, where: str = "1", params: tuple[object, ...] = ()) -> MediaCount:
    files, size = db.execute(
        f"SELECT count(*), coalesce(sum(bytes), 0) FROM media WHERE {where}", params
    ).fetchone()
    return MediaCount(int(files), int(size))


def by_id(db: sqlite3.Connection, media_id: int) -> StoredMedia | None:
    row = db.execute(f"SELECT {COLUMNS} FROM media WHERE id = ?", (media_id,)).fetchone()
    return None if row is None else stored(row)


def of_messages(db: sqlite3.Connection, message_ids: Iterable[int]) -> list[StoredMedia]:
    ids = sorted(set(message_ids))
    found: list[StoredMedia] = []
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        found += [
            stored(row)
            for row in db.execute(
                f"SELECT {COLUMNS} FROM media WHERE message_id IN ({','.join('?' * len(chunk))}) "
                "ORDER BY message_id, id",
                chunk,
            )
        ]
    return found


async def take(
    db: aiosqlite.Connection, where: str, params: tuple[object, ...] | dict[str, object]
) -> list[StoredMedia]:
    """Delete the rows of `media` matching `where`; returns them (their files stay)."""
    rows = await db.execute_fetchall(f"DELETE FROM media WHERE {where} RETURNING {COLUMNS}", params)
    return [stored(row) for row in rows]
