"""Which document of an outside service holds which of kioku's turns, on the owner's disk.

A memory service such as Supermemory finds documents by its own ids, not by kioku's
turn ids, so deleting history there needs a map from each turn to the document that
recorded it. It is a small SQLite file in the
provider's own folder (mode 0600; each change one transaction, so a crash leaves it
whole), keyed by scope as well, so a lookup for one scope can never name another's
document. Every call runs in a worker thread: the daemon's event loop never waits on
the disk.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    scope TEXT NOT NULL,
    turn_id INTEGER NOT NULL,
    document_id TEXT NOT NULL,
    PRIMARY KEY (scope, turn_id)
)
"""


class Ledger:
    """turn id -> the service's document id, per scope key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    async def open(self) -> None:
        await asyncio.to_thread(self._open)

    async def close(self) -> None:
        await asyncio.to_thread(self._close)

    async def remember(self, scope: str, turn_ids: Sequence[int], document_id: str) -> None:
        """Note that `document_id` recorded these turns of `scope`."""
        rows = [(scope, turn_id, document_id) for turn_id in turn_ids]
        await asyncio.to_thread(
            self._write, "INSERT OR REPLACE INTO documents VALUES (?, ?, ?)", rows
        )

    async def documents(self, scope: str, turn_ids: Sequence[int]) -> list[str]:
        """The documents of `scope` that recorded any of these turns (each once)."""
        return await asyncio.to_thread(self._documents, scope, list(turn_ids))

    async def drop_turns(self, scope: str, turn_ids: Sequence[int]) -> None:
        rows = [(scope, turn_id) for turn_id in turn_ids]
        await asyncio.to_thread(
            self._write, "DELETE FROM documents WHERE scope = ? AND turn_id = ?", rows
        )

    async def drop_scope(self, scope: str) -> None:
        await asyncio.to_thread(self._write, "DELETE FROM documents WHERE scope = ?", [(scope,)])

    def _open(self) -> None:
        with self._lock:
            if self._db is not None:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Created private before SQLite opens it; its journal files take the same mode.
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            os.chmod(self.path, 0o600)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA synchronous = FULL")
            db.execute(SCHEMA)
            self._db = db

    def _close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the document ledger is not open")
        return self._db

    def _write(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        with self._lock:
            db = self._connection()
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany(sql, rows)

    def _documents(self, scope: str, turn_ids: list[int]) -> list[str]:
        if not turn_ids:
            return []
        marks = ",".join("?" * len(turn_ids))
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    f"SELECT DISTINCT document_id FROM documents "
                    f"WHERE scope = ? AND turn_id IN ({marks}) ORDER BY document_id",
                    [scope, *turn_ids],
                )
                .fetchall()
            )
        return [row["document_id"] for row in rows]
