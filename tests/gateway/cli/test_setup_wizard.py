"""`kioku setup` driven through a pseudo-terminal against the fakes: the whole way from an
empty home to the owner's Telegram DM answered, a wrong key asked again, Ctrl-C leaving
nothing behind, a re-run that changes one section only, and Slack's app manifest shown
while connecting Slack."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from adapters.slack.manifest import manifest_yaml
from gateway.commands.builtin import SLASH_COMMANDS
from tests.fakes.discord import ALICE_ID
from tests.fakes.slack import TEAM
from tests.fakes.telegram import TOKEN
from tests.helpers.paths import ROOT
from tests.helpers.setup_wizard import GOOD_KEY, WAIT, Services, Terminal, services

OWNER = 111
STRANGER = 222


@pytest_asyncio.fixture
async def fakes() -> AsyncIterator[Services]:
    async with services() as started:
        yield started


def configured(home: Path, config: str, env: str) -> None:
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text(config)
    (home / ".env").write_text(env)


def private(path: Path) -> bool:
    return path.stat().st_mode & 0o777 == 0o600


async def through_the_model_step(wizard: Terminal) -> None:
    await wizard.answer("Provider (anthropic, ollama, lmstudio, openai, openrouter, other)", "")
    await wizard.answer("API key:", GOOD_KEY)
    await wizard.expect("✓ 3 model(s) available")
    await wizard.answer("Model [claude-sonnet-4-5]:", "")


async def test_the_wizard_sets_everything_up_and_the_owner_is_answered_without_pairing(
    fakes: Services, home: Path, tmp_path: Path
) -> None:
    wizard = Terminal("setup", "--timeout", "20", env=fakes.endpoints())
    try:
        await through_the_model_step(wizard)
        await wizard.answer("Connect Telegram? [y/N]:", "y")
        await wizard.answer("Bot token:", TOKEN)
        await wizard.expect("✓ @kioku_bot")
        await wizard.answer("Connect Discord? [y/N]:", "y")
        await wizard.answer("Bot token:", fakes.discord.token)
        await wizard.expect("Invite it to a server: https://discord.com/oauth2/authorize?")
        await wizard.answer("Connect Slack? [y/N]:", "y")
        await wizard.answer("Bot token (xoxb-…):", "xoxb-test")
        await wizard.answer("App token (xapp-…):", "xapp-test")
        await wizard.expect("✓ Socket Mode connects")
        await wizard.answer("Connect Matrix? [y/N]:", "")
        sockets = fakes.slack.connections

        await wizard.answer("Find your Telegram identity now? [Y/n]:", "")
        code = await wizard.code()
        await fakes.tg.dm(STRANGER, "hello?")
        await wizard.expect(f"a message without the code came from telegram:{STRANGER}")
        await fakes.tg.dm(OWNER, f"/start {code}")
        await wizard.expect(f"✓ you are telegram:{OWNER}")
        assert fakes.tg.sent()[-1].params["chat_id"] == str(OWNER)

        await wizard.answer("Find your Discord identity now? [Y/n]:", "")
        code = await wizard.code()
        await fakes.discord.wait_ready(1, within=WAIT)
        await fakes.discord.push(fakes.discord.dm(code.lower()))
        await wizard.expect(f"✓ you are discord:{ALICE_ID}")

        await wizard.answer("Find your Slack identity now? [Y/n]:", "")
        code = await wizard.code()
        await fakes.slack.wait_for(lambda: fakes.slack.connections > sockets, within=WAIT)
        await fakes.slack.push(fakes.slack.dm("U0OWNER", code))
        await wizard.expect(f"✓ you are slack:{TEAM}:U0OWNER")

        await wizard.answer("Telegram (pairing, allowlist, open, disabled) [pairing]:", "")
        await wizard.answer("Discord (pairing, allowlist, open, disabled) [pairing]:", "")
        await wizard.answer("Slack (pairing, allowlist, open, disabled) [pairing]:", "allowlist")
        await wizard.answer("Your time zone (IANA name, e.g. Europe/Paris)", "Asia/Tokyo")
        await wizard.expect("+KIOKU_TELEGRAM__TOKEN=********")
        await wizard.answer("Write these files? [Y/n]:", "")
        await wizard.answer("Install kioku as a systemd service? (no, user, system) [no]:", "")
        await wizard.expect("3. `kioku chat`")
        assert await wizard.exit_status() == 0
    finally:
        wizard.close()
        (tmp_path / "transcript.txt").write_text(wizard.transcript.getvalue())

    config = tomllib.loads((home / "config.toml").read_text())
    assert config["llm"] == {
        "provider": "anthropic",
        "base_url": fakes.api.base_url,
        "model": "claude-sonnet-4-5",
    }
    assert config["owner"]["identities"] == [
        f"telegram:{OWNER}",
        f"discord:{ALICE_ID}",
        f"slack:{TEAM}:U0OWNER",
    ]
    assert config["slack"]["dm_policy"] == "allowlist"
    assert config["schedule"] == {"default_timezone": "Asia/Tokyo"}
    env = (home / ".env").read_text()
    assert f"KIOKU_TELEGRAM__TOKEN={TOKEN}" in env and f"KIOKU_LLM__API_KEY={GOOD_KEY}" in env
    assert "token" not in (home / "config.toml").read_text().replace("_token", "")
    assert private(home / "config.toml") and private(home / ".env")
    assert GOOD_KEY not in wizard.transcript.getvalue()

    await serve_answers_the_owner(fakes, home)


async def serve_answers_the_owner(fakes: Services, home: Path) -> None:
    """`kioku serve` with only KIOKU_HOME (and no web page): the files are the setup."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    env |= {"KIOKU_HOME": str(home), "KIOKU_WEB__ENABLED": "false", "KIOKU_LOG__FORMAT": "json"}
    daemon = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gateway",
        "serve",
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        before = len(fakes.tg.sent())
        await fakes.tg.dm(OWNER, "good morning")
        while not any(call.text == "echo: good morning" for call in fakes.tg.sent()[before:]):
            await fakes.tg.wait_for("sendMessage", count=len(fakes.tg.sent()) + 1, within=WAIT)
        assert not any("pairing" in call.text.lower() for call in fakes.tg.sent()[before:])
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(daemon.wait(), WAIT) == 0


async def test_a_refused_key_is_said_and_asked_again(fakes: Services, home: Path) -> None:
    wizard = Terminal("setup", env=fakes.endpoints())
    try:
        await wizard.answer("Provider (anthropic", "anthropic")
        await wizard.answer("API key:", "sk-ant-wrong")
        await wizard.expect("✗ Anthropic refused the key: copy the key again")
        await wizard.answer("API key:", GOOD_KEY)
        await wizard.expect("✓ 3 model(s) available")
    finally:
        wizard.close()


async def test_ctrl_c_mid_way_leaves_without_writing_anything(fakes: Services, home: Path) -> None:
    wizard = Terminal("setup", env=fakes.endpoints())
    try:
        await through_the_model_step(wizard)
        await wizard.expect("Connect Telegram? [y/N]:")
        wizard.child.sendcontrol("c")
        await wizard.expect("nothing was written")
        assert await wizard.exit_status() == 130
    finally:
        wizard.close()
    assert not (home / "config.toml").exists() and not (home / ".env").exists()


async def test_connecting_slack_prints_the_app_manifest_with_every_command(
    fakes: Services, home: Path
) -> None:
    wizard = Terminal("setup", env=fakes.endpoints())
    try:
        await through_the_model_step(wizard)
        await wizard.answer("Connect Telegram? [y/N]:", "")
        await wizard.answer("Connect Discord? [y/N]:", "")
        await wizard.answer("Connect Slack? [y/N]:", "y")
        await wizard.expect("Bot token (xoxb-…):")
        wizard.child.sendcontrol("c")
        await wizard.expect("nothing was written")
        assert await wizard.exit_status() == 130
    finally:
        wizard.close()
    shown = wizard.transcript.getvalue().replace("\r\n", "\n")
    manifest = shown.split("\n---\n")[1]
    assert manifest + "\n" == manifest_yaml(SLASH_COMMANDS.menu())


async def test_a_rerun_changes_one_section_and_keeps_the_rest(fakes: Services, home: Path) -> None:
    before = (
        '# mine\n[llm]\nprovider = "anthropic"\nmodel = "claude-haiku-4-5"\n'
        f'base_url = "{fakes.api.base_url}"\n\n[memory.notes]\nmemory_limit = 3000\n\n'
        '[owner]\nidentities = ["telegram:111"]\n\n[schedule]\ndefault_timezone = "UTC"\n'
    )
    configured(home, before, f"KIOKU_LLM__API_KEY={GOOD_KEY}\nOTHER=1\n")
    wizard = Terminal("setup", env=fakes.endpoints())
    try:
        await wizard.expect("Model now: provider=anthropic, model=claude-haiku-4-5")
        await wizard.answer("Model (keep, change, remove) [keep]:", "")
        await wizard.answer("Connect Telegram? [y/N]:", "")
        await wizard.answer("Connect Discord? [y/N]:", "")
        await wizard.answer("Connect Slack? [y/N]:", "")
        await wizard.answer("Connect Matrix? [y/N]:", "")
        await wizard.answer("Owner (keep, change, remove) [keep]:", "")
        await wizard.answer("Time zone (keep, change, remove) [keep]:", "change")
        await wizard.answer("Your time zone (IANA name, e.g. Europe/Paris) [UTC]:", "Mars/Olympus")
        await wizard.answer("is not a time zone", "Europe/Paris")
        await wizard.expect('+default_timezone = "Europe/Paris"')
        await wizard.answer("Write these files? [Y/n]:", "y")
        await wizard.answer("Install kioku as a systemd service?", "no")
        assert await wizard.exit_status() == 0
        diff = wizard.transcript.getvalue().split("== 5. Write ==")[1].split("Write these")[0]
    finally:
        wizard.close()
    assert (home / "config.toml").read_text() == before.replace('"UTC"', '"Europe/Paris"')
    assert (home / "config.toml.bak").read_text() == before
    assert (home / ".env").read_text() == f"KIOKU_LLM__API_KEY={GOOD_KEY}\nOTHER=1\n"
    assert sum(line.startswith(("+", "-")) for line in diff.splitlines()) == 4  # 2 headers


async def test_serve_with_no_configuration_points_to_kioku_setup(home: Path) -> None:
    env = {k: "" for k in os.environ if k.startswith("KIOKU_")}
    env |= {"KIOKU_HOME": str(home), "KIOKU_WEB__ENABLED": "false"}
    daemon = Terminal("serve", env=env)
    try:
        await daemon.expect(f"No configuration yet in {home}: run `kioku setup`")
        await daemon.expect("daemon_started")  # then SIGTERM is a clean stop
        daemon.child.kill(signal.SIGTERM)
        assert await daemon.exit_status() == 0
    finally:
        daemon.close()
