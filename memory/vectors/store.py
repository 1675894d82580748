"""The vector database: one file of its own (`vectors.db`, mode 0600), one row per
stored exchange, each row carrying its scope, which every query filters on.

All SQLite and numpy work runs on one worker thread of the store's own, so the event
loop never blocks and the connection and the scope cache are only touched from there.
Deletions zero what they remove (`secure_delete`) and fold the WAL back into the file,
so erased text and vectors do not linger on disk.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np

from memory.store.scalar import scalar_now
from memory.vectors.rows import (
    DimensionMismatch,
    NotFinite,
    Vector,
    VectorHit,
    VectorRow,
    normalised,
)
from memory.vectors.scan import Block, ScopeCache, top_k

T = TypeVar("T")

DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
# Rows read at a time when a scope is too large for the cache and streamed instead.
STREAM_ROWS = 8192

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- One stored exchange: `turn_id` is its first turn (the person's message) in state.db.
CREATE TABLE IF NOT EXISTS vectors (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    turn_id INTEGER NOT NULL,
    ts REAL NOT NULL,
    text TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (scope, turn_id)
);
-- Every turn an exchange spans, so deleting any of them finds its row.
CREATE TABLE IF NOT EXISTS members (
    turn_id INTEGER NOT NULL,
    vector_id INTEGER NOT NULL REFERENCES vectors(id) ON DELETE CASCADE,
    PRIMARY KEY (turn_id, vector_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS members_vector ON members(vector_id);
"""


class VectorStore:
    """Open with `await VectorStore.open(path)`; close with `await store.close()`."""

    def __init__(self, path: Path, cache_bytes: int) -> None:
        self.path = path
        self._cache = ScopeCache(cache_bytes)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kioku-vectors")
        self._db: sqlite3.Connection | None = None
        self._data_version = -1

    @classmethod
    async def open(cls, path: Path, cache_bytes: int = DEFAULT_CACHE_BYTES) -> VectorStore:
        store = cls(path, cache_bytes)
        await store._run(store._open)
        return store

    async def close(self) -> None:
        """Close the file; safe to call twice."""
        if self._db is not None:
            await self._run(self._close)
        self._pool.shutdown(wait=False)

    async def dimensions(self) -> int | None:
        """The length of the stored vectors; None until the first row is added."""
        return await self._run(self._dimensions)

    async def add(self, scope: str, rows: Sequence[VectorRow]) -> int:
        """Store `rows` in `scope`; rows already stored (same first turn) are kept as
        they are. Returns how many were new. Raises `DimensionMismatch` if the vectors
        are not as long as the ones already stored, `NotFinite` (storing none) if one
        holds NaN or an infinity."""
        return await self._run(lambda: self._add(scope, rows)) if rows else 0

    async def search(self, scope: str, vector: Vector, limit: int) -> list[VectorHit]:
        """The `limit` exchanges of `scope` nearest to `vector`, best first."""
        return await self._run(lambda: self._search(scope, vector, limit))

    async def note(self, key: str) -> str | None:
        """A value the user of the store keeps beside the vectors (what they embed)."""
        return await self._run(lambda: self._note(key))

    async def set_note(self, key: str, value: str) -> None:
        await self._run(lambda: self._set_note(key, value))

    async def count(self, scope: str) -> int:
        return await self._run(
            lambda: scalar_now(self._conn, "SELECT count(*) FROM vectors WHERE scope = ?", (scope,))
        )

    async def embedded(self, scope: str, turn_ids: Sequence[int]) -> set[int]:
        """Which of these first-turn ids are stored in `scope` already."""
        return await self._run(lambda: self._embedded(scope, turn_ids))

    async def exchanges(self, scope: str, turn_ids: Sequence[int]) -> dict[int, int]:
        """For each of these turn ids stored in `scope`, the first turn of its exchange: a
        row may also span the turn before its exchange (kept as its context), so of the
        rows holding a turn, its own is the latest that starts at or before it."""
        return await self._run(lambda: self._exchanges(scope, turn_ids))

    async def delete_scope(self, scope: str) -> int:
        """Erase every row of `scope`; returns how many went."""
        return await self._run(lambda: self._delete(scope, None))

    async def delete_turns(self, scope: str, turn_ids: Sequence[int]) -> int:
        """Erase the exchanges of `scope` that span any of `turn_ids`."""
        return await self._run(lambda: self._delete(scope, turn_ids)) if turn_ids else 0

    async def clear(self) -> None:
        """Erase every row of every scope and forget the vector length (a new model)."""
        await self._run(self._clear)

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn)

    def _open(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        db = sqlite3.connect(self.path, check_same_thread=False)
        db.row_factory = sqlite3.Row
        db.executescript(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
            "PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;"
        )
        with db:
            db.executescript(SCHEMA)
        self._db = db

    def _close(self) -> None:
        db, self._db = self._conn, None
        self._cache.clear()
        db.close()

    @property
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the vector store is closed")
        return self._db

    def _dimensions(self) -> int | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'dimensions'").fetchone()
        return int(row["value"]) if row else None

    def _note(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (f"note:{key}",))
        found = row.fetchone()
        return str(found["value"]) if found else None

    def _set_note(self, key: str, value: str) -> None:
        with self._conn as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"note:{key}", value))

    def _add(self, scope: str, rows: Sequence[VectorRow]) -> int:
        for index, row in enumerate(rows):
            if not np.isfinite(row.vector).all():
                raise NotFinite(index)
        matrix = normalised([row.vector for row in rows])
        given = matrix.shape[1]
        db = self._conn
        with db:
            stored = self._dimensions()
            if stored is None:
                db.execute("INSERT INTO meta VALUES ('dimensions', ?)", (str(given),))
            elif stored != given:
                raise DimensionMismatch(stored, given)
            ids, kept = [], []
            for index, row in enumerate(rows):
                found = db.execute(
                    "INSERT INTO vectors(scope, turn_id, ts, text, vector) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT DO NOTHING RETURNING id",
                    (scope, row.turn_ids[0], row.ts, row.text, matrix[index].tobytes()),
                ).fetchone()
                if found is None:
                    continue
                db.executemany(
                    "INSERT OR IGNORE INTO members VALUES (?, ?)",
                    [(turn, found["id"]) for turn in row.turn_ids],
                )
                ids.append(found["id"])
                kept.append(index)
        if ids:
            self._cache.append(scope, Block(np.array(ids, dtype=np.int64), matrix[kept]))
        return len(ids)

    def _search(self, scope: str, vector: Vector, limit: int) -> list[VectorHit]:
        if limit <= 0:
            return []
        query = normalised(vector)[0]
        stored = self._dimensions()
        if stored is None:
            return []
        if stored != len(query):
            raise DimensionMismatch(stored, len(query))
        ranked = top_k(self._blocks(scope, stored), query, limit)
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        rows = {
            row["id"]: row
            for row in self._conn.execute(
                f"SELECT id, turn_id, text, ts FROM vectors WHERE scope = ? AND id IN ({marks})",
                (scope, *(row_id for row_id, _ in ranked)),
            )
        }
        return [
            VectorHit(rows[row_id]["turn_id"], rows[row_id]["text"], score, rows[row_id]["ts"])
            for row_id, score in ranked
            if row_id in rows
        ]

    def _blocks(self, scope: str, dims: int) -> list[Block] | Iterator[Block]:
        """The scope's matrix: cached, read whole into the cache, or streamed if too large.
        Another process's commit (`kioku providers backfill` beside the daemon) changes
        SQLite's `data_version`, and the cache is dropped."""
        version = scalar_now(self._conn, "PRAGMA data_version")
        if version != self._data_version:
            self._cache.clear()
            self._data_version = version
        cached = self._cache.get(scope)
        if cached is not None:
            return cached
        rows = scalar_now(self._conn, "SELECT count(*) FROM vectors WHERE scope = ?", (scope,))
        if not self._cache.fits(rows * (dims * 4 + 8)):
            return self._stream(scope, dims)
        blocks = list(self._stream(scope, dims, size=max(rows, 1)))
        self._cache.put(scope, blocks)
        return blocks

    def _stream(self, scope: str, dims: int, size: int = STREAM_ROWS) -> Iterator[Block]:
        cursor = self._conn.execute(
            "SELECT id, vector FROM vectors WHERE scope = ? ORDER BY id", (scope,)
        )
        while chunk := cursor.fetchmany(size):
            ids = np.fromiter((row["id"] for row in chunk), dtype=np.int64, count=len(chunk))
            data = b"".join(row["vector"] for row in chunk)
            yield Block(ids, np.frombuffer(data, dtype=np.float32).reshape(len(chunk), dims))

    def _embedded(self, scope: str, turn_ids: Sequence[int]) -> set[int]:
        found: set[int] = set()
        for part in _parts(turn_ids):
            marks = ",".join("?" * len(part))
            found.update(
                row["turn_id"]
                for row in self._conn.execute(
                    f"SELECT turn_id FROM vectors WHERE scope = ? AND turn_id IN ({marks})",
                    (scope, *part),
                )
            )
        return found

    def _exchanges(self, scope: str, turn_ids: Sequence[int]) -> dict[int, int]:
        found: dict[int, int] = {}
        for part in _parts(turn_ids):
            marks = ",".join("?" * len(part))
            found.update(
                self._conn.execute(
                    "SELECT m.turn_id, max(v.turn_id) FROM members AS m "
                    "JOIN vectors AS v ON v.id = m.vector_id "
                    f"WHERE v.scope = ? AND m.turn_id IN ({marks}) AND v.turn_id <= m.turn_id "
                    "GROUP BY m.turn_id",
                    (scope, *part),
                ).fetchall()
            )
        return found

    def _delete(self, scope: str, turn_ids: Sequence[int] | None) -> int:
        db = self._conn
        with db:
            if turn_ids is None:
                gone = db.execute("DELETE FROM vectors WHERE scope = ?", (scope,)).rowcount
            else:
                gone = 0
                for part in _parts(turn_ids):
                    marks = ",".join("?" * len(part))
                    gone += db.execute(
                        "DELETE FROM vectors WHERE scope = ? AND id IN "
                        f"(SELECT vector_id FROM members WHERE turn_id IN ({marks}))",
                        (scope, *part),
                    ).rowcount
        self._cache.drop(scope)
        if gone:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

    def _clear(self) -> None:
        db = self._conn
        with db:
            db.execute("DELETE FROM vectors")
            db.execute("DELETE FROM meta WHERE key = 'dimensions'")
        self._cache.clear()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _parts(ids: Sequence[int], size: int = 500) -> Iterator[Sequence[int]]:
    """`ids` in pieces small enough for one statement's parameters."""
    for start in range(0, len(ids), size):
        yield ids[start : start + size]
