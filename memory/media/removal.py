"""How kept files leave with the history that brought them.

Every deletion (`memory.history.erase`, `memory.history.forget`) takes the `media` rows
inside its own transaction, before the turns they belong to (a trigger would otherwise
take them away unseen), and removes the files once that transaction has
committed. So a failed deletion leaves rows and files as they were, and a crash after
the commit leaves at most a stray file no row names, never a row without its file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiosqlite

from memory.media import rows
from memory.media.files import remove_files
from memory.media.records import StoredMedia


async def take_media(
    db: aiosqlite.Connection, where: str, params: tuple[object, ...] | dict[str, object]
) -> list[StoredMedia]:
    """Inside a deletion's write transaction: delete the rows of `media` matching
    `where` and return them, for `remove_media_files` after the commit."""
    return await rows.take(db, where, params)


async def remove_media_files(home: Path, taken: list[StoredMedia]) -> int:
    """After the commit: remove the files of `taken` (off the event loop); returns how
    many were there to remove. A failure is logged per file; the rows are gone anyway."""
    if not taken:
        return 0
    return await asyncio.to_thread(remove_files, home, taken)
