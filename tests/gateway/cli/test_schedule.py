"""`kioku schedule` through the real entry point, kioku not running: output, exit codes,
each person seeing only their own jobs, and every bad input refused with what to do."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from memory.access.identities import ensure_person, link_identity
from memory.store.database import Store

Kioku = Callable[..., subprocess.CompletedProcess[str]]
ENV = {"KIOKU_SCHEDULE__DEFAULT_TIMEZONE": "Asia/Tokyo"}


@pytest.fixture
def people(home: Path) -> None:
    """alice (telegram:201, slack:T1:U7) and bob (telegram:202)."""

    home.mkdir(parents=True, exist_ok=True)

    async def run() -> None:
        async with await Store.open(home / "state.db") as store:
            for person, identities in (
                ("alice", ["telegram:201", "slack:T1:U7"]),
                ("bob", ["telegram:202"]),
            ):
                await ensure_person(store, person)
                for identity in identities:
                    await link_identity(store, identity, person)

    asyncio.run(run())


def add(kioku: Kioku, person: str, to: str, *args: str) -> subprocess.CompletedProcess[str]:
    return kioku("schedule", "add", "--person", person, "--to", to, *args, env=ENV)


def listed(kioku: Kioku, *args: str) -> list[dict]:
    result = kioku("schedule", "list", "--json", *args, env=ENV)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_add_answers_with_the_id_and_next_runs_in_local_time(kioku: Kioku, people: None) -> None:
    result = add(kioku, "alice", "telegram:201", "--cron", "0 9 * * 1", "--text", "week plan")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Scheduled job 1 for alice, to telegram:201: next ")
    assert result.stdout.count("09:00 JST") == 3
    assert "kioku is not running: the job is sent when it starts" in result.stdout
    (job,) = listed(kioku)
    assert job["target"] == {
        "platform": "telegram",
        "chat": "201",
        "thread": "",
        "chat_kind": "dm",
        "identity": "telegram:201",
    }
    assert (job["kind"], job["spec"], job["text"]) == ("cron", "0 9 * * 1", "week plan")


def test_a_slack_identity_targets_its_user(kioku: Kioku, people: None) -> None:
    assert add(kioku, "alice", "slack:T1:U7", "--in", "1h", "--prompt", "my week").returncode == 0
    (job,) = listed(kioku)
    assert job["target"]["chat"] == "U7" and job["prompt"] == "my week"


def test_each_person_lists_only_their_own_jobs(kioku: Kioku, people: None) -> None:
    add(kioku, "alice", "telegram:201", "--in", "1h", "--text", "alice's secret")
    add(kioku, "bob", "telegram:202", "--in", "2h", "--text", "bob's")
    assert [job["text"] for job in listed(kioku, "--person", "bob")] == ["bob's"]
    assert [job["person"] for job in listed(kioku)] == ["alice", "bob"]
    plain = kioku("schedule", "list", "--person", "bob", env=ENV)
    assert "alice" not in plain.stdout and "bob's" in plain.stdout


def test_another_persons_identity_is_refused(kioku: Kioku, people: None) -> None:
    result = add(kioku, "bob", "telegram:201", "--in", "1h", "--text", "hi")
    assert result.returncode == 1
    assert "telegram:201 is not one of bob's identities (telegram:202)" in result.stderr
    assert listed(kioku) == []


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--in", "1h"], 2, "exactly one of --text"),
        (["--in", "1h", "--text", "a", "--prompt", "b"], 2, "exactly one of --text"),
        (["--text", "a"], 2, "exactly one of --at, --in"),
        (["--in", "1h", "--at", "2030-01-01T09:00", "--text", "a"], 2, "exactly one of --at"),
        (["--at", "2020-01-01T09:00", "--text", "a"], 1, "which has passed"),
        (["--cron", "61 * * * *", "--text", "a"], 1, "cron"),
        (["--every", "5m", "--text", "a"], 1, "shorter than the minimum"),
        (["--in", "soon", "--text", "a"], 1, "soon"),
        (["--every", "1h", "--until", "next week", "--text", "a"], 1, "ISO 8601"),
    ],
)
def test_bad_input_is_refused_with_what_to_send(
    kioku: Kioku, people: None, args: list[str], code: int, says: str
) -> None:
    result = add(kioku, "alice", "telegram:201", *args)
    assert result.returncode == code
    assert says in result.stderr
    assert listed(kioku) == []


def test_a_cli_identity_is_refused(kioku: Kioku, people: None) -> None:
    result = add(kioku, "alice", "cli:1000", "--in", "1h", "--text", "a")
    assert result.returncode == 1 and "the CLI has no chat" in result.stderr


def test_unknown_person_and_unknown_job_are_refused(kioku: Kioku, people: None) -> None:
    result = kioku("schedule", "list", "--person", "carol", env=ENV)
    assert result.returncode == 1 and "no person 'carol'" in result.stderr
    for command in ("cancel", "run"):
        result = kioku("schedule", command, "7", env=ENV)
        assert result.returncode == 1 and "there is no job 7" in result.stderr


def test_cancel_removes_the_job(kioku: Kioku, people: None) -> None:
    add(kioku, "alice", "telegram:201", "--in", "1h", "--text", "a")
    result = kioku("schedule", "cancel", "1", env=ENV)
    assert result.returncode == 0 and "Cancelled job 1 of alice." in result.stdout
    assert listed(kioku) == []
