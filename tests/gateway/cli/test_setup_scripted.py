"""`kioku setup` for scripts: `--non-interactive` validates against the services and writes
what it was given (or names what is wrong, writing nothing); `--claim-owner` finds the
owner alone, through the running daemon when there is one."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.fakes.telegram import TOKEN
from tests.helpers.daemon import Daemon
from tests.helpers.paths import ROOT
from tests.helpers.platform_daemons import OWNER_CHAT
from tests.helpers.setup_wizard import GOOD_KEY, WAIT, Services, services


@pytest_asyncio.fixture
async def fakes() -> AsyncIterator[Services]:
    async with services() as started:
        yield started


async def kioku(*args: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gateway",
        *args,
        env={**os.environ, **env},
        cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def finished(process: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    return int(process.returncode or 0), out.decode(), err.decode()


def telegram_only(fakes: Services) -> dict[str, str]:
    return {
        "KIOKU_TELEGRAM__TOKEN": TOKEN,
        "KIOKU_TELEGRAM__BASE_URL": fakes.tg.base_url,
        "KIOKU_TELEGRAM__BASE_FILE_URL": fakes.tg.base_file_url,
    }


def files_of(home: Path) -> dict[str, str]:
    """The setup's files in the home by name, backups included."""
    names = ("config.toml", ".env", "config.toml.bak", ".env.bak")
    return {name: (home / name).read_text() for name in names if (home / name).is_file()}


async def test_non_interactive_with_a_bad_token_names_it_and_writes_nothing(
    fakes: Services, home: Path
) -> None:
    env = {**telegram_only(fakes), "KIOKU_TELEGRAM__TOKEN": "1:wrong"}
    code, _, err = await finished(await kioku("setup", "--non-interactive", env=env))
    assert code == 1
    assert "telegram.token (KIOKU_TELEGRAM__TOKEN): Telegram refused the token" in err
    assert "@BotFather" in err and "1:wrong" not in err
    assert files_of(home) == {}


async def test_non_interactive_writes_every_setting_given_endpoints_included(
    fakes: Services, home: Path
) -> None:
    env = {**fakes.endpoints(), **telegram_only(fakes), "KIOKU_LLM__API_KEY": GOOD_KEY}
    args = ("setup", "--non-interactive", "--owner", "telegram:111", "--timezone", "Asia/Tokyo")
    code, out, err = await finished(await kioku(*args, env=env))
    assert code == 0, err
    assert "KIOKU_LLM__API_KEY=********" in out and GOOD_KEY not in out
    config = tomllib.loads(files_of(home)["config.toml"])
    assert config["llm"] == {
        "base_url": fakes.api.base_url,
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
    }
    assert config["telegram"] == {
        "base_url": fakes.tg.base_url,
        "base_file_url": fakes.tg.base_file_url,
    }
    assert config["owner"] == {"identities": ["telegram:111"]}
    assert (
        files_of(home)[".env"] == f"KIOKU_LLM__API_KEY={GOOD_KEY}\nKIOKU_TELEGRAM__TOKEN={TOKEN}\n"
    )


async def claim(env: dict[str, str], seconds: str) -> tuple[asyncio.subprocess.Process, str]:
    """`kioku setup --claim-owner telegram` and its code, once it has printed it (a DM
    carrying the code counts from then on)."""
    process = await kioku("setup", "--claim-owner", "telegram", "--timeout", seconds, env=env)
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), WAIT)).decode()
    assert line.startswith("code: ") and len(line.strip()) == 12
    return process, line.split()[1]


async def test_claim_owner_without_a_daemon_adds_the_sender_to_the_owners(
    fakes: Services, home: Path
) -> None:
    process, code = await claim(telegram_only(fakes), "20")
    await fakes.tg.dm(222, "is this kioku?")
    await fakes.tg.dm(OWNER_CHAT, code.lower())
    status, out, err = await finished(process)
    assert status == 0, err
    assert f"owner: telegram:{OWNER_CHAT}" in out and "came from telegram:222" in err
    owners = tomllib.loads(files_of(home)["config.toml"])["owner"]["identities"]
    assert owners == [f"telegram:{OWNER_CHAT}"]


async def test_claim_owner_that_times_out_exits_1_and_writes_nothing(
    fakes: Services, home: Path
) -> None:
    process, _ = await claim(telegram_only(fakes), "1")
    status, _, err = await finished(process)
    assert status == 1 and "nothing written" in err
    assert not (home / "config.toml").exists()


async def test_claim_owner_goes_through_the_running_daemon_which_knows_the_owner_at_once(
    fakes: Services, home: Path, tmp_path: Path
) -> None:
    env = {**telegram_only(fakes), "KIOKU_TELEGRAM__POLL_TIMEOUT": "1"}
    daemon = await Daemon(home, fakes.api, tmp_path, 0).start(**env)
    try:
        process, code = await claim(env, "20")
        await fakes.tg.dm(OWNER_CHAT, f"/start {code}")
        status, _, err = await finished(process)
        assert status == 0, err
        assert "you are kioku's owner" in fakes.tg.sent()[-1].text
        assert '"owner_claimed"' in daemon.log.read_text()  # the daemon's poller saw it
        before = len(fakes.tg.sent())
        await fakes.tg.dm(OWNER_CHAT, "hello")
        await fakes.tg.wait_for("sendMessage", count=before + 1, within=WAIT)
        assert fakes.tg.sent()[-1].text == "echo: hello"  # the owner, not a pairing code

        timed_out, _ = await claim(env, "1")
        status, _, _ = await finished(timed_out)
        assert status == 1
    finally:
        daemon.signal(signal.SIGTERM)
        await daemon.exit_code()
        daemon.notify.close()
    owners = tomllib.loads(files_of(home)["config.toml"])["owner"]["identities"]
    assert owners == [f"telegram:{OWNER_CHAT}"]
