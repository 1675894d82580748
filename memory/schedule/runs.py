"""The runs of scheduled jobs: claimed before they are sent, so each is delivered once.

`claim_due` writes, in one transaction, a `job_runs` row for every due job (with the
delivery id a platform may deduplicate on) and the job's next run; only then is
anything sent. Around the send, `begin_attempt` records that the platform is being
called and `mark_sent` that it answered, so after a crash a run is in one of three
states: claimed and never attempted (owed: send it), attempted and never confirmed
(`unconfirmed_runs`: not resent, reported), or sent. A failed send (`mark_failed`)
waits for its `retry_at` and is owed again then.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime
from typing import Any

import aiosqlite

from memory.schedule.records import JOB_COLUMNS, Job, NoSuchJob, Run, job_from_row
from memory.schedule.timing import next_slot
from memory.store.database import Store
from memory.store.records import from_epoch, iso, to_epoch

LATE_AFTER = 60.0
INSERT_CHUNK = 200  # run rows per INSERT (4 parameters each, well below SQLite's limit)
# Delivered runs are kept a day (what was sent when, for a bug report); a run closed as
# unconfirmed is kept, and reported by `problems`, for a week.
KEEP_SENT = 86_400.0
REPORT_UNCONFIRMED = 7 * 86_400.0
SENDING, FAILED, GAVE_UP, UNCONFIRMED = "sending", "failed", "gave-up", "unconfirmed"
_RUN_COLUMNS = "r.due, r.delivery, r.attempts"
_JOINED = ", ".join(f"j.{name.strip()}" for name in JOB_COLUMNS.split(","))
_OWED = f"r.sent_at IS NULL AND (r.attempts = 0 OR (r.outcome = '{FAILED}' AND r.retry_at <= ?))"


def delivery_id(job_id: int, due: datetime) -> str:
    return f"job-{job_id}-{int(to_epoch(due))}"


async def claim_due(store: Store, now: datetime, grace: float) -> list[Run]:
    """Claim every job due by `now` (one transaction): a run row each, and the job moved
    to its next run after `now` — a repeating job that missed several slots while kioku
    was down runs once for them all — or finished (a once, `until` passed, count spent)."""
    stamp = to_epoch(now)

    def anything_due(db: sqlite3.Connection) -> bool:
        found = db.execute("SELECT 1 FROM jobs WHERE next_run <= ? LIMIT 1", (stamp,))
        return found.fetchone() is not None

    # A read first: a wake with nothing due (a job added or cancelled) takes no write.
    if not await store.read(anything_due):
        return []

    async def op(db: aiosqlite.Connection) -> list[Run]:
        async with db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE next_run <= ? ORDER BY next_run, id", (stamp,)
        ) as cursor:
            due_jobs = [job_from_row(row) for row in await cursor.fetchall()]
        due = [(job, _due(job), *_after_run(job, now)) for job in due_jobs]
        fresh = await _insert_runs(db, [(job.id, at) for job, at, _, _ in due], stamp)
        await db.executemany(
            "UPDATE jobs SET next_run = ?, remaining = ?, runs = runs + ? WHERE id = ?",
            [
                (None if after is None else to_epoch(after), left, int(job.id in fresh), job.id)
                for job, _, after, left in due
            ],
        )
        return [
            _run(
                replace(job, next_run=after, remaining=left, runs=job.runs + 1),
                at,
                delivery_id(job.id, at),
                0,
                now,
                grace,
            )
            for job, at, after, left in due
            if job.id in fresh
        ]

    return await store.write(op)


async def owed_runs(store: Store, now: datetime, grace: float = float("inf")) -> list[Run]:
    """Runs claimed and not sent that are to be sent now: never attempted, or failed and
    past their `retry_at`; oldest first. `missed` uses `grace` (never attempted only)."""

    def read(db: sqlite3.Connection) -> list[Run]:
        rows = db.execute(
            f"SELECT {_RUN_COLUMNS}, {_JOINED} FROM job_runs AS r JOIN jobs AS j "
            f"ON j.id = r.job_id WHERE {_OWED} ORDER BY r.due, r.job_id",
            (to_epoch(now),),
        ).fetchall()
        return [_run_from_row(row, now, grace) for row in rows]

    return await store.read(read)


async def unconfirmed_runs(store: Store) -> list[Run]:
    """Runs whose send began and was never confirmed: kioku stopped between calling the
    platform and recording the answer. They are not resent (the message may be there)."""

    def read(db: sqlite3.Connection) -> list[Run]:
        rows = db.execute(
            f"SELECT {_RUN_COLUMNS}, {_JOINED} FROM job_runs AS r JOIN jobs AS j "
            "ON j.id = r.job_id WHERE r.sent_at IS NULL AND r.outcome = ? "
            "ORDER BY r.due, r.job_id",
            (SENDING,),
        ).fetchall()
        return [_run_from_row(row, None, float("inf")) for row in rows]

    return await store.read(read)


async def begin_attempt(store: Store, run: Run, now: datetime, retry_at: datetime) -> Run:
    """Record that `run` is being sent (call right before the platform); `NoSuchJob` if
    the job was cancelled or the run closed meanwhile, and then nothing is to be sent."""

    async def op(db: aiosqlite.Connection) -> int:
        cursor = await db.execute(
            "UPDATE job_runs SET attempts = attempts + 1, retry_at = ?, outcome = ? "
            "WHERE job_id = ? AND due = ? AND sent_at IS NULL",
            (to_epoch(retry_at), SENDING, run.job.id, to_epoch(run.due)),
        )
        return cursor.rowcount

    if not await store.write(op):
        raise NoSuchJob(f"job {run.job.id} was cancelled, or its run was already sent")
    return replace(run, attempts=run.attempts + 1)


async def mark_sent(store: Store, run: Run, now: datetime, outcome: str = "sent") -> None:
    """Close `run` (`outcome`: "sent", "dropped" for a missed once, "unconfirmed" for a
    run `unconfirmed_runs` gave); a finished job with nothing owed goes with its last run."""
    stamp = to_epoch(now)

    async def op(db: aiosqlite.Connection) -> None:
        await db.execute(
            "UPDATE job_runs SET sent_at = ?, outcome = ?, retry_at = NULL "
            "WHERE job_id = ? AND due = ? AND sent_at IS NULL",
            (stamp, outcome, run.job.id, to_epoch(run.due)),
        )
        if outcome == "sent":
            await db.execute("UPDATE jobs SET last_error = NULL WHERE id = ?", (run.job.id,))
        await db.execute(
            "DELETE FROM job_runs WHERE job_id = ? AND sent_at < ? "
            "AND (outcome != ? OR sent_at < ?)",
            (run.job.id, stamp - KEEP_SENT, UNCONFIRMED, stamp - REPORT_UNCONFIRMED),
        )
        if outcome != UNCONFIRMED:  # kept, so `problems` reports the run for its week
            await db.execute(
                "DELETE FROM jobs WHERE id = ? AND next_run IS NULL AND NOT EXISTS("
                "SELECT 1 FROM job_runs WHERE job_id = jobs.id AND sent_at IS NULL)",
                (run.job.id,),
            )

    await store.write(op)


async def mark_failed(store: Store, run: Run, error: str, retry_at: datetime | None) -> None:
    """A send of `run` failed with `error`: owed again at `retry_at`, or given up (None),
    and either way counted on the job and reported by `problems`."""

    async def op(db: aiosqlite.Connection) -> None:
        await db.execute(
            "UPDATE job_runs SET outcome = ?, retry_at = ? "
            "WHERE job_id = ? AND due = ? AND sent_at IS NULL",
            (
                GAVE_UP if retry_at is None else FAILED,
                None if retry_at is None else to_epoch(retry_at),
                run.job.id,
                to_epoch(run.due),
            ),
        )
        await db.execute(
            "UPDATE jobs SET failures = failures + 1, last_error = ? WHERE id = ?",
            (error, run.job.id),
        )

    await store.write(op)


async def next_wake(store: Store) -> datetime | None:
    """When the scheduler has something to do: the earliest next run, failed run's retry,
    or never-attempted run (then its due time, so at once); None if nothing is planned."""

    def read(db: sqlite3.Connection) -> float | None:
        found = [
            db.execute(
                "SELECT min(next_run) AS next FROM jobs WHERE next_run IS NOT NULL"
            ).fetchone()["next"],
            db.execute(
                "SELECT min(retry_at) AS next FROM job_runs WHERE sent_at IS NULL AND outcome = ?",
                (FAILED,),
            ).fetchone()["next"],
            db.execute(
                "SELECT min(due) AS next FROM job_runs WHERE sent_at IS NULL AND attempts = 0"
            ).fetchone()["next"],
        ]
        present = [value for value in found if value is not None]
        return min(present) if present else None

    earliest = await store.read(read)
    return None if earliest is None else from_epoch(earliest)


async def problems(store: Store, now: datetime | None = None) -> list[dict[str, Any]]:
    """Runs `kioku status` reports: failing or given up, begun and never confirmed, and
    those closed as unconfirmed in the last week; oldest first."""
    since = (datetime.now().timestamp() if now is None else to_epoch(now)) - REPORT_UNCONFIRMED

    def read(db: sqlite3.Connection) -> list[dict[str, Any]]:
        rows = db.execute(
            "SELECT r.job_id, j.person_id, j.name, j.platform, j.chat, j.identity, r.due, "
            "r.delivery, r.attempts, r.outcome, r.retry_at, j.last_error FROM job_runs AS r "
            "JOIN jobs AS j ON j.id = r.job_id WHERE (r.sent_at IS NULL AND r.outcome IN "
            "(?, ?, ?)) OR (r.outcome = ? AND r.sent_at >= ?) ORDER BY r.due, r.job_id",
            (FAILED, GAVE_UP, SENDING, UNCONFIRMED, since),
        ).fetchall()
        return [
            {
                "job": row["job_id"],
                "person": row["person_id"],
                "name": row["name"],
                "target": f"{row['platform']}:{row['chat']}",
                "identity": row["identity"],
                "due": iso(from_epoch(row["due"])),
                "delivery": row["delivery"],
                "attempts": row["attempts"],
                "state": row["outcome"],
                "retry_at": None if row["retry_at"] is None else iso(from_epoch(row["retry_at"])),
                "last_error": row["last_error"],
            }
            for row in rows
        ]

    return await store.read(read)


async def _insert_runs(
    db: aiosqlite.Connection, runs: list[tuple[int, datetime]], stamp: float
) -> set[int]:
    """Insert the run rows, many to a statement; the jobs whose row was new (a run
    already claimed at the same due time is not claimed twice)."""
    fresh: set[int] = set()
    for start in range(0, len(runs), INSERT_CHUNK):
        chunk = runs[start : start + INSERT_CHUNK]
        values = ", ".join("(?, ?, ?, ?)" for _ in chunk)
        params = [
            value
            for job_id, due in chunk
            for value in (job_id, to_epoch(due), stamp, delivery_id(job_id, due))
        ]
        rows = await db.execute_fetchall(
            "INSERT OR IGNORE INTO job_runs(job_id, due, claimed_at, delivery) "
            f"VALUES {values} RETURNING job_id",
            params,
        )
        fresh.update(int(row["job_id"]) for row in rows)
    return fresh


def _due(job: Job) -> datetime:
    assert job.next_run is not None  # selected by next_run <= now
    return job.next_run


def _after_run(job: Job, now: datetime) -> tuple[datetime | None, int | None]:
    """The job's next run after the one due now, and its runs left after this one."""
    remaining = None if job.remaining is None else job.remaining - 1
    following = next_slot(job.when, job.created_at, now)
    if remaining == 0 or (following and job.until and following > job.until):
        following = None
    return following, remaining


def _run(
    job: Job, due: datetime, delivery: str, attempts: int, now: datetime | None, grace: float
) -> Run:
    behind = 0.0 if now is None else (now - due).total_seconds()
    return Run(
        job=job,
        due=due,
        delivery=delivery,
        attempts=attempts,
        late=behind > LATE_AFTER,
        missed=job.when.kind == "once" and attempts == 0 and behind > grace,
    )


def _run_from_row(row: Any, now: datetime | None, grace: float) -> Run:
    due = from_epoch(row["due"])
    return _run(job_from_row(row), due, row["delivery"], int(row["attempts"]), now, grace)
