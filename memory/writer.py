"""The single writer of state.db: every write queues here and commits in groups.

One task drains the queue into one transaction (many appends, one COMMIT, one
fsync) and resolves each caller's future only after that COMMIT returned, so an
awaited write is durable. Consecutive appends become one `executemany` with ids
chosen here (max + 1, ...) inside the IMMEDIATE transaction, which is safe even
with a second process writing, since that transaction holds the write lock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiosqlite

from memory import schema
from memory.records import NewMessage, to_epoch
from memory.segment import segment

T = TypeVar("T")
# (session id, turn, its segmented text if already computed)
Append = tuple[int, NewMessage, str | None]
Op = Callable[[aiosqlite.Connection], Awaitable[T]]

MAX_BATCH = 5000
_INSERT_MESSAGE = (
    "INSERT INTO messages(id, session_id, role, content, speaker_id, ts, tool_name, "
    "tool_arguments, tool_result, platform_message_id) VALUES (?,?,?,?,?,?,?,?,?,?)"
)


class UnknownSession(LookupError):
    """An append or update named a session id that is not in state.db."""


@dataclass
class _Job:
    future: asyncio.Future[Any]
    append: Append | None = None
    op: Op[Any] | None = None


class GroupCommitWriter:
    """Owns the write connection; `append` and `write` are the only ways to change the db."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db
        self._queue: asyncio.Queue[_Job | None] = asyncio.Queue()
        self._task = asyncio.create_task(self._loop(), name="kioku-store-writer")

    async def append(self, session_id: int, message: NewMessage) -> int:
        """Queue one turn; returns its id once the transaction holding it is durable.

        The text is segmented here, on the event loop (microseconds), so that on two
        cores it overlaps with the writer thread's SQLite work instead of adding to it.
        """
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Job(future, append=(session_id, message, segment(message.content))))
        return await future

    async def write(self, op: Op[T]) -> T:
        """Run `op` inside the next group-committed transaction; return what it returns."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Job(future, op=op))
        return await future

    async def close(self) -> None:
        """Commit everything already queued, then stop."""
        self._queue.put_nowait(None)
        await self._task

    async def _loop(self) -> None:
        stopping = False
        while not stopping:
            first = await self._queue.get()
            batch = [] if first is None else [first]
            stopping = first is None
            while len(batch) < MAX_BATCH and not self._queue.empty():
                job = self._queue.get_nowait()
                if job is None:
                    stopping = True
                else:
                    batch.append(job)
            if batch:
                await self._commit(batch)

    async def _commit(self, batch: list[_Job]) -> None:
        """Apply `batch` in one transaction; on failure retry each job alone to isolate it."""
        try:
            await self.db.execute("BEGIN IMMEDIATE")
            results = await self._apply(batch)
            await self.db.execute("COMMIT")
        except Exception as exc:
            if self.db.in_transaction:
                await self.db.execute("ROLLBACK")
            if len(batch) > 1:
                for job in batch:
                    await self._commit([job])
            elif not batch[0].future.done():
                batch[0].future.set_exception(_explain(exc, batch[0]))
            return
        for job, result in zip(batch, results, strict=True):
            if not job.future.done():
                job.future.set_result(result)

    async def _apply(self, batch: list[_Job]) -> list[Any]:
        results: list[Any] = []
        index = 0
        while index < len(batch):
            if (op := batch[index].op) is not None:
                results.append(await op(self.db))
                index += 1
                continue
            appends = []
            while index < len(batch) and (append := batch[index].append) is not None:
                appends.append(append)
                index += 1
            results += await insert_messages(self.db, appends)
        return results


async def insert_messages(db: aiosqlite.Connection, appends: list[Append]) -> list[int]:
    """Store and index turns with one `executemany` each; call inside a write transaction."""
    (row,) = await db.execute_fetchall("SELECT coalesce(max(id), 0) FROM messages")
    first = int(row[0]) + 1
    now = time.time()
    rows = [
        (
            first + offset,
            session_id,
            msg.role,
            msg.content,
            msg.speaker,
            now if msg.ts is None else to_epoch(msg.ts),
            msg.tool_name,
            msg.tool_arguments,
            msg.tool_result,
            msg.platform_message_id,
        )
        for offset, (session_id, msg, _) in enumerate(appends)
    ]
    await db.executemany(_INSERT_MESSAGE, rows)
    # A generator: text not segmented yet is segmented in the connection's thread.
    index_rows = (
        (row[0], segment(row[3]) if body is None else body, row[1])
        for row, (_, _, body) in zip(rows, appends, strict=True)
    )
    await db.executemany(schema.INDEX_MESSAGE, index_rows)
    return [row[0] for row in rows]


def _explain(exc: Exception, job: _Job) -> Exception:
    """Turn a foreign-key failure of an append into an error naming what was missing."""
    if job.append is not None and isinstance(exc, aiosqlite.IntegrityError):
        session_id, message, _ = job.append
        if "FOREIGN KEY" in str(exc):
            speaker = f" or no person {message.speaker!r}" if message.speaker else ""
            return UnknownSession(
                f"cannot append to session {session_id}: no such session{speaker}"
            )
    return exc
