"""A person's jobs in state.db: made within limits, listed, cancelled, isolated."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory.access.identities import ensure_person
from memory.schedule.jobs import (
    BadSchedule,
    NewJob,
    NoSuchJob,
    Target,
    TooManyJobs,
    cancel_job,
    changes,
    create_job,
    get_job,
    list_jobs,
    page_of_jobs,
    run_now,
)
from memory.schedule.timezones import NoSuchPerson
from memory.schedule.timing import parse_when
from memory.store.database import Store

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
DM = Target("telegram", "100", "", "dm", "telegram:100")


def reminder(person: str = "alice", *, in_: str = "20m", **extra: object) -> NewJob:
    when = parse_when(
        at=None,
        in_=in_,
        cron=None,
        every=None,
        zone=ZoneInfo("Asia/Tokyo"),
        now=NOW,
        min_interval=900,
    )
    return NewJob(person=person, when=when, target=DM, **{"text": "bread", **extra})


async def test_a_created_job_lists_with_its_next_run(store: Store) -> None:
    job = await create_job(store, reminder(name="oven"), now=NOW, max_jobs=50)
    assert job.next_run == NOW + timedelta(minutes=20)
    assert (job.name, job.text, job.prompt, job.target) == ("oven", "bread", None, DM)
    assert await list_jobs(store, "alice") == [job]
    assert job.to_json()["next_runs"] == [(NOW + timedelta(minutes=20)).isoformat()]


async def test_jobs_list_by_next_run(store: Store) -> None:
    later = await create_job(store, reminder(in_="2h"), now=NOW, max_jobs=50)
    sooner = await create_job(store, reminder(in_="1h"), now=NOW, max_jobs=50)
    assert [job.id for job in await list_jobs(store, "alice")] == [sooner.id, later.id]


async def test_another_persons_job_is_answered_as_absent(store: Store) -> None:
    job = await create_job(store, reminder(), now=NOW, max_jobs=50)
    assert await list_jobs(store, "bob") == []
    with pytest.raises(NoSuchJob) as theirs:
        await get_job(store, job.id, "bob")
    with pytest.raises(NoSuchJob) as absent:
        await get_job(store, job.id + 1, "bob")
    assert str(theirs.value) == str(absent.value).replace(str(job.id + 1), str(job.id))
    with pytest.raises(NoSuchJob):
        await cancel_job(store, job.id, "bob")
    assert await get_job(store, job.id, "alice") == job


async def test_cancel_removes_the_job_and_its_id_is_never_reused(store: Store) -> None:
    job = await create_job(store, reminder(), now=NOW, max_jobs=50)
    assert await cancel_job(store, job.id, "alice") == job
    assert await list_jobs(store, None) == []
    again = await create_job(store, reminder(), now=NOW, max_jobs=50)
    assert again.id > job.id


async def test_the_limit_counts_live_jobs(store: Store) -> None:
    for _ in range(2):
        await create_job(store, reminder(), now=NOW, max_jobs=2)
    with pytest.raises(TooManyJobs, match="cancel one"):
        await create_job(store, reminder(), now=NOW, max_jobs=2)
    await create_job(store, reminder("bob"), now=NOW, max_jobs=2)


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"text": None}, "got neither"),
        ({"prompt": "summarise my week"}, "got both"),
        ({"text": "   "}, "got neither"),
        ({"count": 2}, "until and count are for repeating jobs"),
    ],
)
def test_bad_new_jobs_say_what_to_send(extra: dict[str, object], says: str) -> None:
    with pytest.raises(BadSchedule, match=says):
        reminder(**extra)


def test_a_count_below_one_is_refused() -> None:
    when = parse_when(at=None, in_=None, cron=None, every="1h", zone=UTC, now=NOW, min_interval=900)
    with pytest.raises(BadSchedule, match="count of 1 or more"):
        NewJob(person="alice", when=when, target=DM, text="x", count=0)


async def test_until_before_the_first_run_is_refused(store: Store) -> None:
    when = parse_when(at=None, in_=None, cron=None, every="1h", zone=UTC, now=NOW, min_interval=900)
    new = NewJob(person="alice", when=when, target=DM, text="x", until=NOW + timedelta(minutes=30))
    with pytest.raises(BadSchedule, match="send a later until"):
        await create_job(store, new, now=NOW, max_jobs=50)


async def test_until_in_the_past_is_refused(store: Store) -> None:
    when = parse_when(at=None, in_=None, cron=None, every="1h", zone=UTC, now=NOW, min_interval=900)
    new = NewJob(person="alice", when=when, target=DM, text="x", until=NOW - timedelta(days=1))
    with pytest.raises(BadSchedule, match="has passed; send a future until"):
        await create_job(store, new, now=NOW, max_jobs=50)


async def test_a_job_for_a_missing_person_is_refused(store: Store) -> None:
    with pytest.raises(NoSuchPerson):
        await create_job(store, reminder("carol"), now=NOW, max_jobs=50)


async def test_creating_cancelling_and_running_now_wake_the_scheduler(store: Store) -> None:
    woken = changes(store)
    assert not await woken.wait(0)
    job = await create_job(store, reminder(), now=NOW, max_jobs=50)
    assert await woken.wait(0)
    assert (await run_now(store, job.id, NOW)).next_run == NOW
    assert await woken.wait(0)
    await cancel_job(store, job.id, None)
    assert await asyncio.wait_for(woken.wait(None), 1)
    assert not await woken.wait(0)


async def test_a_stored_jobs_upcoming_runs_start_at_its_next_run_and_respect_count(
    store: Store,
) -> None:
    when = parse_when(at=None, in_=None, cron=None, every="1h", zone=UTC, now=NOW, min_interval=900)
    new = NewJob(person="alice", when=when, target=DM, text="x", count=2)
    job = await create_job(store, new, now=NOW, max_jobs=50)
    assert job.upcoming() == [NOW + timedelta(hours=1), NOW + timedelta(hours=2)]
    assert job.upcoming(1) == [NOW + timedelta(hours=1)]


def test_a_count_over_a_million_is_refused_with_the_limit() -> None:
    when = parse_when(at=None, in_=None, cron=None, every="1h", zone=UTC, now=NOW, min_interval=900)
    with pytest.raises(BadSchedule, match="from 1 to 1,000,000"):
        NewJob(person="alice", when=when, target=DM, text="x", count=10**23)


async def test_an_id_beyond_sqlites_integers_is_no_such_job(store: Store) -> None:
    await ensure_person(store, "alice")
    for job_id in (2**63, -(2**63) - 1, 10**30):
        with pytest.raises(NoSuchJob):
            await get_job(store, job_id, "alice")
        with pytest.raises(NoSuchJob):
            await cancel_job(store, job_id, "alice")
        with pytest.raises(NoSuchJob):
            await run_now(store, job_id, NOW)


async def test_a_page_of_jobs_counts_them_all_and_reads_only_its_own(store: Store) -> None:
    await ensure_person(store, "alice")
    for hours in range(1, 6):
        await create_job(store, reminder(in_=f"{hours}h"), now=NOW, max_jobs=50)
    page = await page_of_jobs(store, "alice", group=None, offset=2, limit=2)
    assert page.total == 5 and [job.id for job in page.jobs] == [3, 4]
    past = await page_of_jobs(store, "alice", group=None, offset=10**30, limit=2)
    assert past.total == 5 and past.jobs == []
    group = await page_of_jobs(store, "alice", group=("telegram", "-5"), offset=0, limit=2)
    assert group.total == 0
