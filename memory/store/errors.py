"""What state.db failing looks like to the rest of kioku: memory's own errors, by the kinds
callers tell apart, so nothing above memory/ needs to know SQLite's.

The store turns every `sqlite3.Error` that leaves it (opening, `read`, `write`,
`append`) into one of these with SQLite's message, through `store_error`. A busy lock and
a full disk are also `OSError`s, as they were before they had names of their own.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from memory.store import schema

# SQLite's primary result codes for a file that cannot be opened, read or written.
_UNAVAILABLE = (
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_READONLY,
    sqlite3.SQLITE_PERM,
    sqlite3.SQLITE_AUTH,
)
_CORRUPT = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


class StoreError(Exception):
    """SQLite refused or failed an operation on state.db; the message is SQLite's."""


class StoreUnavailable(StoreError):
    """state.db could not be opened, read or written (permissions, I/O, read-only)."""


class StoreCorrupt(StoreError):
    """state.db is damaged or is no database: only a backup, or `kioku doctor`, helps."""


class StoreBusy(StoreError, OSError):
    """Another process held state.db's write lock past the busy timeout: the write was not
    made (its transaction rolled back), and trying again later works."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is busy: another process (the running kioku, a backup, another "
            f"command) held it for over {schema.BUSY_TIMEOUT_S:g} s, so this change was not "
            "made; try again in a moment"
        )


class StoreFull(StoreError, OSError):
    """state.db could not grow because its disk is full: nothing of the failed write was
    kept, everything before it is intact, and writes work again once there is room."""


class UnknownSession(LookupError):
    """An append or update named a session id that is not in state.db."""


def is_busy(exc: BaseException) -> bool:
    """SQLite's "database is locked" (another connection holds the lock), from any connection."""
    return isinstance(exc, sqlite3.Error) and _code(exc) in (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    )


def is_disk_full(exc: BaseException) -> bool:
    """SQLite's "database or disk is full", the OS's ENOSPC, or the store's `StoreFull`."""
    if isinstance(exc, StoreFull):
        return True
    if isinstance(exc, sqlite3.Error):
        return _code(exc) == sqlite3.SQLITE_FULL
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


def store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    """The memory error for `exc`, raised on state.db at `path`; SQLite's message is kept,
    except a busy lock's, which says what to do."""
    if is_busy(exc):
        return StoreBusy(path)
    if is_disk_full(exc):
        return StoreFull(str(exc))
    if _code(exc) in _CORRUPT:
        return StoreCorrupt(str(exc))
    if _code(exc) in _UNAVAILABLE:
        return StoreUnavailable(str(exc))
    return StoreError(str(exc))


def _code(exc: BaseException) -> int:
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF
