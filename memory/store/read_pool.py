"""Plain sqlite3 read connections, for reads that run many statements with Python between.

An aiosqlite statement is a hop to its connection's thread and back through the
event loop; a search takes four or five of them, and on two cores those hops cost
about as much as its SQL. `ReadPool.run(fn)` instead runs all of `fn` (statements and
the Python between them) in one hop, on a thread of the pool, with a connection of
its own: the event loop is never blocked, and the work is one hand-off.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from memory.store import schema

T = TypeVar("T")


class ReadPool:
    """`size` read-only connections, opened when first needed, each used by one thread at
    a time."""

    def __init__(self, path: Path, size: int, busy_timeout_s: float) -> None:
        self.path = path
        self._busy_timeout_s = busy_timeout_s
        self._executor = ThreadPoolExecutor(size, thread_name_prefix="kioku-store-read")
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._opened: list[sqlite3.Connection] = []

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, fn)

    async def close(self) -> None:
        """Wait for the reads under way, then close every connection."""
        await asyncio.get_running_loop().run_in_executor(None, self._executor.shutdown)
        for db in self._opened:
            db.close()

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        try:
            db = self._idle.get_nowait()
        except queue.Empty:
            db = self._open()
        try:
            return fn(db)
        finally:
            self._idle.put(db)

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path, isolation_level=None, timeout=self._busy_timeout_s, check_same_thread=False
        )
        db.row_factory = sqlite3.Row
        for pragma in schema.CONNECTION_PRAGMAS:
            db.execute(pragma)
        db.execute("PRAGMA query_only = 1")
        self._opened.append(db)
        return db
