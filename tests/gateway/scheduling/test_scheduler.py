"""The scheduler and its courier in process, on a real Store with a recording adapter:
what a restart does with each state a crash can leave a run in, the texts of late and
missed runs, the backoff of a failure, and the wake-up when a job is added."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.base import Inbound
from agent.prompt import TurnContext
from gateway.outbound import Dispatcher
from gateway.scheduling.delivery import Courier, late_label, retry_delay
from gateway.scheduling.scheduler import Scheduler
from memory.access.identities import ensure_person, link_identity
from memory.schedule.jobs import (
    NewJob,
    Run,
    Target,
    begin_attempt,
    claim_due,
    create_job,
    owed_runs,
    problems,
    unconfirmed_runs,
)
from memory.schedule.timing import parse_when
from memory.store.database import Store
from memory.store.errors import StoreUnavailable
from tests.helpers.recording_adapter import RecordingAdapter

GRACE = 6 * 3600.0
TO = Target("telegram", "100", "", "dm", "telegram:100")
ZONE = "Asia/Tokyo"


class Answers:
    """The gateway's side of prompt jobs: answers at once, records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[Inbound, str]] = []

    async def answer_job(self, inbound: Inbound, person: str, context: TurnContext) -> str:
        self.asked.append((inbound, person))
        return f"answer to {inbound.text}"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        await ensure_person(opened, "alice")
        await link_identity(opened, "telegram:100", "alice")
        yield opened


async def nothing(_: Inbound) -> None:
    return None


@pytest.fixture
def telegram() -> RecordingAdapter:
    return RecordingAdapter(nothing)


@pytest.fixture
def courier(store: Store, telegram: RecordingAdapter) -> Courier:
    outlets = {"telegram": telegram}
    return Courier(store, Dispatcher(outlets.get, lambda: False), Answers(), lambda: ZONE)


async def job(store: Store, created: datetime, text: str = "stretch", **when: str) -> int:
    spec = parse_when(
        at=None,
        in_=when.get("in_"),
        cron=None,
        every=when.get("every"),
        zone=UTC,
        now=created,
        min_interval=1,
    )
    prompt = when.get("prompt")
    new = NewJob("alice", spec, TO, text=None if prompt else text, prompt=prompt)
    return (await create_job(store, new, now=created, max_jobs=50)).id


async def claimed(store: Store, created: datetime, **when: str) -> Run:
    await job(store, created, **when)
    (run,) = await claim_due(store, datetime.now(UTC), GRACE)
    return run


async def test_a_run_claimed_but_never_attempted_is_sent_once_at_start(
    store: Store, courier: Courier, telegram: RecordingAdapter
) -> None:
    await claimed(store, datetime.now(UTC) - timedelta(seconds=2), in_="1s")
    scheduler = Scheduler(store, courier.deliver, lambda: GRACE)
    scheduler.start()
    assert await telegram.next_text() == "stretch"
    await scheduler.stop()
    assert telegram.replies[0].address.chat == "100"
    assert await owed_runs(store, datetime.now(UTC)) == []


async def test_a_run_attempted_but_unconfirmed_is_not_resent_and_is_reported(
    store: Store, courier: Courier, telegram: RecordingAdapter
) -> None:
    run = await claimed(store, datetime.now(UTC) - timedelta(seconds=2), in_="1s")
    await begin_attempt(store, run, datetime.now(UTC), datetime.now(UTC) + timedelta(seconds=30))
    await job(store, datetime.now(UTC), "sentinel", in_="1s")
    scheduler = Scheduler(store, courier.deliver, lambda: GRACE)
    scheduler.start()
    assert await telegram.next_text() == "sentinel"
    await scheduler.stop()
    assert [reply.text for reply in telegram.replies] == ["sentinel"]
    assert await unconfirmed_runs(store) == []
    (problem,) = await problems(store)
    assert (problem["delivery"], problem["state"]) == (run.delivery, "unconfirmed")


async def test_a_job_added_while_the_scheduler_sleeps_wakes_it(
    store: Store, courier: Courier, telegram: RecordingAdapter
) -> None:
    scheduler = Scheduler(store, courier.deliver, lambda: GRACE)
    scheduler.start()
    await asyncio.sleep(0)  # the scheduler starts its sleep with no job: 15 minutes
    await job(store, datetime.now(UTC), in_="1s")
    assert await telegram.next_text(within=5) == "stretch"
    await scheduler.stop()


async def test_a_late_once_carries_its_due_time_in_the_persons_zone(
    store: Store, courier: Courier, telegram: RecordingAdapter
) -> None:
    created = datetime.now(UTC) - timedelta(minutes=10)
    run = await claimed(store, created, in_="1m")
    assert run.late and not run.missed
    await courier.deliver(run)
    due = late_label(created + timedelta(minutes=1), datetime.now(UTC), ZoneInfo(ZONE))
    assert telegram.replies[0].text == f"(late: due {due}) stretch"


@pytest.mark.parametrize(
    ("due", "now", "label"),
    [
        ("2026-12-07T14:57:29+00:00", "2026-12-07T14:59:00+00:00", "23:57"),
        ("2026-12-07T14:57:29+00:00", "2026-12-07T15:07:00+00:00", "Mon 7 Dec 23:57:29 JST"),
        ("2026-12-06T23:00:00+00:00", "2026-12-07T14:00:00+00:00", "08:00"),
    ],
    ids=["same-day", "past-midnight", "same-day-here-not-in-utc"],
)
def test_a_late_label_names_the_day_only_when_midnight_lies_between(
    due: str, now: str, label: str
) -> None:
    zone = ZoneInfo(ZONE)
    assert late_label(datetime.fromisoformat(due), datetime.fromisoformat(now), zone) == label


async def test_a_once_missed_beyond_grace_becomes_a_note(
    store: Store, courier: Courier, telegram: RecordingAdapter
) -> None:
    run = await claimed(store, datetime.now(UTC) - timedelta(hours=7), in_="1m")
    assert run.missed
    await courier.deliver(run)
    note = telegram.replies[0].text
    assert note.startswith("I missed a reminder due ")
    assert note.endswith("JST, kioku was not running: stretch (job 1)")


async def test_a_prompt_job_sends_the_answer_of_a_turn_of_its_person(
    store: Store, courier: Courier, telegram: RecordingAdapter
) -> None:
    run = await claimed(store, datetime.now(UTC) - timedelta(seconds=2), in_="1s", prompt="my week")
    await courier.deliver(run)
    assert telegram.replies[0].text == "answer to my week"
    assert isinstance(courier.answers, Answers)
    ((inbound, person),) = courier.answers.asked
    assert (inbound.platform, inbound.chat, inbound.is_direct, person) == (
        "telegram",
        "100",
        True,
        "alice",
    )


async def test_a_refused_send_is_a_failed_attempt_retried_after_30_s(
    store: Store, courier: Courier, telegram: RecordingAdapter
) -> None:
    telegram.refuse_sends = True
    run = await claimed(store, datetime.now(UTC) - timedelta(seconds=2), in_="1s")
    before = datetime.now(UTC)
    await courier.deliver(run)
    (problem,) = await problems(store)
    assert problem["state"] == "failed" and problem["attempts"] == 1
    assert "the platform refused" in problem["last_error"]
    retry_at = datetime.fromisoformat(problem["retry_at"])
    assert before + timedelta(seconds=29) < retry_at < before + timedelta(seconds=32)
    assert await owed_runs(store, datetime.now(UTC)) == []
    (again,) = await owed_runs(store, retry_at)
    assert again.attempts == 1


async def test_a_reminder_goes_out_with_long_replies_as_file_as_configured(
    store: Store, telegram: RecordingAdapter
) -> None:
    courier = Courier(
        store, Dispatcher({"telegram": telegram}.get, lambda: True), Answers(), lambda: ZONE
    )
    await courier.deliver(await claimed(store, datetime.now(UTC) - timedelta(seconds=2), in_="1s"))
    [reminder] = telegram.replies
    assert (reminder.text, reminder.long_as_file) == ("stretch", True)


def test_the_backoff_doubles_from_30_s_to_an_hour() -> None:
    assert [retry_delay(n) for n in (1, 2, 3, 7, 8, 20)] == [30, 60, 120, 1920, 3600, 3600]


async def test_a_platform_not_connected_is_a_failure_too(store: Store) -> None:
    courier = Courier(store, Dispatcher(lambda _: None, lambda: False), Answers(), lambda: ZONE)
    run = await claimed(store, datetime.now(UTC) - timedelta(seconds=2), in_="1s")
    await courier.deliver(run)
    (problem,) = await problems(store)
    assert problem["last_error"] == "telegram is not connected"


async def test_a_send_that_crashes_is_not_retried_in_a_loop(store: Store) -> None:
    tries: list[Run] = []

    async def crashing(run: Run) -> None:
        tries.append(run)
        raise StoreUnavailable("disk I/O error")

    await claimed(store, datetime.now(UTC) - timedelta(seconds=2), in_="1s")
    scheduler = Scheduler(store, crashing, lambda: GRACE)
    scheduler.start()
    await asyncio.sleep(2.5)  # proving an absence takes time: rounds that did not happen
    await scheduler.stop()
    assert 1 <= len(tries) <= 2
