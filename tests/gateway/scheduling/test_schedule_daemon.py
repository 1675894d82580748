"""Scheduled jobs as a person meets them: `kioku serve` in a subprocess, the real
python-telegram-bot against the fake Telegram, jobs added with `kioku schedule add`.
A reminder arrives at its second; kill -9 just before or just after a due time sends
each job exactly once; runs missed while kioku was down arrive late, as a note, or once
for a repeating job; a platform that refuses is retried and reported in `kioku status`.

Tests that neither stop the daemon nor change its settings share one (`shared`), each with
jobs of its own; at the module's end it must stop on SIGTERM with exit 0."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import pytest_asyncio

from gateway.scheduling.delivery import late_label
from memory.access.identities import ensure_person
from memory.access.people import OWNER
from memory.schedule.jobs import NewJob, Target, create_job
from memory.schedule.timing import parse_when
from memory.store.database import Store
from tests.fakes.telegram import FakeTelegram, Fault
from tests.helpers.daemon import WAIT, Daemon, run_daemon, stored_texts
from tests.helpers.door_daemon import door_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import KIOKU
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

TO = f"telegram:{OWNER_CHAT}"
ZONE = "Asia/Tokyo"

in_module_loop = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")


def env(tg: FakeTelegram) -> dict[str, str]:
    return {
        **telegram_env(tg),
        "KIOKU_SCHEDULE__MIN_INTERVAL": "1s",
        "KIOKU_SCHEDULE__DEFAULT_TIMEZONE": ZONE,
    }


@dataclass
class Shared:
    """The module's running daemon and its fake Telegram."""

    daemon: Daemon
    tg: FakeTelegram


@module_fixture
async def running(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    async with (
        GatedAnthropic() as api,
        FakeTelegram() as tg,
        door_daemon(tmp_path_factory.mktemp("schedule"), api, **env(tg)) as daemon,
    ):
        yield Shared(daemon, tg)


@pytest.fixture
def shared(running: Shared, home: Path, monkeypatch: pytest.MonkeyPatch) -> Shared:
    """The shared daemon; this test's `kioku` commands run against its KIOKU_HOME."""
    monkeypatch.setenv("KIOKU_HOME", str(running.daemon.home))
    return running


async def kioku(*args: str) -> tuple[int, str, str]:
    """Run `kioku ARGS` without blocking the loop the fakes answer on."""
    process = await asyncio.create_subprocess_exec(
        str(KIOKU),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "KIOKU_SCHEDULE__MIN_INTERVAL": "1s"},
    )
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def add(text: str, *when: str) -> dict[str, Any]:
    """`kioku schedule add` of a reminder to the owner's Telegram; the job as stored (a job
    due in a second may be sent, and gone from the list, before a `list` could run)."""
    code, out, err = await kioku(
        "schedule", "add", "--person", OWNER, "--to", TO, *when, "--text", text, "--json"
    )
    assert code == 0, err
    job: dict[str, Any] = json.loads(out)
    assert job["text"] == text
    return job


def texts(tg: FakeTelegram) -> list[str]:
    return [call.text for call in tg.sent()]


async def arrives(tg: FakeTelegram, text: str, within: float = WAIT) -> float:
    """Wait until kioku sent `text` (as the end of a message); the time it was seen."""
    while not any(sent.endswith(text) for sent in texts(tg)):
        await tg.wait_for("sendMessage", count=len(tg.sent()) + 1, within=within)
    return time.time()


def due_at(job: dict[str, Any]) -> float:
    return datetime.fromisoformat(job["next_run"]).timestamp()


async def killed(daemon: Daemon) -> None:
    daemon.signal(signal.SIGKILL)
    await daemon.exit_code()
    daemon.notify.close()


async def test_a_reminder_added_in_2s_arrives_on_telegram_at_its_second(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        daemon = await run_daemon(daemons, home, api, tmp_path, **env(tg))
        job = await add("take the bread out", "--in", "2s")
        seen = await arrives(tg, "take the bread out")
        assert abs(seen - due_at(job)) <= 1.0
        call = next(c for c in tg.sent() if c.text == "take the bread out")
        assert call.params["chat_id"] == str(OWNER_CHAT)
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0
    assert "job_sent" in daemon.log.read_text()


async def test_a_reminder_over_the_limit_arrives_as_a_file_with_long_replies_as_file(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    text = " ".join(["🍞"] * 1400)  # 2,799 characters, 4,199 UTF-16 units: over Telegram's 4,096
    async with FakeTelegram() as tg:
        await run_daemon(
            daemons, home, api, tmp_path, **env(tg), KIOKU_MEDIA__LONG_REPLIES_AS_FILE="true"
        )
        await add(text, "--in", "1s")
        [sent] = await tg.wait_for("sendDocument", count=1, within=WAIT)
        upload = sent.files["document"]
        assert upload.filename == "reply.md"
        assert upload.data.decode("utf-8") == text
        assert sent.params["chat_id"] == str(OWNER_CHAT)
        assert tg.sent("sendMessage") == []


async def test_kill_9_just_before_the_due_time_sends_it_once_after_restart(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        daemon = await run_daemon(daemons, home, api, tmp_path, **env(tg))
        job = await add("call the dentist", "--in", "3s")
        await asyncio.sleep(max(0.0, due_at(job) - time.time() - 0.5))  # a clock, not an event
        await killed(daemon)
        assert "call the dentist" not in texts(tg)
        await run_daemon(daemons, home, api, tmp_path, **env(tg))
        await arrives(tg, "call the dentist")
        await add("sentinel", "--in", "1s")
        await arrives(tg, "sentinel")
        assert texts(tg).count("call the dentist") == 1


async def test_kill_9_just_after_the_due_time_never_sends_it_twice(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        daemon = await run_daemon(daemons, home, api, tmp_path, **env(tg))
        await add("water the plants", "--in", "2s")
        await tg.wait_for("sendMessage", count=1, within=WAIT)
        await killed(daemon)
        await run_daemon(daemons, home, api, tmp_path, **env(tg))
        await add("sentinel", "--in", "1s")
        await arrives(tg, "sentinel")
        assert texts(tg).count("water the plants") == 1


async def stored_before_start(home: Path, text: str, created: datetime, **when: str) -> None:
    """A job written while kioku was down, as if created at `created`."""
    await asyncio.to_thread(home.mkdir, parents=True, exist_ok=True)
    async with await Store.open(home / "state.db") as store:
        await ensure_person(store, OWNER)
        spec = parse_when(
            at=None,
            in_=when.get("in_"),
            cron=None,
            every=when.get("every"),
            zone=ZoneInfo(ZONE),
            now=created,
            min_interval=1.0,
        )
        target = Target("telegram", str(OWNER_CHAT), "", "dm", TO)
        await create_job(store, NewJob(OWNER, spec, target, text=text), now=created, max_jobs=50)


async def test_runs_missed_while_down_arrive_late_as_a_note_or_once(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    await stored_before_start(home, "late one", now - timedelta(minutes=11), in_="1m")
    await stored_before_start(home, "long gone", now - timedelta(hours=8), in_="1m")
    await stored_before_start(home, "hourly", now - timedelta(hours=5, minutes=30), every="1h")
    async with FakeTelegram() as tg:
        await run_daemon(daemons, home, api, tmp_path, **env(tg))
        await arrives(tg, "late one")
        await arrives(tg, "long gone (job 2)")
        await arrives(tg, "hourly")
        await add("sentinel", "--in", "1s")
        await arrives(tg, "sentinel")
    due = late_label(now - timedelta(minutes=10), datetime.now(UTC), ZoneInfo(ZONE))
    sent = texts(tg)
    assert f"(late: due {due}) late one" in sent
    note = next(text for text in sent if "long gone" in text)
    assert note.startswith("I missed a reminder due ") and "kioku was not running" in note
    (hourly,) = [text for text in sent if "hourly" in text]  # once for five missed slots
    assert hourly.startswith("(late: due ") and hourly.endswith(") hourly")


async def status_once_failed() -> dict[str, Any]:
    """`kioku status --json`'s schedule part, once it reports a failed run (or after WAIT)."""
    deadline = time.monotonic() + WAIT
    while True:
        code, out, err = await kioku("status", "--json")
        assert code == 0, err
        schedule: dict[str, Any] = json.loads(out)["schedule"]
        failed = [p for p in schedule["problems"] if p["state"] == "failed"]
        if failed or time.monotonic() > deadline or schedule["jobs"] == 0:
            return schedule


async def test_a_refused_send_is_retried_and_reported_in_status(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        daemon = await run_daemon(
            daemons, home, api, tmp_path, **env(tg), KIOKU_SCHEDULE__RETRY="5s"
        )
        tg.fail("sendMessage", Fault("error", 400, "Bad Request: chat not found"))
        await add("stretch", "--in", "1s")
        await tg.wait_for("sendMessage", count=1, within=WAIT)
        schedule = await status_once_failed()
        assert schedule["jobs"] == 1
        (problem,) = schedule["problems"]
        assert "chat not found" in problem["last_error"].lower()
        assert problem["attempts"] == 1 and problem["retry_at"] is not None
        code, shown, _ = await kioku("status")
        assert code == 0 and "scheduled jobs: 1, 1 with a problem:" in shown
        assert "job 1 of owner, due " in shown and "failed after 1 attempt(s)" in shown
        await tg.wait_for("sendMessage", count=2, within=WAIT)  # a retry after schedule.retry
        assert texts(tg) == ["stretch", "stretch"]  # the refused call, then the retry
        schedule = await status_once_failed()
        assert schedule["problems"] == []
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0
    log = daemon.log.read_text()
    assert "job_failed" in log and "job_retry" in log and "job_sent" in log


@in_module_loop
async def test_a_prompt_job_is_answered_by_the_model_and_stored_as_a_turn(shared: Shared) -> None:
    code, _, err = await kioku(
        "schedule", "add", "--person", OWNER, "--to", TO, "--in", "1s",
        "--prompt", "what is on today",
    )  # fmt: skip
    assert code == 0, err
    await arrives(shared.tg, "echo: what is on today")
    stored = stored_texts(shared.daemon.home)  # the answer is stored before it is sent
    assert ("assistant", "echo: what is on today") in stored
    assert any(role == "user" and "what is on today" in text for role, text in stored)


@in_module_loop
async def test_a_job_whose_identity_was_unlinked_fails_and_is_reported(shared: Shared) -> None:
    assert (await kioku("people", "link", "telegram:222", "--to", "alice"))[0] == 0
    code, out, err = await kioku(
        "schedule", "add", "--person", "alice", "--to", "telegram:222", "--in", "1h",
        "--text", "for alice", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert (await kioku("people", "unlink", "telegram:222"))[0] == 0
    # Due only once unlinked: `schedule run`, not a near due time a slow `unlink` could miss.
    assert (await kioku("schedule", "run", str(json.loads(out)["id"])))[0] == 0
    schedule = await status_once_failed()
    (problem,) = schedule["problems"]
    assert "telegram:222 is no longer one of alice's identities" in problem["last_error"]
    assert "for alice" not in texts(shared.tg)


@in_module_loop
async def test_schedule_run_sends_a_job_now_through_the_running_daemon(shared: Shared) -> None:
    job = await add("weekly review", "--every", "1w")
    code, out, err = await kioku("schedule", "run", str(job["id"]))
    assert code == 0, err
    assert "is due now" in out and "The running kioku was told." in out
    await arrives(shared.tg, "weekly review")
    listed = json.loads((await kioku("schedule", "list", "--json"))[1])
    (again,) = [listed_job for listed_job in listed if listed_job["id"] == job["id"]]
    assert again["next_run"] == job["next_run"]  # its slots stay where they were
