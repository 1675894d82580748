"""Make deleted history unreadable: no trace in state.db's pages, its index or its WAL.

A DELETE only unlinks a row. Its bytes stay in the page's free space, in pages put
on the freelist, in the full-text index (FTS5 marks a row deleted and keeps its
terms until the segment holding them is merged) and in the WAL frames written
before. So a deletion runs inside `scrubbing`:

- every connection writes with `secure_delete = FAST` (see `memory.store.schema`),
  which zeroes a deleted cell in the page being written anyway, at no extra I/O;
- inside the deletion it is `ON`, so the pages the deletion frees are zeroed too;
- before deleting, the pages already on the freelist (freed earlier, with FAST,
  which does not zero them) are filled with zeros by a scratch table;
- after deleting, the index is merged into one segment (`optimize`), which drops
  the deleted rows' terms (SQLite 3.40 has no FTS5 `secure-delete` option);
- after the commit, the WAL is checkpointed and truncated (`Store.truncate_wal`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiosqlite

from memory.store.scalar import scalar
from memory.store.schema import FTS_TABLE, SECURE_DELETE

WIPE_TABLE = "kioku_wipe"
# Free pages filled per scratch row: each overflow page holds page_size - 4 bytes.
WIPE_CHUNK_PAGES = 1024


@asynccontextmanager
async def scrubbing(db: aiosqlite.Connection) -> AsyncIterator[None]:
    """Inside a write transaction: zero the freelist, let the body delete, then drop the
    deleted terms from the index. Freed pages are zeroed throughout."""
    await db.execute("PRAGMA secure_delete = ON")
    try:
        await wipe_free_pages(db)
        yield
        await db.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')")
    finally:
        await db.execute(f"PRAGMA secure_delete = {SECURE_DELETE}")


async def wipe_free_pages(db: aiosqlite.Connection) -> int:
    """Overwrite every page on the freelist with zeros; returns how many there were.

    SQLite takes pages from the freelist before it grows the file, so blobs as large
    as the freelist land on exactly those pages; dropping the table (with
    `secure_delete` on) gives them back, still zero.
    """
    page_size = await scalar(db, "PRAGMA page_size")
    free = first = await scalar(db, "PRAGMA freelist_count")
    if not free:
        return 0
    await db.execute(f"CREATE TABLE {WIPE_TABLE}(zeros BLOB)")
    while free:
        pages = min(free, WIPE_CHUNK_PAGES)
        await db.execute(
            f"INSERT INTO {WIPE_TABLE}(zeros) VALUES (zeroblob(?))", (pages * (page_size - 4),)
        )
        left = await scalar(db, "PRAGMA freelist_count")
        if left >= free:
            break
        free = left
    await db.execute(f"DROP TABLE {WIPE_TABLE}")
    return first
