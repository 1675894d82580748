"""Claiming due jobs and the delivery ledger: each run claimed once, owed until sent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.schedule.jobs import (
    NewJob,
    NoSuchJob,
    Target,
    begin_attempt,
    cancel_job,
    claim_due,
    create_job,
    get_job,
    list_jobs,
    mark_failed,
    mark_sent,
    next_wake,
    owed_runs,
    problems,
    run_now,
    unconfirmed_runs,
)
from memory.schedule.timing import parse_when
from memory.store.database import Store

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
DM = Target("telegram", "100", "", "dm", "telegram:100")
GRACE = 6 * 3600.0


async def make(store: Store, person: str = "alice", **asked: object) -> int:
    schedule = {key: asked.pop(key, None) for key in ("at", "in_", "cron", "every")}
    when = parse_when(**schedule, zone=UTC, now=NOW, min_interval=60)
    new = NewJob(person=person, when=when, target=DM, text="stretch", **asked)
    return (await create_job(store, new, now=NOW, max_jobs=50)).id


async def test_nothing_is_claimed_before_it_is_due(store: Store) -> None:
    await make(store, in_="10m")
    assert await claim_due(store, NOW + timedelta(minutes=9), GRACE) == []
    assert await next_wake(store) == NOW + timedelta(minutes=10)


async def test_a_due_once_is_claimed_once_with_its_delivery_id(store: Store) -> None:
    job_id = await make(store, in_="10m")
    due = NOW + timedelta(minutes=10)
    (run,) = await claim_due(store, due, GRACE)
    assert (run.due, run.attempts, run.late, run.missed) == (due, 0, False, False)
    assert run.delivery == f"job-{job_id}-{int(due.timestamp())}"
    assert run.job.next_run is None
    assert await claim_due(store, due + timedelta(minutes=1), GRACE) == []
    assert await owed_runs(store, due) == [run]
    assert await next_wake(store) == due


async def test_a_sent_once_goes_away(store: Store) -> None:
    await make(store, in_="10m")
    (run,) = await claim_due(store, NOW + timedelta(minutes=10), GRACE)
    run = await begin_attempt(store, run, NOW, NOW + timedelta(minutes=1))
    await mark_sent(store, run, NOW + timedelta(minutes=10))
    assert await owed_runs(store, NOW + timedelta(days=1)) == []
    assert await list_jobs(store, None) == []
    assert await next_wake(store) is None


async def test_a_repeating_job_missed_for_hours_runs_once_then_on_its_slots(store: Store) -> None:
    job_id = await make(store, every="1h", count=10)
    later = NOW + timedelta(hours=5, minutes=30)
    (run,) = await claim_due(store, later, GRACE)
    assert run.due == NOW + timedelta(hours=1)
    assert run.late and not run.missed
    assert run.job.next_run == NOW + timedelta(hours=6)
    assert run.job.remaining == 9
    assert (await get_job(store, job_id, "alice")).runs == 1


async def test_a_once_beyond_grace_is_missed(store: Store) -> None:
    await make(store, in_="10m")
    (run,) = await claim_due(store, NOW + timedelta(hours=7), GRACE)
    assert run.missed and run.late


async def test_count_finishes_a_repeating_job(store: Store) -> None:
    await make(store, every="1h", count=1)
    (run,) = await claim_due(store, NOW + timedelta(hours=1), GRACE)
    assert run.job.next_run is None
    assert run.job.remaining == 0


async def test_an_attempted_unconfirmed_run_is_not_owed_but_reported(store: Store) -> None:
    await make(store, in_="10m")
    (run,) = await claim_due(store, NOW + timedelta(minutes=10), GRACE)
    await begin_attempt(store, run, NOW, NOW + timedelta(seconds=30))
    assert await owed_runs(store, NOW + timedelta(hours=1)) == []
    assert [found.delivery for found in await unconfirmed_runs(store)] == [run.delivery]
    assert [row["state"] for row in await problems(store, NOW)] == ["sending"]


async def test_a_failed_send_is_owed_again_at_its_retry(store: Store) -> None:
    job_id = await make(store, in_="10m")
    due = NOW + timedelta(minutes=10)
    (run,) = await claim_due(store, due, GRACE)
    run = await begin_attempt(store, run, due, due + timedelta(seconds=30))
    await mark_failed(store, run, "telegram is down", due + timedelta(seconds=30))
    assert await owed_runs(store, due + timedelta(seconds=29)) == []
    (again,) = await owed_runs(store, due + timedelta(seconds=30))
    assert again.attempts == 1
    assert await next_wake(store) == due + timedelta(seconds=30)
    job = await get_job(store, job_id, "alice")
    assert (job.failures, job.last_error) == (1, "telegram is down")
    assert [row["state"] for row in await problems(store, NOW)] == ["failed"]


async def test_a_cancelled_jobs_run_cannot_begin(store: Store) -> None:
    job_id = await make(store, in_="10m")
    (run,) = await claim_due(store, NOW + timedelta(minutes=10), GRACE)
    await cancel_job(store, job_id, "alice")
    with pytest.raises(NoSuchJob):
        await begin_attempt(store, run, NOW, NOW)


async def test_run_now_runs_an_every_job_without_moving_its_slots(store: Store) -> None:
    job_id = await make(store, every="1h")
    moved = NOW + timedelta(minutes=20)
    await run_now(store, job_id, moved)
    (run,) = await claim_due(store, moved, GRACE)
    assert run.due == moved
    assert run.job.next_run == NOW + timedelta(hours=1)


async def test_until_finishes_a_repeating_job(store: Store) -> None:
    until = NOW + timedelta(hours=2, minutes=30)
    await make(store, every="1h", until=until)
    (first,) = await claim_due(store, NOW + timedelta(hours=1), GRACE)
    assert first.job.next_run == NOW + timedelta(hours=2)
    (second,) = await claim_due(store, NOW + timedelta(hours=2), GRACE)
    assert second.job.next_run is None


async def test_a_run_closed_as_unconfirmed_is_reported_for_a_week(store: Store) -> None:
    await make(store, every="1h")
    due = NOW + timedelta(hours=1)
    (run,) = await claim_due(store, due, GRACE)
    run = await begin_attempt(store, run, due, due + timedelta(seconds=30))
    await mark_sent(store, run, due, outcome="unconfirmed")
    assert await unconfirmed_runs(store) == []
    (row,) = await problems(store, due + timedelta(days=6))
    assert (row["state"], row["delivery"], row["person"]) == ("unconfirmed", run.delivery, "alice")
    assert await problems(store, due + timedelta(days=8)) == []


async def test_a_given_up_run_is_not_retried_and_stays_reported(store: Store) -> None:
    await make(store, in_="10m")
    due = NOW + timedelta(minutes=10)
    (run,) = await claim_due(store, due, GRACE)
    run = await begin_attempt(store, run, due, due + timedelta(seconds=30))
    await mark_failed(store, run, "identity telegram:100 was unlinked", None)
    assert await owed_runs(store, due + timedelta(days=1)) == []
    assert await next_wake(store) is None
    assert [row["state"] for row in await problems(store, due)] == ["gave-up"]
    assert len(await list_jobs(store, "alice")) == 1


async def test_runs_of_everyone_are_claimed_together_oldest_first(store: Store) -> None:
    bobs = await make(store, "bob", in_="5m")
    alices = await make(store, in_="10m")
    claimed = await claim_due(store, NOW + timedelta(minutes=10), GRACE)
    assert [(run.job.id, run.job.person) for run in claimed] == [(bobs, "bob"), (alices, "alice")]
    assert [job.id for job in await list_jobs(store, None)] == [bobs, alices]


async def test_delivered_runs_are_pruned_after_a_day_unconfirmed_ones_after_a_week(
    store: Store,
) -> None:
    await make(store, every="1h")
    kept = []
    for hours, outcome in ((1, "unconfirmed"), (2, "sent"), (30, "sent"), (200, "sent")):
        (run,) = await claim_due(store, NOW + timedelta(hours=hours), GRACE)
        await mark_sent(store, run, NOW + timedelta(hours=hours), outcome)
        rows = await store.read(
            lambda db: db.execute("SELECT outcome FROM job_runs ORDER BY due").fetchall()
        )
        kept.append([row["outcome"] for row in rows])
    assert kept == [
        ["unconfirmed"],
        ["unconfirmed", "sent"],
        ["unconfirmed", "sent"],
        ["sent"],
    ]


async def test_a_once_closed_as_unconfirmed_stays_reported_but_not_listed(store: Store) -> None:
    await make(store, in_="10m")
    due = NOW + timedelta(minutes=10)
    (run,) = await claim_due(store, due, GRACE)
    run = await begin_attempt(store, run, due, due + timedelta(seconds=30))
    await mark_sent(store, run, due, outcome="unconfirmed")
    assert [row["delivery"] for row in await problems(store, due)] == [run.delivery]
    assert await list_jobs(store, "alice") == []
