"""The scheduler's cost at idle: CPU seconds and wake-ups over a quiet period, with no
jobs and with 10k jobs all due later (the issue's "10k jobs cost no more CPU at idle
than none").

    .venv/bin/python tests/bench/bench_scheduler.py [--seconds 60] [--jobs 0,10000]
    make bench BENCH=scheduler

The `Scheduler` of the daemon runs alone on a real Store in a temporary folder; the jobs
are written through `create_job` (one-shots and hourly ones, the earliest a day away)
before the clock starts. CPU is this process's (user + system) over the idle period,
so it holds the store's reader and writer threads too; a wake-up is one round of the
scheduler (claim what is due, send what is owed).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from gateway.scheduling.scheduler import Scheduler
from memory.access.identities import ensure_person
from memory.schedule.jobs import NewJob, Run, Target, create_job
from memory.schedule.timing import parse_when
from memory.store.database import Store

TARGET = Target("telegram", "1", "", "dm", "telegram:1")
ZONE = ZoneInfo("UTC")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def fill(store: Store, jobs: int) -> None:
    """`jobs` jobs over 200 persons, none due within a day."""
    now = datetime.now(UTC)
    persons = max(1, min(200, jobs))
    for number in range(persons):
        await ensure_person(store, f"p{number:04d}")
    for number in range(jobs):
        when = (
            parse_when(
                at=None,
                in_=f"{1 + number % 6}d",
                cron=None,
                every=None,
                zone=ZONE,
                now=now,
                min_interval=900,
            )
            if number % 2
            else parse_when(
                at=None,
                in_=None,
                cron=f"{number % 60} {number % 24} * * *",
                every=None,
                zone=ZONE,
                now=now,
                min_interval=900,
            )
        )
        new = NewJob(f"p{number % persons:04d}", when, TARGET, text=f"job {number}")
        await create_job(store, new, now=now, max_jobs=jobs)


async def idle(jobs: int, seconds: float) -> dict[str, float]:
    sent: list[Run] = []

    async def deliver(run: Run) -> None:
        sent.append(run)

    with tempfile.TemporaryDirectory(prefix="kioku-bench-scheduler-") as folder:
        async with await Store.open(Path(folder) / "state.db") as store:
            await fill(store, jobs)
            scheduler = Scheduler(store, deliver, lambda: 6 * 3600.0)
            scheduler.start()
            await asyncio.sleep(1.0)  # the start-up round
            wakes, cpu, wall = scheduler.wakes, cpu_seconds(), time.monotonic()
            await asyncio.sleep(seconds)
            cpu, wall = cpu_seconds() - cpu, time.monotonic() - wall
            wakes = scheduler.wakes - wakes
            await scheduler.stop()
    return {"jobs": jobs, "seconds": wall, "cpu": cpu, "wakes": wakes, "sent": len(sent)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--jobs", default="0,10000", help="comma-separated job counts")
    args = parser.parse_args()
    print(f"{'jobs':>7} {'idle s':>7} {'CPU s':>8} {'CPU %':>7} {'wake-ups':>9} {'sent':>5}")
    for jobs in (int(n) for n in args.jobs.split(",")):
        row = await idle(jobs, args.seconds)
        share = 100 * row["cpu"] / row["seconds"]
        print(
            f"{jobs:>7} {row['seconds']:>7.1f} {row['cpu']:>8.4f} {share:>6.3f}% "
            f"{row['wakes']:>9.0f} {row['sent']:>5.0f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
