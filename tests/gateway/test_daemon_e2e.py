"""The whole daemon as a person meets it: `kioku serve` in a subprocess, a fake model on
127.0.0.1, and messages through the CLI socket — round trips, shutdown mid-turn, kill -9,
redeliveries across a restart.

Tests that leave the daemon running share one per module (`plain`, with no platform, and
`platforms`, serving Telegram, Discord and Slack, each test its own stranger on its own
platform): each must stop on SIGTERM with exit 0 and nothing unhandled at the module's end.
Tests that stop, kill or restart a daemon start their own."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from memory.store.database import Store
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Client, Daemon, run_daemon, stored_texts
from tests.helpers.door_daemon import door_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import KIOKU

in_module_loop = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")


@dataclass
class Platforms:
    """The shared daemon serving every platform, and the fakes it talks to."""

    daemon: Daemon
    tg: FakeTelegram
    discord: FakeDiscord
    slack: FakeSlack


@module_fixture
async def shared_api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@module_fixture
async def plain(
    tmp_path_factory: pytest.TempPathFactory, shared_api: GatedAnthropic
) -> AsyncIterator[Daemon]:
    """A daemon with no platform configured, for the tests that leave it running."""
    async with door_daemon(tmp_path_factory.mktemp("plain"), shared_api) as daemon:
        yield daemon


@module_fixture
async def platforms(
    tmp_path_factory: pytest.TempPathFactory, shared_api: GatedAnthropic
) -> AsyncIterator[Platforms]:
    """A daemon serving Telegram, Discord and Slack, no owner: every sender is a stranger."""
    async with (
        FakeTelegram() as tg,
        FakeDiscord(heartbeat_interval_ms=1000) as discord,
    ):
        slack = await FakeSlack(users={"U0STRANGER": "Sam"}).start()
        try:
            settings = {
                "KIOKU_TELEGRAM__TOKEN": TELEGRAM_TOKEN,
                "KIOKU_TELEGRAM__BASE_URL": tg.base_url,
                "KIOKU_TELEGRAM__BASE_FILE_URL": tg.base_file_url,
                "KIOKU_TELEGRAM__POLL_TIMEOUT": "1",
                **discord.env(),
                "KIOKU_SLACK__BOT_TOKEN": "xoxb-test",
                "KIOKU_SLACK__APP_TOKEN": "xapp-test",
                "KIOKU_SLACK__BASE_URL": slack.base_url,
            }
            tmp = tmp_path_factory.mktemp("platforms")
            async with door_daemon(tmp, shared_api, **settings) as daemon:
                assert b"STATUS=serving: cli, discord, slack, telegram" in daemon.ready
                yield Platforms(daemon, tg, discord, slack)
        finally:
            await slack.close()


async def run_kioku(home: Path, *args: str) -> tuple[int | None, str, str]:
    """`kioku ARGS` against the daemon whose KIOKU_HOME is `home`."""
    process = await asyncio.create_subprocess_exec(
        str(KIOKU),
        *args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "KIOKU_HOME": str(home)},
    )
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    return process.returncode, out.decode(), err.decode()


@in_module_loop
async def test_kioku_chat_round_trip_through_the_daemon_and_the_model(plain: Daemon) -> None:
    code, out, err = await run_kioku(plain.home, "chat", "-m", "hello kioku")
    assert code == 0, err
    assert out.strip() == "echo: hello kioku"
    assert ("user", "hello kioku") in stored_texts(plain.home)
    assert ("assistant", "echo: hello kioku") in stored_texts(plain.home)


@in_module_loop
async def test_status_shows_every_platform_and_which_are_not_configured(plain: Daemon) -> None:
    code, out, err = await run_kioku(plain.home, "status", "--json")
    assert code == 0, err
    adapters = json.loads(out)["adapters"]
    assert adapters["cli"]["state"] == "running"
    assert {adapters[name]["state"] for name in ("telegram", "discord", "slack")} == {
        "not configured"
    }


async def test_sigterm_mid_turn_lets_the_turn_finish_and_exits_0(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    gate = api.gate("slow")
    client = await Client.connect(home)
    await client.send("m1", "a slow question")
    await asyncio.wait_for(api.arrived["slow"].wait(), WAIT)
    daemon.signal(signal.SIGTERM)
    await daemon.until(b"STOPPING=1")
    gate.set()
    assert await client.reply("m1") == "echo: a slow question"
    assert await daemon.exit_code() == 0
    await client.close()


async def test_kill_9_loses_nothing_that_was_answered(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    client = await Client.connect(home)
    for number in range(8):
        assert await client.ask(f"m{number}", f"note {number}") == f"echo: note {number}"
    daemon.signal(signal.SIGKILL)
    assert await daemon.exit_code() == -signal.SIGKILL
    await client.close()
    restarted = await run_daemon(daemons, home, api, tmp_path)
    texts = stored_texts(home)
    for number in range(8):
        assert ("user", f"note {number}") in texts
        assert ("assistant", f"echo: note {number}") in texts
    async with await Store.open(home / "state.db") as store:
        report = await store.check_integrity()
    assert report.ok, report.problems
    again = await Client.connect(home)
    assert await again.ask("after", "still here?") == "echo: still here?"
    await again.close()
    restarted.signal(signal.SIGTERM)
    assert await restarted.exit_code() == 0


async def test_a_message_answered_before_a_restart_is_not_answered_again(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    client = await Client.connect(home)
    assert await client.ask("same-id", "only once") == "echo: only once"
    await client.close()
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
    restarted = await run_daemon(daemons, home, api, tmp_path)
    client = await Client.connect(home)
    await client.send("same-id", "only once")
    assert await client.ask("next-id", "and this") == "echo: and this"
    assert [text for role, text in stored_texts(home) if role == "user"] == [
        "only once",
        "and this",
    ]
    await client.close()
    restarted.signal(signal.SIGTERM)
    assert await restarted.exit_code() == 0


@in_module_loop
async def test_a_second_daemon_on_the_same_home_is_refused(plain: Daemon) -> None:
    code, _, err = await run_kioku(plain.home, "serve")
    assert code == 1
    assert f"kioku is already running for {plain.home}" in err


def test_a_damaged_database_stops_start_up_with_a_clear_message(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "state.db").write_bytes(b"not a database " * 400)
    result = subprocess.run([str(KIOKU), "serve"], capture_output=True, text=True, timeout=WAIT)
    assert result.returncode == 1
    assert "cannot open" in result.stderr and "file is not a database" in result.stderr
    assert "Traceback" not in result.stderr


@in_module_loop
async def test_a_telegram_stranger_pairs_and_is_answered_through_the_daemon(
    platforms: Platforms,
) -> None:
    tg = platforms.tg
    await tg.dm(4242, "hello?")
    [pairing] = await tg.wait_for("sendMessage", within=WAIT)
    await pair_through_cli(platforms.daemon.home, pairing.text, "mia")
    await tg.dm(4242, "now may I?")
    replies = await tg.wait_for("sendMessage", count=2, within=WAIT)
    assert replies[1].text == "echo: now may I?"


async def pair_through_cli(home: Path, text: str, person: str) -> None:
    """Approve the pairing code found in `text` with the real `kioku pairing approve`."""
    code = re.search(r"pairing code: ([A-Z0-9]{8})", text)
    assert code is not None, text
    returncode, _, err = await run_kioku(home, "pairing", "approve", code.group(1), "--as", person)
    assert returncode == 0, err


@in_module_loop
async def test_a_discord_stranger_pairs_and_is_answered_through_the_daemon(
    platforms: Platforms,
) -> None:
    discord = platforms.discord
    await discord.wait_ready(1, within=WAIT)
    await discord.push(discord.dm("hello?"))
    await pair_through_cli(platforms.daemon.home, (await discord.next_post(WAIT)).content, "alice")
    await discord.push(discord.dm("now may I?"))
    assert (await discord.next_post(WAIT)).content == "echo: now may I?"


@in_module_loop
async def test_a_slack_stranger_pairs_and_is_answered_through_the_daemon(
    platforms: Platforms,
) -> None:
    slack = platforms.slack
    await slack.push(slack.dm("U0STRANGER", "hello?"))
    [pairing] = await slack.wait_posts(1, WAIT)
    await pair_through_cli(platforms.daemon.home, pairing["text"], "sam")
    await slack.push(slack.dm("U0STRANGER", "now may I?"))
    posts = await slack.wait_posts(2, WAIT)
    assert posts[1]["text"] == "echo: now may I?"
