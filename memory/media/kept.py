"""Keeping media and finding it again: the named functions the layers above call.

A file is written first (off the event loop), then its row; a row that cannot be
stored takes its files away again, so no file is kept that no row names. Deletions go
the other way round (rows in their transaction, files after the commit), so a row
never names a file that was removed while the row stayed.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from memory.media import rows
from memory.media.files import unlink_written, write_files
from memory.media.names import shown_name
from memory.media.records import GROUP_OWNER, MediaCount, NewMedia, StoredMedia
from memory.store.database import Store
from memory.store.records import Session


class UnknownMessage(LookupError):
    """Media was to be kept for a message that is not in the session (or not at all)."""


def owner_of(session: Session) -> str:
    """Whose media a session's files are: the DM's person, or the group conversation."""
    if session.kind == "dm" and session.person:
        return session.person
    key = session.conversation
    return key if key.startswith(GROUP_OWNER) else f"{GROUP_OWNER}{key}"


async def keep_media(
    store: Store, home: Path, session: Session, message_id: int, files: Sequence[NewMedia]
) -> list[StoredMedia]:
    """Keep `files`, which came with message `message_id` of `session`, under the owner's
    `media/` folder (see `owner_of`), and record them; returns the rows."""
    if not files:
        return []
    owner = owner_of(session)
    written = await asyncio.to_thread(write_files, home, owner, files, datetime.now(UTC))

    def op(db: sqlite3.Connection) -> list[StoredMedia]:
        found = db.execute(
            "SELECT 1 FROM turns WHERE id = ? AND session_id = ?", (message_id, session.id)
        ).fetchall()
        if not found:
            raise UnknownMessage(
                f"message {message_id} is not in session {session.id}; no file was kept"
            )
        kept = []
        for item, path in zip(files, written, strict=True):
            cursor = db.execute(
                "INSERT INTO media(message_id, session_id, owner, kind, name, mime, bytes, "
                f"path, created_at) VALUES (?,?,?,?,?,?,?,?,?) RETURNING {rows.COLUMNS}",
                (
                    message_id,
                    session.id,
                    owner,
                    item.kind,
                    shown_name(item.name, item.mime),
                    item.mime,
                    len(item.data),
                    path,
                    time.time(),
                ),
            )
            kept.append(rows.stored(cursor.fetchone()))
        return kept

    try:
        return await store.write(op)
    except Exception:
        # Not on cancellation: the writer still runs an op queued before it, so its rows
        # are stored and their files must stay.
        await asyncio.to_thread(unlink_written, home, written)
        raise


async def count_media(store: Store) -> MediaCount:
    """Every kept file and their bytes (`kioku status`)."""
    return await store.read(rows.count)


async def count_media_of(store: Store, owner: str) -> MediaCount:
    """The files an owner (a person id, or `group:...`) has kept."""
    return await store.read(lambda db: rows.count(db, "owner = ?", (owner,)))


async def media_item(store: Store, media_id: int) -> StoredMedia | None:
    """The kept file `media_id`, whoever's it is: the caller checks who may have it."""
    return await store.read(lambda db: rows.by_id(db, media_id))


async def media_for_message(
    store: Store, message_ids: Sequence[int]
) -> dict[int, list[StoredMedia]]:
    """The files kept with each of `message_ids` (only those that have any), in order."""
    found = await store.read(lambda db: rows.of_messages(db, message_ids))
    by_message: dict[int, list[StoredMedia]] = {}
    for item in found:
        by_message.setdefault(item.message_id, []).append(item)
    return by_message
