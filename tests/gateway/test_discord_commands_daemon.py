"""`kioku serve` with the fake Discord: the registry's commands registered as Discord
application commands (global, or per guild with `discord.command_guilds`) and answered
to the asker alone, with nothing logged at ERROR."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from gateway.commands.builtin import SLASH_COMMANDS
from tests.fakes.discord import ALICE_ID, GUILD_ID, FakeDiscord
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic

NAMES = [command.name for command in SLASH_COMMANDS.menu()]


def discord_env(discord: FakeDiscord, **settings: str) -> dict[str, str]:
    return {
        **discord.env(),
        "KIOKU_OWNER__IDENTITIES": f'["discord:{ALICE_ID}"]',
        **settings,
    }


async def private_answer(discord: FakeDiscord, interaction: dict[str, object]) -> str:
    """The answer to `interaction`, checked to be deferred and answered to the asker only."""
    await discord.interact(interaction)
    defer = await discord.next_answer(WAIT)
    assert (defer.kind, defer.body["type"], defer.ephemeral) == ("callback", 5, True)
    answer = await discord.next_answer(WAIT)
    assert (answer.kind, answer.ephemeral) == ("original", True)
    return answer.content


async def stop(daemon: Daemon) -> str:
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
    return daemon.log.read_text()


async def test_the_daemon_registers_its_commands_globally_and_answers_them_privately(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as discord:
        env = discord_env(discord, KIOKU_WEB__ENABLED="true", KIOKU_WEB__LISTEN="127.0.0.1:0")
        env["KIOKU_WEB__PUBLIC_URL"] = "https://kioku.example"
        daemon = await run_daemon(daemons, home, api, tmp_path, **env)
        await discord.wait_command_puts(1, within=WAIT)
        assert [c["name"] for c in discord.command_puts[0][1]] == NAMES
        assert discord.command_puts[0][0] == "global"
        assert (await private_answer(discord, discord.interaction("help"))).startswith("Commands:")
        link = await private_answer(discord, discord.interaction("link", where="dm"))
        assert re.search(r"Your link code: [A-Z0-9]{8}", link)
        web = await private_answer(discord, discord.interaction("web", where="dm"))
        assert "https://kioku.example/" in web
        assert discord.posts == []
        log = await stop(daemon)
    assert '"level": "error"' not in log
    assert '"discord_commands_registered"' in log


async def test_with_command_guilds_the_daemon_registers_them_in_that_guild(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as discord:
        env = discord_env(discord, KIOKU_DISCORD__COMMAND_GUILDS=f'["{GUILD_ID}"]')
        daemon = await run_daemon(daemons, home, api, tmp_path, **env)
        await discord.wait_command_puts(1, within=WAIT)
        assert [scope for scope, _ in discord.command_puts] == [str(GUILD_ID)]
        whoami = await private_answer(discord, discord.interaction("whoami"))
        assert "owner" in whoami
        new = await private_answer(discord, discord.interaction("new"))
        assert new in ("New session started.", "No session was open; starting fresh.")
        assert discord.posts == []
        log = await stop(daemon)
    assert '"level": "error"' not in log
