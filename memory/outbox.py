"""A durable queue of work for services outside kioku, in a database file of its own.

Each job belongs to a consumer (a name), concerns one scope, and is a kind plus a JSON
payload; it stays until its consumer says it is done, so a restart or a crash loses
nothing that was queued. Jobs that copy turns name them (`turn_ids`), so a deletion of
history can take the copies still waiting (`drop_turns`, `drop_scope`) before they
leave. The file is private (0600) and deletes securely: a dropped job's text does not
stay in its pages.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    consumer TEXT NOT NULL,
    scope TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    turn_ids TEXT NOT NULL DEFAULT '[]',
    bounded INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    due REAL NOT NULL,
    last_error TEXT
);
CREATE INDEX IF NOT EXISTS jobs_consumer ON jobs(consumer, id);
CREATE TABLE IF NOT EXISTS lost (
    consumer TEXT PRIMARY KEY,
    jobs INTEGER NOT NULL
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class Job:
    id: int
    consumer: str
    scope: str
    kind: str
    payload: dict[str, Any]
    turn_ids: tuple[int, ...]
    attempts: int
    due: float
    """When it may be tried (epoch seconds): queued now, or after a failure's pause."""


@dataclass(frozen=True)
class Backlog:
    """A consumer's queue as `kioku status` shows it: waiting jobs, those that failed at
    least once, and the jobs given up (queue full, or out of attempts) since the start."""

    waiting: int
    failing: int
    lost: int


class Outbox:
    """One connection to the queue's file; open with `await Outbox.open(path)`."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    @classmethod
    async def open(cls, path: Path) -> Outbox:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        db = await aiosqlite.connect(path, isolation_level=None)
        db.row_factory = sqlite3.Row
        try:
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA secure_delete = ON")
            await db.execute("PRAGMA busy_timeout = 30000")
            await db.executescript(SCHEMA)
        except BaseException:
            await db.close()
            raise
        return cls(db)

    async def close(self) -> None:
        await self._db.close()

    async def put(
        self,
        consumer: str,
        scope: str,
        kind: str,
        payload: dict[str, Any],
        *,
        turn_ids: Sequence[int] = (),
        limit: int | None = None,
    ) -> bool:
        """Queue a job, due now. With `limit`, a consumer already holding that many bounded
        jobs refuses it (False, counted as lost); jobs without a limit are always taken."""
        if limit is not None and await self._bounded(consumer) >= limit:
            await self._lose(consumer, 1)
            return False
        await self._db.execute(
            "INSERT INTO jobs(consumer, scope, kind, payload, turn_ids, bounded, due) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                consumer,
                scope,
                kind,
                json.dumps(payload, ensure_ascii=False),
                json.dumps(list(turn_ids)),
                limit is not None,
                time.time(),
            ),
        )
        return True

    async def oldest(self, consumer: str, limit: int = 20) -> list[Job]:
        """The consumer's first jobs in the order they were queued (the first may wait out
        a failure's pause: see `Job.due`), so a consumer can keep them in order."""
        async with self._db.execute(
            "SELECT id, consumer, scope, kind, payload, turn_ids, attempts, due FROM jobs "
            "WHERE consumer = ? ORDER BY id LIMIT ?",
            (consumer, limit),
        ) as cursor:
            rows = await cursor.fetchall()
        return [
            Job(
                row["id"],
                row["consumer"],
                row["scope"],
                row["kind"],
                json.loads(row["payload"]),
                tuple(json.loads(row["turn_ids"])),
                row["attempts"],
                row["due"],
            )
            for row in rows
        ]

    async def done(self, job: Job) -> None:
        await self._db.execute("DELETE FROM jobs WHERE id = ?", (job.id,))

    async def retry(self, job: Job, after: float, error: str) -> None:
        """Try the job again `after` seconds from now; `error` says why it failed."""
        await self._db.execute(
            "UPDATE jobs SET attempts = attempts + 1, due = ?, last_error = ? WHERE id = ?",
            (time.time() + after, error[:500], job.id),
        )

    async def give_up(self, job: Job) -> None:
        """Drop a job that will not succeed, counting it as lost."""
        await self.done(job)
        await self._lose(job.consumer, 1)

    async def drop_scope(self, scope: str, consumer: str | None = None) -> int:
        """Take every waiting job of `scope` (of one consumer, or all); how many went."""
        query = "DELETE FROM jobs WHERE scope = ?"
        params: tuple[Any, ...] = (scope,)
        if consumer is not None:
            query, params = query + " AND consumer = ?", (scope, consumer)
        cursor = await self._db.execute(query, params)
        return cursor.rowcount

    async def drop_turns(self, scope: str, turn_ids: Sequence[int]) -> int:
        """Take the waiting jobs of `scope` that copy any of `turn_ids`; how many went."""
        if not turn_ids:
            return 0
        cursor = await self._db.execute(
            "DELETE FROM jobs WHERE scope = ? AND EXISTS (SELECT 1 FROM json_each(jobs.turn_ids) "
            "WHERE value IN (SELECT value FROM json_each(?)))",
            (scope, json.dumps(list(turn_ids))),
        )
        return cursor.rowcount

    async def backlog(self, consumer: str) -> Backlog:
        async with self._db.execute(
            "SELECT count(*) AS queued, count(*) FILTER (WHERE attempts > 0) AS failing, "
            "(SELECT coalesce(sum(jobs), 0) FROM lost WHERE consumer = ?1) AS lost "
            "FROM jobs WHERE consumer = ?1",
            (consumer,),
        ) as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return Backlog(int(row["queued"]), int(row["failing"]), int(row["lost"]))

    async def _bounded(self, consumer: str) -> int:
        async with self._db.execute(
            "SELECT count(*) AS bounded FROM jobs WHERE consumer = ? AND bounded", (consumer,)
        ) as cursor:
            row = await cursor.fetchone()
        return 0 if row is None else int(row["bounded"])

    async def _lose(self, consumer: str, count: int) -> None:
        await self._db.execute(
            "INSERT INTO lost(consumer, jobs) VALUES (?, ?) "
            "ON CONFLICT(consumer) DO UPDATE SET jobs = jobs + excluded.jobs",
            (consumer, count),
        )
