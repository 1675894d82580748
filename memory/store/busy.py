"""Another process holding state.db's lock: how it is recognised, what a command is told
(`StoreBusy`), and the one statement that gives way to it instead (`PRAGMA optimize` on
close), since several `kioku` commands may run beside the daemon at once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite

from config.loggers import get_logger
from memory.store import schema

log = get_logger("kioku.store")
# The longest closing waits for another process's lock before skipping `PRAGMA optimize`.
OPTIMIZE_WAIT_S = 1.0


class StoreBusy(OSError):
    """Another process held state.db's write lock past the busy timeout: the write was not
    made (its transaction rolled back), and trying again later works."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is busy: another process (the running kioku, a backup, another "
            f"command) held it for over {schema.BUSY_TIMEOUT_S:g} s, so this change was not "
            "made; try again in a moment"
        )


def is_busy(exc: BaseException) -> bool:
    """SQLite's "database is locked" (another connection holds the lock), from any connection."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return isinstance(exc, sqlite3.Error) and code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


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
