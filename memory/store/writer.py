"""The single writer of state.db: every write queues here, commits in groups, returns once durable.

Group commit: one task drains the queue into transactions (many appends, one
COMMIT, one WAL sync; see `memory.store.wal` for how the sync overlaps the next
transaction). Ids are chosen here (max + 1, ...) inside the IMMEDIATE transaction,
which is safe even with a second process writing, since that transaction holds the
write lock.

Every write runs on one plain sqlite3 connection, alone in a thread of its own: a
whole transaction (BEGIN, the turns and their index rows, or the ops, then COMMIT)
is one call, with each table's appended rows in one multi-row INSERT. On two cores
that matters: every round trip to a connection thread, and every row `executemany`
binds, hands the GIL back and forth with the event loop, which is busy with the
next group's turns. Ops (`write(op)`) are plain functions of that connection, run
in that thread, in transactions of their own.

The writer takes at most half of what is queued (at least `SPLIT`): with many
conversations waiting at once, one group's SQLite work then overlaps the next
group's Python work on the event loop, instead of the two taking turns. And while
one group of appends commits, the next is already handed to the writer thread, so
that thread goes from one transaction to the next without waiting for the event loop
to notice the first is done (that wait was a sixth of the writer's time under load).
Other writes wait until the appends before them have committed, so writes still
take effect in the order they were queued.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from memory.store import schema
from memory.store.busy import optimize
from memory.store.errors import StoreFull, UnknownSession, is_disk_full, store_error
from memory.store.records import NewMessage, to_epoch
from memory.store.scalar import scalar_now
from memory.store.segment import stored_form
from memory.store.usage import insert_usage
from memory.store.wal import Checkpointer, Done, WalSyncer

T = TypeVar("T")
# (session id, turn, what `turns.body` keeps for it: see `prepared`)
Append = tuple[int, NewMessage, str | None]
Op = Callable[[sqlite3.Connection], T]

MAX_BATCH = 5000
SPLIT = 128
CHUNK = 64  # turns per INSERT statement
# Index rows per INSERT statement: FTS5 writes out a segment at the end of each
# multi-row statement, so a transaction's index rows go in as one statement.
INDEX_CHUNK = 1000


@dataclass(slots=True)
class _Job:
    future: asyncio.Future[Any]
    append: Append | None = None
    op: Op[Any] | None = None


class GroupCommitWriter:
    """Owns the write connection; `append` and `write` are the only ways to change the db."""

    def __init__(
        self,
        path: Path,
        checkpointer: aiosqlite.Connection,
        *,
        sync: Callable[[int], None] = os.fsync,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._connection = _WriteConnection(path)
        self._queue: list[_Job] = []
        self._wake = asyncio.Event()
        self._stopping = False
        self._checkpointer = Checkpointer(checkpointer)
        self._syncer = WalSyncer(path.with_name(path.name + "-wal"), self._checkpointer, sync)
        self._task = asyncio.create_task(self._run(), name="kioku-store-writer")

    async def append(self, session_id: int, message: NewMessage) -> int:
        """Queue one turn; returns its id once the transaction holding it is durable.

        The text is segmented here, on the event loop, so that on two cores it
        overlaps with the writer thread's SQLite work instead of adding to it.
        """
        future: asyncio.Future[int] = self._loop.create_future()
        self._queue.append(_Job(future, append=prepared(session_id, message)))
        self._wake.set()
        return await future

    async def write(self, op: Op[T]) -> T:
        """Run `op` inside the next group-committed transaction; return what it returns."""
        future: asyncio.Future[T] = self._loop.create_future()
        self._queue.append(_Job(future, op=op))
        self._wake.set()
        return await future

    async def truncate_wal(self) -> bool:
        """See `Checkpointer.truncate`."""
        return await self._checkpointer.truncate()

    async def close(self) -> None:
        """Commit and sync everything already queued, then stop."""
        self._stopping = True
        self._wake.set()
        await self._task

    async def _run(self) -> None:
        running: deque[asyncio.Task[Done]] = deque()
        try:
            while self._queue or running or not self._stopping:
                if not self._queue:
                    if running:
                        self._syncer.committed(await running.popleft())
                        continue
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                take = batch_size(len(self._queue))
                batch = self._queue[:take]
                del self._queue[:take]
                if self._syncer.failure is not None:
                    for job in batch:
                        _fail(job, self._syncer.failure)
                    continue
                appends = all(job.append is not None for job in batch)
                if not appends or self._checkpointer.restart_wanted:
                    while running:
                        self._syncer.committed(await running.popleft())
                if self._checkpointer.restart_wanted:
                    await self._checkpointer.catch_up()
                if not appends:
                    self._syncer.committed(await self._commit(batch))
                    continue
                running.append(asyncio.create_task(self._commit_appends(batch)))
                if len(running) > 1:
                    self._syncer.committed(await running.popleft())
        finally:
            while running:
                self._syncer.committed(await running.popleft())
            await self._syncer.close()
            await self._checkpointer.close()
            await self._connection.close()

    async def _commit(self, batch: list[_Job]) -> Done:
        """Commit runs of appends and runs of ops, in order, each run in one transaction."""
        done: Done = []
        start = 0
        while start < len(batch):
            is_op = batch[start].op is not None
            end = start
            while end < len(batch) and (batch[end].op is not None) == is_op:
                end += 1
            run = batch[start:end]
            done += await (self._commit_ops(run) if is_op else self._commit_appends(run))
            start = end
        return done

    async def _commit_appends(self, jobs: list[_Job]) -> Done:
        """One transaction for `jobs`; on failure retry each alone to isolate the bad one."""
        try:
            ids = await self._connection.run(
                insert_messages, [job.append for job in jobs if job.append]
            )
        except Exception as exc:
            return await self._isolate(jobs, exc, self._commit_appends)
        return [(job.future, id_) for job, id_ in zip(jobs, ids, strict=True)]

    async def _commit_ops(self, jobs: list[_Job]) -> Done:
        try:
            results = await self._connection.run(operated, [job.op for job in jobs if job.op])
        except Exception as exc:
            return await self._isolate(jobs, exc, self._commit_ops)
        return [(job.future, result) for job, result in zip(jobs, results, strict=True)]

    async def _isolate(
        self,
        jobs: list[_Job],
        exc: Exception,
        commit: Callable[[list[_Job]], Awaitable[Done]],
    ) -> Done:
        """A failed job gets its exception at once (it has nothing to wait for)."""
        if len(jobs) == 1:
            _fail(jobs[0], _explain(exc, jobs[0], self._connection.path))
            return []
        done: Done = []
        for job in jobs:
            done += await commit([job])
        return done


def batch_size(queued: int) -> int:
    """How many queued jobs the next transaction takes."""
    return min(queued, max(SPLIT, queued // 2), MAX_BATCH)


class _WriteConnection:
    """The writer's plain sqlite3 connection, alone in its thread: one hop per transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="kioku-store-writer")
        self._db: sqlite3.Connection | None = None

    async def run(
        self, body: Callable[[sqlite3.Connection, list[Any]], list[Any]], jobs: list[Any]
    ) -> list[Any]:
        """`body(db, jobs)` inside one IMMEDIATE transaction, in the writer's thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._transaction, body, jobs)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close)
        self._executor.shutdown()

    def _transaction(
        self, body: Callable[[sqlite3.Connection, list[Any]], list[Any]], jobs: list[Any]
    ) -> list[Any]:
        db = self._db or self._open()
        db.execute("BEGIN IMMEDIATE")
        try:
            results = body(db, jobs)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return results

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path, isolation_level=None, timeout=schema.BUSY_TIMEOUT_S, cached_statements=256
        )
        db.row_factory = sqlite3.Row
        for pragma in (*schema.CONNECTION_PRAGMAS, *schema.WRITER_PRAGMAS):
            db.execute(pragma)
        self._db = db
        return db

    def _close(self) -> None:
        if self._db is not None:
            optimize(self._db)
            self._db.close()
            self._db = None


def operated(db: sqlite3.Connection, ops: list[Op[Any]]) -> list[Any]:
    """Run `ops` in order; what each returned."""
    return [op(db) for op in ops]


def prepared(session_id: int, message: NewMessage) -> Append:
    """A turn ready to store: its indexed form is computed here, before the transaction."""
    return session_id, message, stored_form(message.content)


def insert_statements(first: int, appends: list[Append]) -> Iterator[tuple[str, list[Any]]]:
    """The INSERTs storing and indexing `appends` as ids `first`, `first + 1`, ..."""
    now = time.time()
    codes = schema.ROLE_CODES
    turns: list[Any] = []
    index: list[Any] = []
    for offset, (session_id, msg, body) in enumerate(appends):
        id_ = first + offset
        ts = now if msg.ts is None else to_epoch(msg.ts)
        turns += (id_, session_id, codes[msg.role], msg.content, msg.speaker, ts, msg.tool_name)
        turns += (msg.tool_arguments, msg.tool_result, msg.platform_message_id, body)
        index += (id_, msg.content if body is None else body, session_id)
    for start in range(0, len(appends), CHUNK):
        rows = min(CHUNK, len(appends) - start)
        span = slice(start * schema.TURN_VALUES, (start + rows) * schema.TURN_VALUES)
        yield schema.insert_turns(rows), turns[span]
    for start in range(0, len(appends), INDEX_CHUNK):
        rows = min(INDEX_CHUNK, len(appends) - start)
        span = slice(start * schema.INDEX_VALUES, (start + rows) * schema.INDEX_VALUES)
        yield schema.index_turns(rows), index[span]


def insert_messages(db: sqlite3.Connection, appends: list[Append]) -> list[int]:
    """Store and index turns inside a write transaction (appends, and imports' ops), with
    the model calls that ride them."""
    first = scalar_now(db, "SELECT coalesce(max(id), 0) FROM turns") + 1
    for sql, params in insert_statements(first, appends):
        db.execute(sql, params)
    calls = [record for _, message, _ in appends for record in message.usage]
    if calls:
        insert_usage(db, calls)
    return list(range(first, first + len(appends)))


def _fail(job: _Job, exc: BaseException) -> None:
    if not job.future.done():
        job.future.set_exception(exc)


def _explain(exc: Exception, job: _Job, path: Path) -> Exception:
    """Turn a full disk, a lock held too long, or a foreign-key failure of an append, into an
    error saying what happened and what to do; any other SQLite failure into the memory
    error of its kind (`store_error`, which also names a busy lock)."""
    if is_disk_full(exc):
        return StoreFull(
            f"the disk holding {path} is full, so kioku cannot store anything; free some "
            "space there and kioku carries on by itself"
        )
    if job.append is not None and isinstance(exc, sqlite3.IntegrityError):
        session_id, message, _ = job.append
        if "FOREIGN KEY" in str(exc):
            speaker = f" or no person {message.speaker!r}" if message.speaker else ""
            return UnknownSession(
                f"cannot append to session {session_id}: no such session{speaker}"
            )
    if isinstance(exc, sqlite3.Error):
        return store_error(exc, path)
    return exc
