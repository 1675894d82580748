"""The doors of reminders and scheduled tasks: `kioku schedule add/cancel/run`, the model's
`schedule` tool and `/reminders`, each fed the hostile corpus and the inputs that broke
them (a count past SQLite's integers, bytes that are not UTF-8, a cron every minute, a
list of hundreds of jobs), and `kioku schedule add` run many at a time beside a daemon.

Each input gets a clear refusal (exit 1, a tool error the model reads, a reply), never a
traceback or an ERROR line; nothing is stored for a refused input, and what a command
stored it reports as done.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory.access.identities import ensure_person, link_identity
from memory.schedule.jobs import NewJob, Target, create_job, list_jobs
from memory.schedule.records import MAX_COUNT
from memory.schedule.timing import parse_when, zone_named
from memory.store.database import Store
from tests.helpers.cli_batch import Door, Job, kioku_batch, kioku_batch_async
from tests.helpers.daemon import Client, module_daemon
from tests.helpers.doors import no_unhandled
from tests.helpers.gateway_rig import Chat, GatewayRig, gateway_rig
from tests.helpers.hostile import ITEMS, PAST_SQLITE, small_items

TO = "telegram:5"
HUGE = str(PAST_SQLITE)
ADD = ["schedule", "add", "--person", "owner", "--to", TO]
OPTIONS = ("--text", "--prompt", "--name", "--cron", "--every", "--at", "--in", "--until")
ENV = {"KIOKU_SCHEDULE__MAX_JOBS_PER_PERSON": "100000"}


def shell_argument(raw: bytes) -> str:
    """`raw` as Python hands a shell argument to kioku: bytes that are not UTF-8 become
    lone surrogates (surrogateescape); an argument cannot hold a NUL."""
    return raw.replace(b"\0", b"").decode("utf-8", "surrogateescape")


def linked_home(home: Path) -> Path:
    """A home whose owner has the identity `TO`."""

    async def link() -> None:
        async with await Store.open(home / "state.db") as store:
            await ensure_person(store, "owner")
            await link_identity(store, TO, "owner")

    home.mkdir(parents=True)
    asyncio.run(link())
    return home


def stored_jobs(home: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "state.db") as db:
        return db.execute("SELECT text, prompt, name, remaining FROM jobs ORDER BY id").fetchall()


# -- kioku schedule ------------------------------------------------------------------------


def _option_value(option: str) -> list[str]:
    """What else `kioku schedule add` needs beside `option` to be a whole command."""
    when = [] if option in ("--cron", "--every", "--at", "--in") else ["--every", "1h"]
    what = [] if option in ("--text", "--prompt") else ["--text", "hi"]
    return when + what


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Door:
    """Every hostile item as every option of `kioku schedule add`, then the reported cases."""
    folder = tmp_path_factory.mktemp("schedule")
    home = linked_home(folder / "home")
    jobs = [
        Job(
            f"{option}:{name}",
            [*ADD, *_option_value(option), option, shell_argument(raw)],
            home,
            ENV,
        )
        for option in OPTIONS
        for name, raw in ITEMS.items()
    ]
    jobs += [
        Job("count-huge", [*ADD, "--every", "1h", "--count", HUGE, "--text", "a"], home, ENV),
        Job("count-max", [*ADD, "--every", "1h", "--count", str(MAX_COUNT), "--text", "max"], home),
        Job(
            "count-over",
            [*ADD, "--every", "1h", "--count", str(MAX_COUNT + 1), "--text", "a"],
            home,
        ),
        Job("text-bytes", [*ADD, "--in", "1h", "--text", shell_argument(b"bad \xff\xfe")], home),
        Job("cron-minute", [*ADD, "--cron", "* * * * *", "--prompt", "a turn"], home),
        Job("cron-close", [*ADD, "--cron", "0,10 9 * * *", "--text", "a"], home),
        Job("cron-apart", [*ADD, "--cron", "*/15 * * * *", "--text", "quarter"], home),
        Job("cancel-huge", ["schedule", "cancel", HUGE], home),
        Job("run-huge", ["schedule", "run", HUGE], home),
        Job("listed", ["schedule", "list", "--json"], home),
    ]
    return Door(home, kioku_batch(jobs, folder))


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("name", sorted(ITEMS))
def test_each_hostile_value_of_each_option_is_stored_or_refused_in_a_line(
    cli: Door, option: str, name: str
) -> None:
    ran = cli.ran[f"{option}:{name}"]
    ran.assert_clean()
    assert ran.code in (0, 1), ran.stderr
    if ran.code == 1:
        assert 0 < len(ran.stderr) < 1000, ran.stderr[:300]
    else:
        assert ran.stdout.startswith("Scheduled job ")


def test_no_job_holds_what_is_not_text_or_over_the_limits(cli: Door) -> None:
    for text, prompt, name, _ in stored_jobs(cli.folder):
        for value in (text, prompt, name):
            assert value is None or (len(value) <= 4000 and "\udcff" not in value)


def test_a_count_past_the_limit_says_the_limit_and_stores_nothing(cli: Door) -> None:
    for key in ("count-huge", "count-over"):
        ran = cli.ran[key]
        ran.assert_clean()
        assert ran.code == 1 and "the most runs a job may have" in ran.stderr
        assert "from 1 to 1,000,000" in ran.stderr
    assert cli.ran["count-max"].code == 0
    assert [row[3] for row in stored_jobs(cli.folder) if row[0] == "max"] == [MAX_COUNT]


def test_bytes_that_are_not_utf8_are_named_with_their_place(cli: Door) -> None:
    ran = cli.ran["text-bytes"]
    ran.assert_clean()
    assert ran.code == 1
    assert "--text is not UTF-8 text (byte 0xff at character 5)" in ran.stderr


def test_a_cron_closer_than_min_interval_is_refused_with_its_two_runs(cli: Door) -> None:
    for key, gap in (("cron-minute", "1m"), ("cron-close", "10m")):
        ran = cli.ran[key]
        ran.assert_clean()
        assert ran.code == 1
        assert f"runs {gap} apart (" in ran.stderr
        assert "closer than the minimum of 15m (schedule.min_interval)" in ran.stderr
    assert cli.ran["cron-apart"].code == 0


def test_an_id_past_sqlites_integers_is_no_such_job(cli: Door) -> None:
    for key in ("cancel-huge", "run-huge"):
        ran = cli.ran[key]
        ran.assert_clean()
        assert ran.code == 1 and f"there is no job {HUGE}" in ran.stderr


def test_the_list_after_it_all_reads(cli: Door) -> None:
    ran = cli.ran["listed"]
    ran.assert_clean()
    assert ran.code == 0
    assert len(json.loads(ran.stdout)) == len(stored_jobs(cli.folder))


# -- many `kioku schedule add` beside a running daemon ------------------------------------

BATCHES = 4
PER_BATCH = 60


async def test_adds_run_four_at_a_time_beside_the_daemon_all_succeed_once_each(
    tmp_path: Path,
) -> None:
    """Before, 6 in 400 printed a traceback (`PRAGMA optimize` found state.db locked while
    closing) after storing their job: a script that retried made duplicates."""
    async with module_daemon(tmp_path) as daemon:
        async with await Store.open(daemon.home / "state.db") as store:
            await link_identity(store, TO, "owner")
        batches = [
            [
                Job(f"{b}-{n}", [*ADD, "--in", "1d", "--text", f"job {b}-{n}"], daemon.home, ENV)
                for n in range(PER_BATCH)
            ]
            for b in range(BATCHES)
        ]
        done = await asyncio.gather(
            *(kioku_batch_async(jobs, tmp_path / f"batch-{b}") for b, jobs in enumerate(batches))
        )
        client = await Client.connect(daemon.home)
        assert await client.ask("after", "still there?") == "echo: still there?"
        await client.close()
    for results in done:
        for key, ran in results.items():
            ran.assert_clean()
            assert ran.code == 0, (key, ran.stderr[-500:])
            assert "The running kioku was told." in ran.stdout
    texts = [row[0] for row in stored_jobs(daemon.home)]
    assert sorted(texts) == sorted(f"job {b}-{n}" for b in range(BATCHES) for n in range(PER_BATCH))


def test_a_lock_held_past_the_busy_timeout_is_busy_try_again_and_stores_nothing(
    tmp_path: Path,
) -> None:
    """Another process holds state.db's write lock for longer than any command waits (30 s):
    the command says so, exit 1, and stores nothing."""
    home = linked_home(tmp_path / "home")
    holder = sqlite3.connect(home / "state.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        add = Job("add", [*ADD, "--in", "1h", "--text", "a"], home)
        ran = kioku_batch([add], tmp_path)["add"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    ran.assert_clean()
    assert ran.code == 1
    assert "is busy: another process" in ran.stderr and "try again" in ran.stderr
    assert stored_jobs(home) == []


# -- the schedule tool and /reminders ------------------------------------------------------

AIKO = "telegram:1"


@pytest.fixture
async def rig(home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The gateway rig; no reflection, which would take the model's scripted replies."""
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        yield rig


def tool_result(rig: GatewayRig) -> tuple[str, bool]:
    """The text of the last tool result kioku sent the model, and whether it was an error."""
    assert rig.api is not None
    for message in reversed(rig.api.last.json["messages"]):
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                return text, bool(block.get("is_error"))
    raise AssertionError("no tool result was sent")


async def tool(rig: GatewayRig, arguments: dict[str, Any], chat: str = "1") -> tuple[str, bool]:
    """The model calls the tool once in aiko's DM `chat` (a new chat: a session of its own,
    so one huge call does not make the next turn compact the history)."""
    assert rig.api is not None
    rig.api.reply_tool_use("schedule", arguments)
    rig.api.reply_text("ok")
    assert await rig.ask(rig.dm(AIKO, "please", f"m{len(rig.api.requests)}", chat=chat)) == "ok"
    return tool_result(rig)


TOOL_CASES = [
    ({"action": "create", "every": "1h", "count": int(HUGE), "text": "a"}, "1000000"),
    ({"action": "create", "cron": "* * * * *", "prompt": "a turn"}, "closer than the minimum"),
    ({"action": "cancel", "id": int(HUGE)}, "There is no job"),
    ({"action": "list", "page": int(HUGE)}, "no scheduled jobs"),
    ({"action": "create", "in": "1h", "text": "a", "to": "x" * 100_000}, "to: the maxLength is 32"),
    ({"action": "create", "cron": "1," * 100_000 + "2 * * * *", "text": "a"}, "characters long"),
]


@pytest.mark.parametrize(("arguments", "says"), TOOL_CASES)
async def test_the_tool_refuses_each_reported_input_with_a_reason_the_model_reads(
    rig: GatewayRig, caplog: pytest.LogCaptureFixture, arguments: dict[str, Any], says: str
) -> None:
    with no_unhandled(caplog) as logs:
        text, is_error = await tool(rig, arguments)
    assert says in text, text
    assert is_error or arguments["action"] == "list"
    assert not any(entry["event"] == "tool_failed" for entry in logs)
    assert await list_jobs(rig.store, "aiko") == []


@pytest.mark.parametrize("field", ["text", "prompt", "name", "cron", "every", "at", "in", "until"])
async def test_each_hostile_text_in_each_tool_field_is_a_tool_error_or_a_job(
    rig: GatewayRig, caplog: pytest.LogCaptureFixture, field: str
) -> None:
    for name, raw in small_items():  # past 2 MiB, arguments stop at the model's door
        value = raw.decode("utf-8", "replace")
        arguments = {"action": "create", "every": "1h", "text": "hi", field: value}
        if field in ("cron", "at", "in"):
            del arguments["every"]
        if field == "prompt":
            del arguments["text"]
        with no_unhandled(caplog) as logs:
            text, is_error = await tool(rig, arguments, chat=name)
        assert not any(entry["event"] == "tool_failed" for entry in logs), name
        assert len(text) < 2000, (name, text[:300])
        assert is_error or text.startswith("Scheduled job "), (name, text)


async def many_jobs(rig: GatewayRig, count: int) -> None:
    now = datetime.now(UTC)
    target = Target("telegram", "1", "", "dm", AIKO)
    for number in range(count):
        when = parse_when(
            at=None,
            in_=f"{number + 1}h",
            cron=None,
            every=None,
            zone=zone_named("UTC"),
            now=now,
            min_interval=900,
        )
        job = NewJob("aiko", when, target, text=f"errand {number}")
        await create_job(rig.store, job, now=now, max_jobs=1000)


async def test_reminders_shows_twenty_at_a_time_and_says_how_to_see_more(rig: GatewayRig) -> None:
    await many_jobs(rig, 45)
    aiko = Chat(rig, AIKO)
    first = await aiko("/reminders")
    assert "(page 1 of 3, 45 in all)" in first and "25 more: /reminders page 2" in first
    assert first.count("\n- ") == 20 and "errand 0 " in first and "errand 20 " not in first
    last = await aiko("/reminders page 3")
    assert last.count("\n- ") == 5 and "errand 44 " in last and "more:" not in last
    past = await aiko(f"/reminders page {HUGE}")
    assert past.startswith(f"There is no page {HUGE}: you have 45")
    assert "no job" in await aiko(f"/reminders cancel {HUGE}")
    assert "Give one job id" in await aiko("/reminders cancel " + "9" * 5000)
    assert "Unknown /reminders" in await aiko("/reminders page " + "9" * 5000)


async def test_the_tool_lists_twenty_at_a_time_with_the_next_page_named(rig: GatewayRig) -> None:
    await many_jobs(rig, 45)
    text, is_error = await tool(rig, {"action": "list"})
    assert not is_error and "(1 to 20 of 45, the next to run first)" in text
    assert text.count("\n- ") == 20 and "25 more: call list with page 2." in text
    text, _ = await tool(rig, {"action": "list", "page": 3})
    assert text.count("\n- ") == 5 and "more:" not in text
    text, is_error = await tool(rig, {"action": "list", "page": 4})
    assert is_error and "There is no page 4: the person has 45 scheduled jobs, 3 page(s)" in text
