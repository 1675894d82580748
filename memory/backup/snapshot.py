"""A consistent copy of state.db while the daemon keeps writing to it.

SQLite's online backup API copies page by page, so a progress bar can advance. Alone it
restarts whenever another connection commits between two steps, which under a steady
stream of turns is forever; so the source connection first opens a read transaction and
holds it to the end. In WAL mode that pins one snapshot (the daemon's writes go on into
the WAL, unblocked), and every step copies from it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory.backup.errors import BackupCancelled, BackupError
from memory.backup.manifest import Counts
from memory.backup.progress import Progress, Stopping
from memory.store.scalar import scalar_now
from memory.store.schema import BUSY_TIMEOUT_S

PAGES_PER_STEP = 4096
STAGE = "state.db"


def copy_database(source: Path, target: Path, progress: Progress, stopping: Stopping) -> int:
    """Copy the database at `source` to a new file `target` as of one moment; return its
    schema version (`user_version`). `BackupCancelled` once `stopping()` says so."""
    src = sqlite3.connect(source, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    try:
        src.execute("PRAGMA query_only = 1")
        src.execute("BEGIN")
        # The first read starts the transaction: from here on the copy sees one moment.
        (version,) = src.execute("PRAGMA user_version").fetchone()
        dst = sqlite3.connect(target)
        try:

            def step(status: int, remaining: int, total: int) -> None:
                if stopping():
                    raise BackupCancelled("the backup was stopped before it was finished")
                progress(STAGE, total - remaining, total)

            src.backup(dst, pages=PAGES_PER_STEP, progress=step)
        finally:
            dst.close()
        src.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF in (
            sqlite3.SQLITE_FULL,
            sqlite3.SQLITE_IOERR,
        ):
            raise BackupError(
                f"copying state.db into {target.parent} failed ({exc}): the disk holding it is "
                "full or failing; free some space there, or back up elsewhere with --to DIR; "
                "no backup was kept"
            ) from None
        raise BackupError(
            f"cannot copy {source}: {exc}. `kioku doctor` checks the database"
        ) from None
    finally:
        src.close()
    return int(version)


def count_rows(database: Path) -> Counts:
    """How many persons, sessions and turns the copy at `database` holds."""
    db = sqlite3.connect(database)
    try:
        persons, sessions, turns = (
            scalar_now(db, f"SELECT count(*) FROM {table}")
            for table in ("persons", "sessions", "turns")
        )
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"state.db has no kioku tables to count ({exc})") from None
    finally:
        db.close()
    return Counts(persons, sessions, turns)
