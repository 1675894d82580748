"""The write-ahead log of state.db: synced after each commit, checkpointed in the background.

The writer connections run with `synchronous=NORMAL`, so a COMMIT hands its WAL
frames to the OS and returns (safe from `kill -9`, not yet from a power cut).
`WalSyncer` then fsyncs the WAL file and only after that resolves the futures of
every transaction committed before the fsync began, so an awaited write is as
durable as with `synchronous=FULL`; meanwhile the writer already runs the next
transaction. SQLite still syncs the WAL before each checkpoint and the database
after it, which keeps the file sound. (A reader may see a turn a moment before its
append returns.)

`Checkpointer` copies the WAL back into the database on a connection of its own,
so the writer never stalls on it. A checkpoint that fails (a full disk: the database
file cannot grow) is logged and tried again later; the WAL keeps every commit meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiosqlite

from config.loggers import get_logger

log = get_logger("kioku.store")

CHECKPOINT_EVERY = 8  # WAL syncs between background checkpoints
WAL_RESTART_FRAMES = 8192  # 32 MiB of 4 KiB pages
TRUNCATE_ATTEMPTS = 3  # each waits up to the busy timeout for readers

Done = list[tuple[asyncio.Future[Any], Any]]


class NotDurable(OSError):
    """The WAL could not be synced to disk: later writes are refused until kioku restarts."""


class WalSyncer:
    """Fsyncs the WAL after commits and only then resolves their futures.

    Every transaction committed while an fsync runs waits for the next one, so one
    fsync covers all of them. The file is opened once and kept: SQLite never locks
    the WAL file itself (its locks live in the -shm file), so our descriptor cannot
    disturb them, and the WAL is only deleted when the last connection closes.
    """

    def __init__(self, wal: Path, checkpointer: Checkpointer, sync: Callable[[int], None]) -> None:
        self.path = wal
        self.failure: NotDurable | None = None
        self._checkpointer = checkpointer
        self._sync = sync
        self._fd: int | None = None
        self._waiting: Done = []
        self._ready = asyncio.Event()
        self._closing = False
        self._task = asyncio.create_task(self._loop(), name="kioku-store-wal-sync")

    def committed(self, done: Done) -> None:
        """Resolve these futures with their results once the WAL is on disk."""
        self._waiting += done
        self._ready.set()

    async def close(self) -> None:
        self._closing = True
        self._ready.set()
        await self._task
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    async def _loop(self) -> None:
        while self._waiting or not self._closing:
            if not self._waiting:
                self._ready.clear()
                await self._ready.wait()
                continue
            done, self._waiting = self._waiting, []
            if self.failure is None:
                try:
                    await asyncio.to_thread(self._fsync)
                except OSError as exc:
                    self.failure = NotDurable(
                        f"state.db's write-ahead log {self.path} could not be synced to disk "
                        f"({exc}); writes since the last sync may be lost. Check the disk, "
                        "then restart kioku"
                    )
            for future, result in done:
                if future.done():
                    continue
                if self.failure is None:
                    future.set_result(result)
                else:
                    future.set_exception(self.failure)
            if self.failure is None:
                self._checkpointer.synced()

    def _fsync(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        self._sync(self._fd)


class Checkpointer:
    """Copies the WAL into the database on its own connection, beside the writer.

    A PASSIVE checkpoint never blocks the writer, but copies only what was
    committed when it began, so under steady load the WAL would never be fully
    copied and never start over. When it has grown past `WAL_RESTART_FRAMES`, the
    writer calls `catch_up` between two transactions: it waits for the checkpoint
    under way and copies the little that is left, and its next transaction then
    writes the WAL from the start again.
    """

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db
        self.restart_wanted = False
        self._syncs = 0
        self._due = asyncio.Event()
        self._lock = asyncio.Lock()
        self._closing = False
        self._task = asyncio.create_task(self._loop(), name="kioku-store-checkpoint")

    def synced(self) -> None:
        self._syncs += 1
        if self._syncs >= CHECKPOINT_EVERY:
            self._due.set()

    async def catch_up(self, writer: aiosqlite.Connection) -> None:
        """Finish the checkpoint on the writer's connection, between its transactions."""
        async with self._lock:
            copied = await _checkpoint_or_log(writer)
        self.restart_wanted = copied is not None and bool(copied[0])

    async def truncate(self) -> bool:
        """Copy all of the WAL into the database and cut the file to zero bytes, so no
        frame of it keeps what a deletion removed. Waits (the busy timeout, a few times)
        for readers still on old frames; False if they never let go, or on an error."""
        async with self._lock:
            for _ in range(TRUNCATE_ATTEMPTS):
                try:
                    (row,) = await self.db.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error as exc:
                    log.warning("wal_truncate_failed", error=str(exc))
                    return False
                if not row["busy"]:
                    return True
        log.warning("wal_truncate_busy", hint="readers kept the log; the next checkpoint cuts it")
        return False

    async def close(self) -> None:
        self._closing = True
        self._due.set()
        await self._task

    async def _loop(self) -> None:
        while True:
            await self._due.wait()
            if self._closing:
                return
            self._due.clear()
            self._syncs = 0
            async with self._lock:
                copied = await _checkpoint_or_log(self.db)
            if copied is not None:
                busy, frames, _ = copied
                self.restart_wanted |= not busy and frames > WAL_RESTART_FRAMES


async def _checkpoint_or_log(db: aiosqlite.Connection) -> tuple[int, int, int] | None:
    """A checkpoint, or None when it failed: committed work is safe in the WAL either way."""
    try:
        return await checkpoint(db)
    except sqlite3.Error as exc:
        log.warning(
            "checkpoint_failed",
            error=str(exc),
            hint="state.db could not take in its write-ahead log (is the disk full?); "
            "commits are kept in the log and copied later",
        )
        return None


async def checkpoint(db: aiosqlite.Connection) -> tuple[int, int, int]:
    """(busy, frames in the WAL, frames copied), as `PRAGMA wal_checkpoint` reports them."""
    (row,) = await db.execute_fetchall("PRAGMA wal_checkpoint(PASSIVE)")
    return int(row["busy"]), int(row["log"]), int(row["checkpointed"])
