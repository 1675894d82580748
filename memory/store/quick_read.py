"""Reading state.db from a short-lived command, without the store's machinery.

`Store.open` starts a writer, a checkpointer and a pool of readers, and migrates an old
file: right for the daemon, a fifth of a second too much for `kioku search` on a file
that is already current. `open_current` gives a plain read-only connection when the
file is in this kioku's layout, and None otherwise (the caller then opens the store,
which upgrades it, or reports why it cannot).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory.store.schema import BUSY_TIMEOUT_S, SCHEMA_VERSION


def open_current(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to state.db at `path` if it exists in the current layout."""
    if not path.is_file():
        return None
    db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    db.row_factory = sqlite3.Row
    try:
        db.execute("PRAGMA query_only = 1")
        (version,) = db.execute("PRAGMA user_version").fetchone()
    except sqlite3.DatabaseError:
        db.close()
        return None
    if version != SCHEMA_VERSION:
        db.close()
        return None
    return db
