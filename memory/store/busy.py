"""The one statement that gives way to another process holding state.db's lock instead of
failing (`PRAGMA optimize` on close), since several `kioku` commands may run beside the
daemon at once; how the lock is recognised and what a command is told is
`memory.store.errors`'s (`is_busy`, `StoreBusy`)."""

from __future__ import annotations

import sqlite3

import aiosqlite

from config.loggers import get_logger
from memory.store.errors import is_busy

log = get_logger("kioku.store")
# The longest closing waits for another process's lock before skipping `PRAGMA optimize`.
OPTIMIZE_WAIT_S = 1.0


async def optimize(db: aiosqlite.Connection) -> None:
    """`PRAGMA optimize`, which only keeps the planner's statistics fresh: it waits at
    most `OPTIMIZE_WAIT_S` for another process's lock (it reads, then writes, so a
    commit in between refuses it at once), and a refusal is logged, never raised: the
    work of whoever closes the store is done and stored by then."""
    try:
        await db.execute(f"PRAGMA busy_timeout = {int(OPTIMIZE_WAIT_S * 1000)}")
        await db.execute("PRAGMA optimize")
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            log.debug("optimize_skipped", reason=str(exc))
        else:
            log.warning("optimize_failed", error=str(exc))
