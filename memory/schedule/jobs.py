"""A person's scheduled jobs as state.db keeps them: made, listed, cancelled, run now.

A job belongs to one person; every read or change names the person, and a job of
someone else is answered exactly as a job that does not exist. Ids are AUTOINCREMENT,
so a cancelled job's id never comes back as a newer job. A job is "live" while it has
a next run or a run still owed; a job whose last run was delivered goes away.

The runs (claiming due jobs, the delivery ledger) are in `memory.schedule.runs`; the
names the daemon needs are re-exported here with the rest of the jobs API.
"""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from dataclasses import dataclass
from datetime import datetime

import aiosqlite

from memory.schedule.records import (
    JOB_COLUMNS,
    Job,
    NewJob,
    NoSuchJob,
    Run,
    Target,
    TooManyJobs,
    job_from_row,
)
from memory.schedule.runs import (
    begin_attempt,
    claim_due,
    mark_failed,
    mark_sent,
    next_wake,
    owed_runs,
    problems,
    unconfirmed_runs,
)
from memory.schedule.timezones import NoSuchPerson
from memory.schedule.timing import BadSchedule, first_run, local_time, zone_named
from memory.store.database import Store
from memory.store.records import to_epoch
from memory.store.scalar import scalar, scalar_now

__all__ = [
    "BadSchedule",
    "Changes",
    "Job",
    "JobPage",
    "NewJob",
    "NoSuchJob",
    "Run",
    "Target",
    "TooManyJobs",
    "begin_attempt",
    "cancel_job",
    "changes",
    "claim_due",
    "count_jobs",
    "create_job",
    "get_job",
    "list_jobs",
    "mark_failed",
    "mark_sent",
    "next_wake",
    "owed_runs",
    "page_of_jobs",
    "problems",
    "run_now",
    "unconfirmed_runs",
]

MAX_ID = 2**63 - 1
# A job still counts (against the limit, in listings) while a run of it is owed.
LIVE = (
    "(next_run IS NOT NULL OR EXISTS("
    "SELECT 1 FROM job_runs WHERE job_runs.job_id = jobs.id AND sent_at IS NULL))"
)


class Changes:
    """Tells the scheduler that jobs changed. One waiter (the scheduler): a notify while
    it is not waiting is kept, so its next `wait` returns at once."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()

    async def wait(self, timeout: float | None) -> bool:  # noqa: ASYNC109 (the scheduler's sleep)
        """True when notified (now or since the last wait), False after `timeout` seconds."""
        if not self._event.is_set():
            try:
                await asyncio.wait_for(self._event.wait(), timeout)
            except TimeoutError:
                return False
        self._event.clear()
        return True


_changes: weakref.WeakKeyDictionary[Store, Changes] = weakref.WeakKeyDictionary()


def changes(store: Store) -> Changes:
    """The one `Changes` of `store` (made on first use)."""
    found = _changes.get(store)
    if found is None:
        found = _changes[store] = Changes()
    return found


async def create_job(store: Store, new: NewJob, *, now: datetime, max_jobs: int) -> Job:
    """Store `new` with its first run; `TooManyJobs` past `max_jobs` live jobs of the person,
    `BadSchedule` for an `until` before the first run, `NoSuchPerson` for no such person."""
    first = first_run(new.when, now)
    _check_until(new, first, now)

    async def op(db: aiosqlite.Connection) -> int:
        async with db.execute("SELECT 1 FROM persons WHERE id = ?", (new.person,)) as cursor:
            if await cursor.fetchone() is None:
                raise NoSuchPerson(f"no person {new.person!r}; `kioku people list` shows them")
        live = await scalar(
            db, f"SELECT count(*) FROM jobs WHERE person_id = ? AND {LIVE}", (new.person,)
        )
        if live >= max_jobs:
            raise TooManyJobs(
                f"{new.person} has {live} reminders and scheduled tasks, the most allowed "
                "(schedule.max_jobs_per_person); cancel one (list them for the ids), then "
                "send this again"
            )
        target = new.target
        cursor = await db.execute(
            "INSERT INTO jobs(person_id, name, kind, spec, timezone, text, prompt, platform, "
            "chat, thread, chat_kind, identity, next_run, until, remaining, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                new.person,
                new.name,
                new.when.kind,
                new.when.spec,
                new.when.timezone,
                new.text,
                new.prompt,
                target.platform,
                target.chat,
                target.thread,
                target.chat_kind,
                target.identity,
                to_epoch(first),
                None if new.until is None else to_epoch(new.until),
                new.count,
                to_epoch(now),
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    job_id = await store.write(op)
    changes(store).notify()
    return await get_job(store, job_id, new.person)


def _check_until(new: NewJob, first: datetime, now: datetime) -> None:
    """`BadSchedule` for an `until` that has passed or comes before the first run."""
    if new.until is None:
        return
    zone = zone_named(new.when.timezone)
    until = local_time(new.until, zone)
    if new.until <= now:
        raise BadSchedule(
            f"until {until} has passed; send a future until, or none to repeat until cancelled"
        )
    if new.until < first:
        raise BadSchedule(
            f"until {until} is before the first run ({local_time(first, zone)}); send a "
            "later until, or none"
        )


async def list_jobs(store: Store, person: str | None) -> list[Job]:
    """`person`'s live jobs (None: everyone's, for the owner), the next to run first."""
    where = f"{LIVE}" + ("" if person is None else " AND person_id = ?")
    params: tuple[str, ...] = () if person is None else (person,)

    def read(db: sqlite3.Connection) -> list[Job]:
        rows = db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY next_run IS NULL, next_run, id",
            params,
        ).fetchall()
        return [job_from_row(row) for row in rows]

    return await store.read(read)


@dataclass(frozen=True)
class JobPage:
    """One page of a person's live jobs, the next to run first, and how many there are."""

    jobs: list[Job]
    total: int


async def page_of_jobs(
    store: Store, person: str, *, group: tuple[str, str] | None, offset: int, limit: int
) -> JobPage:
    """`limit` of `person`'s live jobs from the `offset`-th on; with `group` (platform, chat),
    only those made for that group chat. An offset past the end gives no jobs."""
    where = f"{LIVE} AND person_id = ?"
    params: tuple[str, ...] = (person,)
    if group is not None:
        where += " AND chat_kind = 'group' AND platform = ? AND chat = ?"
        params += group

    def read(db: sqlite3.Connection) -> JobPage:
        total = scalar_now(db, f"SELECT count(*) FROM jobs WHERE {where}", params)
        if offset >= total or limit < 1:
            return JobPage([], total)
        rows = db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where} "
            "ORDER BY next_run IS NULL, next_run, id LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return JobPage([job_from_row(row) for row in rows], total)

    return await store.read(read)


async def count_jobs(store: Store) -> int:
    """How many live jobs there are, everyone's (`kioku status`), without reading them."""
    return await store.read(lambda db: scalar_now(db, f"SELECT count(*) FROM jobs WHERE {LIVE}"))


async def get_job(store: Store, job_id: int, person: str | None) -> Job:
    """Job `job_id` if it is `person`'s (None: anyone's); `NoSuchJob` otherwise."""

    if not _storable(job_id):
        raise _no_such_job(job_id)

    def read(db: sqlite3.Connection) -> Job | None:
        row = db.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else job_from_row(row)

    found = await store.read(read)
    if found is None or (person is not None and found.person != person):
        raise _no_such_job(job_id)
    return found


async def cancel_job(store: Store, job_id: int, person: str | None) -> Job:
    """Delete job `job_id` of `person` (None: anyone's) with its owed runs; returns it."""

    async def op(db: aiosqlite.Connection) -> Job:
        job = await _job_in(db, job_id, person)
        await db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
        return job

    job = await store.write(op)
    changes(store).notify()
    return job


async def run_now(store: Store, job_id: int, now: datetime) -> Job:
    """Make job `job_id` due at `now` (the owner's `kioku schedule run`, for testing);
    its later runs follow its schedule as before."""

    async def op(db: aiosqlite.Connection) -> Job:
        await _job_in(db, job_id, None)
        await db.execute("UPDATE jobs SET next_run = ? WHERE id = ?", (to_epoch(now), job_id))
        return await _job_in(db, job_id, None)

    job = await store.write(op)
    changes(store).notify()
    return job


async def _job_in(db: aiosqlite.Connection, job_id: int, person: str | None) -> Job:
    if not _storable(job_id):
        raise _no_such_job(job_id)
    async with db.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)) as cursor:
        row = await cursor.fetchone()
    if row is None or (person is not None and row["person_id"] != person):
        raise _no_such_job(job_id)
    return job_from_row(row)


def _storable(job_id: int) -> bool:
    """Whether `job_id` can be an id at all (SQLite's integers are 64-bit): any other is
    a job that does not exist, not an error of the database."""
    return 1 <= job_id <= MAX_ID


def _no_such_job(job_id: int) -> NoSuchJob:
    return NoSuchJob(f"there is no job {job_id}; list the jobs to see their ids")
