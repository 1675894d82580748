"""Scheduling figures: next-run computation of cronsim beside croniter, and the store's
scheduler calls with 10k jobs in it.

    .venv/bin/python tests/bench/bench_schedule.py [--jobs 10000] [--runs 2000]
    make bench BENCH=schedule

Next runs: for each expression, in Asia/Tokyo and America/New_York, `--runs` successive
next runs from one iterator of each library, and kioku's `next_after` (a fresh cronsim
iterator per call, as the store computes one next run per claim). croniter is measured
only when importable (`pip install croniter` in the venv; it is not a dependency).

Store: `--jobs` jobs (every tenth a cron, the rest every/once) for 100 persons, then the
medians of `next_wake` and of `claim_due` with nothing due, one `claim_due` of 100 due
jobs and one of all of them (a daemon back after a long stop), and the process CPU
spent in 5 s of `changes(store).wait` (the scheduler's idle sleep) beside none.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from cronsim import CronSim

from memory.access.identities import ensure_person
from memory.schedule.jobs import NewJob, Target, changes, claim_due, create_job, next_wake
from memory.schedule.timing import When, next_after, parse_when
from memory.store.database import Store

EXPRESSIONS = ("0 9 * * 1", "*/15 * * * *", "30 2 * * *", "0 0 1 * *", "0 8-18/2 * * 1-5")
ZONES = ("Asia/Tokyo", "America/New_York")
START = datetime(2026, 1, 1, tzinfo=UTC)
PERSONS = 100


def _per_call(work: Callable[[], object], count: int) -> float:
    started = time.perf_counter()
    work()
    return (time.perf_counter() - started) / count * 1e6


def next_runs(runs: int) -> list[tuple[str, str, float, float | None, float]]:
    has_croniter = importlib.util.find_spec("croniter") is not None
    rows = []
    for zone_name in ZONES:
        zone = ZoneInfo(zone_name)
        local = START.astimezone(zone)
        for expression in EXPRESSIONS:
            sim = CronSim(expression, local)
            cronsim_us = _per_call(lambda sim=sim: [next(sim) for _ in range(runs)], runs)
            croniter_us = None
            if has_croniter:
                from croniter import croniter

                it = croniter(expression, local)
                croniter_us = _per_call(
                    lambda it=it: [it.get_next(datetime) for _ in range(runs)], runs
                )
            when = When("cron", expression, zone_name)

            def fresh(when: When = when) -> None:
                after = START
                for _ in range(runs):
                    found = next_after(when, after)
                    assert found is not None
                    after = found

            rows.append((zone_name, expression, cronsim_us, croniter_us, _per_call(fresh, runs)))
    return rows


async def _fill(store: Store, count: int, now: datetime) -> None:
    for person in range(PERSONS):
        await ensure_person(store, f"p{person:03d}")
    zone = ZoneInfo("Asia/Tokyo")
    news = []
    for index in range(count):
        kind = index % 10
        asked = {"at": None, "in_": None, "cron": None, "every": None}
        if kind == 0:
            asked["cron"] = EXPRESSIONS[index % len(EXPRESSIONS)]
        elif kind < 5:
            asked["every"] = f"{15 + index % 600}m"
        else:
            asked["in_"] = f"{3600 + index}s"
        when = parse_when(**asked, zone=zone, now=now, min_interval=900)
        target = Target("telegram", str(index % PERSONS), "", "dm", f"telegram:{index % PERSONS}")
        news.append(NewJob(f"p{index % PERSONS:03d}", when, target, text=f"reminder {index}"))
    limit = count // PERSONS + 1
    for start in range(0, count, 500):
        await asyncio.gather(
            *(create_job(store, new, now=now, max_jobs=limit) for new in news[start : start + 500])
        )


async def _median_ms(work: Callable[[], Awaitable[object]], times: int) -> float:
    taken = []
    for _ in range(times):
        started = time.perf_counter()
        await work()
        taken.append(time.perf_counter() - started)
    return statistics.median(taken) * 1000


async def _idle_cpu(store: Store | None, seconds: float) -> float:
    started = time.process_time()
    if store is None:
        await asyncio.sleep(seconds)
    else:
        await changes(store).wait(seconds)
    return (time.process_time() - started) * 1000


async def store_figures(path: Path, count: int) -> list[tuple[str, str]]:
    now = START
    async with await Store.open(path) as store:
        started = time.perf_counter()
        await _fill(store, count, now)
        fill_s = time.perf_counter() - started
        wake = await next_wake(store)
        assert wake is not None
        rows = [
            (f"create_job x{count} (500 at a time)", f"{fill_s:.1f} s"),
            ("next_wake, median", f"{await _median_ms(lambda: next_wake(store), 200):.3f} ms"),
            (
                "claim_due, nothing due, median",
                f"{await _median_ms(lambda: claim_due(store, now, 21600), 200):.3f} ms",
            ),
        ]
        hundredth = await store.read(
            lambda db: db.execute(
                "SELECT next_run FROM jobs ORDER BY next_run LIMIT 1 OFFSET 99"
            ).fetchone()["next_run"]
        )
        started = time.perf_counter()
        claimed = await claim_due(store, datetime.fromtimestamp(hundredth, UTC), 21600)
        rows.append(
            (f"claim_due, {len(claimed)} due", f"{(time.perf_counter() - started) * 1000:.1f} ms")
        )
        started = time.perf_counter()
        claimed = await claim_due(store, now + timedelta(days=400), 21600)
        rows.append(
            (f"claim_due, {len(claimed)} due", f"{(time.perf_counter() - started) * 1000:.0f} ms")
        )
        rows.append(("CPU in 5 s of changes().wait", f"{await _idle_cpu(store, 5):.2f} ms"))
        rows.append(("CPU in 5 s of asyncio.sleep", f"{await _idle_cpu(None, 5):.2f} ms"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    print("== next runs (µs per run)")
    print(f"{'zone':<18} {'expression':<18} {'cronsim':>8} {'croniter':>9} {'next_after':>11}")
    for zone, expression, sim, it, fresh in next_runs(args.runs):
        shown = "-" if it is None else f"{it:.1f}"
        print(f"{zone:<18} {expression:<18} {sim:>8.1f} {shown:>9} {fresh:>11.1f}")
    print(f"\n== store with {args.jobs} jobs")
    with tempfile.TemporaryDirectory(prefix="kioku-bench-") as scratch:
        for name, value in asyncio.run(store_figures(Path(scratch, "state.db"), args.jobs)):
            print(f"{name:<40} {value:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
