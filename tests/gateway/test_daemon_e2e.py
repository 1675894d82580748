"""The whole daemon as a person meets it: `kioku serve` in a subprocess, a fake model on
127.0.0.1, and messages through the CLI socket — round trips, shutdown mid-turn, kill -9,
redeliveries across a restart."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
from pathlib import Path

from memory.store.database import Store
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Client, Daemon, run_daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import KIOKU


async def test_kioku_chat_round_trip_through_the_daemon_and_the_model(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    chat = await asyncio.create_subprocess_exec(
        str(KIOKU), "chat", "-m", "hello kioku", stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(chat.communicate(), WAIT)
    assert chat.returncode == 0, err.decode()
    assert out.decode().strip() == "echo: hello kioku"
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
    assert ("user", "hello kioku") in stored_texts(home)
    assert ("assistant", "echo: hello kioku") in stored_texts(home)


async def test_status_shows_every_platform_and_which_are_not_configured(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    status = await asyncio.create_subprocess_exec(
        str(KIOKU), "status", "--json", stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(status.communicate(), WAIT)
    assert status.returncode == 0, err.decode()
    adapters = json.loads(out)["adapters"]
    assert adapters["cli"]["state"] == "running"
    assert {adapters[name]["state"] for name in ("telegram", "discord", "slack")} == {
        "not configured"
    }
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0


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


async def test_a_second_daemon_on_the_same_home_is_refused(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    second = await asyncio.create_subprocess_exec(
        str(KIOKU), "serve", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, err = await asyncio.wait_for(second.communicate(), WAIT)
    assert second.returncode == 1
    assert f"kioku is already running for {home}" in err.decode()
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0


def test_a_damaged_database_stops_start_up_with_a_clear_message(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "state.db").write_bytes(b"not a database " * 400)
    result = subprocess.run([str(KIOKU), "serve"], capture_output=True, text=True, timeout=WAIT)
    assert result.returncode == 1
    assert "cannot open" in result.stderr and "file is not a database" in result.stderr
    assert "Traceback" not in result.stderr


async def test_a_telegram_stranger_pairs_and_is_answered_through_the_daemon(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        daemon = await run_daemon(
            daemons,
            home,
            api,
            tmp_path,
            KIOKU_TELEGRAM__TOKEN=TELEGRAM_TOKEN,
            KIOKU_TELEGRAM__BASE_URL=tg.base_url,
            KIOKU_TELEGRAM__BASE_FILE_URL=tg.base_file_url,
            KIOKU_TELEGRAM__POLL_TIMEOUT="1",
        )
        assert b"STATUS=serving: cli, telegram" in daemon.ready
        await tg.dm(4242, "hello?")
        [pairing] = await tg.wait_for("sendMessage", within=WAIT)
        await pair_through_cli(pairing.text, "mia")
        await tg.dm(4242, "now may I?")
        replies = await tg.wait_for("sendMessage", count=2, within=WAIT)
        assert replies[1].text == "echo: now may I?"
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0


async def pair_through_cli(text: str, person: str) -> None:
    """Approve the pairing code found in `text` with the real `kioku pairing approve`."""
    code = re.search(r"pairing code: ([A-Z0-9]{8})", text)
    assert code is not None, text
    approve = await asyncio.create_subprocess_exec(
        str(KIOKU),
        "pairing",
        "approve",
        code.group(1),
        "--as",
        person,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(approve.communicate(), WAIT)
    assert approve.returncode == 0, err.decode()


async def test_a_discord_stranger_pairs_and_is_answered_through_the_daemon(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as discord:
        daemon = await run_daemon(
            daemons,
            home,
            api,
            tmp_path,
            KIOKU_DISCORD__TOKEN=discord.token,
            KIOKU_DISCORD__API_BASE=discord.api_base,
            KIOKU_DISCORD__GATEWAY_URL=discord.gateway_url,
        )
        assert b"discord" in daemon.ready
        await discord.push(discord.dm("hello?"))
        await pair_through_cli((await discord.next_post(WAIT)).content, "alice")
        await discord.push(discord.dm("now may I?"))
        assert (await discord.next_post(WAIT)).content == "echo: now may I?"
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0


async def test_a_slack_stranger_pairs_and_is_answered_through_the_daemon(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    slack = await FakeSlack(users={"U0STRANGER": "Sam"}).start()
    try:
        daemon = await run_daemon(
            daemons,
            home,
            api,
            tmp_path,
            KIOKU_SLACK__BOT_TOKEN="xoxb-test",
            KIOKU_SLACK__APP_TOKEN="xapp-test",
            KIOKU_SLACK__BASE_URL=slack.base_url,
        )
        assert b"slack" in daemon.ready
        await slack.push(slack.dm("U0STRANGER", "hello?"))
        [pairing] = await slack.wait_posts(1, WAIT)
        await pair_through_cli(pairing["text"], "sam")
        await slack.push(slack.dm("U0STRANGER", "now may I?"))
        posts = await slack.wait_posts(2, WAIT)
        assert posts[1]["text"] == "echo: now may I?"
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0
    finally:
        await slack.close()
