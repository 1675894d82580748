"""Discord misbehaving while `kioku serve` also serves the CLI socket and Telegram: its
gateway socket dropping or going silent, or its API rate-limiting sends. The others keep answering
throughout, and the Discord adapter recovers by itself."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.platform_daemons import serving


async def test_a_dropped_discord_gateway_resumes_while_the_others_answer(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with serving(daemons, home, api, tmp_path) as served:
        await served.discord.drop_connection(4000)
        await served.cli_answers("c1", "cli while discord reconnects")
        await served.telegram_answers("telegram while discord reconnects")
        await served.discord.wait_ready(2, within=WAIT)
        await served.discord_answers("discord after the drop")
        assert served.discord.resumes == 1


async def test_a_discord_429_storm_delays_only_discord(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with serving(daemons, home, api, tmp_path) as served:
        served.discord.rate_limit(times=3, retry_after=0.5)
        await served.discord.push(served.discord.dm("discord while limited"))
        await served.cli_answers("c1", "cli while discord is limited")
        await served.telegram_answers("telegram while discord is limited")
        assert (await served.discord.next_post(WAIT)).content == "echo: discord while limited"
        assert served.discord.rate_limited == 3


async def test_a_silent_discord_gateway_is_replaced_while_the_others_answer(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    quick = {"KIOKU_DISCORD__SILENCE_LIMIT": "3"}  # the fake heartbeats every second
    async with serving(daemons, home, api, tmp_path, **quick) as served:
        served.discord.go_silent()
        await served.cli_answers("c1", "cli while discord is silent")
        await served.telegram_answers("telegram while discord is silent")
        await served.discord.wait_ready(2, within=WAIT)
        await served.discord_answers("discord after the silence")
