"""The scheduler: one owned task that sends each due job at its time.

It sleeps until the earliest due time in state.db (`next_wake`) or until jobs change
(`changes(store)`: a job added, cancelled or run now, in this process or, through the
CLI socket's `schedule_changed` frame, in another) — never a poll every second, so
10k future jobs cost no more at idle than none. Each wake claims the due runs in one
write (`claim_due`) and hands each to the courier in its own task, so a slow prompt
job does not hold up a reminder. At start-up it first sends the runs claimed but
never attempted (`owed_runs`) and logs, without resending, those attempted but never
confirmed (`unconfirmed_runs`): see the exactly-once policy in gateway/scheduling/delivery.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import structlog

from memory.schedule.jobs import (
    Run,
    changes,
    claim_due,
    count_jobs,
    mark_sent,
    next_wake,
    owed_runs,
    problems,
    unconfirmed_runs,
)
from memory.store.database import Store
from memory.store.errors import StoreError
from plumbing.meter import QUIET, Meter

log = structlog.get_logger("kioku.scheduler")

LONGEST_SLEEP = 900.0
"""The longest sleep, so a wall clock set forward (or a suspended machine) is noticed."""
FAILED_ROUND_WAIT = 30.0
STOP_WAIT = 5.0
SENDING_WAIT = 1.0
"""While a send is in flight its run is still owed, so `next_wake` says "now": look again
this often until it is done (a finished send wakes the loop at once too)."""


class Scheduler:
    """Owns the task named "scheduler" and the delivery tasks it starts; `grace` is
    `schedule.grace` in seconds as now configured."""

    def __init__(
        self,
        store: Store,
        deliver: Callable[[Run], Awaitable[None]],
        grace: Callable[[], float],
        meter: Meter = QUIET,
    ) -> None:
        self._store = store
        self._meter = meter
        self._deliver = deliver
        self._grace = grace
        self._task: asyncio.Task[None] | None = None
        self._sending: dict[str, asyncio.Task[None]] = {}
        self._crashed = False
        self.wakes = 0
        """Rounds run since start (the bench counts them)."""

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="scheduler")

    async def __aenter__(self) -> Scheduler:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def changed(self) -> None:
        """Jobs changed in another process (the CLI socket's `schedule_changed`)."""
        changes(self._store).notify()

    async def stop(self) -> None:
        """Stop the loop, let the sends in flight finish for up to `STOP_WAIT`, then cancel
        them: a send cut after its `begin_attempt` is reported as unconfirmed at the next
        start, never sent twice."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        sending = set(self._sending.values())
        if sending:
            _, cut = await asyncio.wait(sending, timeout=STOP_WAIT)
            for task in cut:
                task.cancel()
            await asyncio.gather(*cut, return_exceptions=True)

    async def _run(self) -> None:
        await self._report_unconfirmed()
        while True:
            try:
                await self.round(datetime.now(UTC))
                wake = await next_wake(self._store)
            except (StoreError, OSError) as exc:
                log.error("scheduler_round_failed", error=str(exc), kind=type(exc).__name__)
                timeout = FAILED_ROUND_WAIT
            else:
                timeout = LONGEST_SLEEP
                if wake is not None:
                    timeout = min(timeout, (wake - datetime.now(UTC)).total_seconds())
                if timeout <= 0 and self._sending:
                    timeout = SENDING_WAIT
                if self._crashed:  # a send that could not even record its failure
                    timeout, self._crashed = max(timeout, FAILED_ROUND_WAIT), False
            if timeout > 0:
                await changes(self._store).wait(timeout)

    async def round(self, now: datetime) -> None:
        """Send what is owed (claimed earlier, or due a retry), then claim and send what is due."""
        self.wakes += 1
        grace = self._grace()
        owed = await owed_runs(self._store, now, grace)
        runs = [run for run in owed if run.delivery not in self._sending]
        due = await claim_due(self._store, now, grace)
        for run in due:
            self._meter.scheduled("due")
            if run.late:
                self._meter.scheduled("late")
        runs += due
        for run in runs:
            if run.attempts:
                log.info("job_retry", job=run.job.id, delivery=run.delivery, attempts=run.attempts)
            task = asyncio.create_task(self._deliver(run), name=f"job-{run.delivery}")
            self._sending[run.delivery] = task
            task.add_done_callback(lambda done, key=run.delivery: self._finished(key, done))

    def _finished(self, delivery: str, task: asyncio.Task[None]) -> None:
        """A send is done: look again at once, unless it crashed (the store failing under
        it), when the next round waits `FAILED_ROUND_WAIT` rather than crash in a loop."""
        if self._sending.get(delivery) is task:
            del self._sending[delivery]
        if not task.cancelled() and task.exception() is not None:
            log.error("job_delivery_crashed", delivery=delivery, error=repr(task.exception()))
            self._crashed = True
        else:
            changes(self._store).notify()

    async def _report_unconfirmed(self) -> None:
        """Close the runs a crash left between the platform call and its record: logged and
        kept for `kioku status` (a week), never resent."""
        try:
            for run in await unconfirmed_runs(self._store):
                log.warning(
                    "job_delivery_unconfirmed",
                    job=run.job.id,
                    person=run.job.person,
                    delivery=run.delivery,
                    due=run.due.isoformat(),
                )
                await mark_sent(self._store, run, datetime.now(UTC), "unconfirmed")
        except (StoreError, OSError) as exc:
            log.error("scheduler_start_failed", error=str(exc), kind=type(exc).__name__)


async def schedule_status(store: Store) -> dict[str, Any]:
    """The scheduled jobs in `kioku status`: how many, and the runs failing or unconfirmed."""
    return {"jobs": await count_jobs(store), "problems": await problems(store)}
