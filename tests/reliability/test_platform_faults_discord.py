"""Discord misbehaving while `kioku serve` also serves the CLI socket and Telegram: its
gateway socket dropping or going silent, or its API rate-limiting sends. The others keep answering
throughout, and the Discord adapter recovers by itself.

The faults that heal share one daemon (`shared`): each test leaves Discord answering again,
counts only what it caused, and its own CLI ids; the silent gateway, with its short silence
limit, has its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.platform_daemons import Platforms, module_serving, serving

in_module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Platforms]:
    async with module_serving(tmp_path_factory.mktemp("discord-faults")) as served:
        yield served


@in_module_loop
async def test_a_dropped_discord_gateway_resumes_while_the_others_answer(
    shared: Platforms,
) -> None:
    readies, resumes = shared.discord.readies, shared.discord.resumes
    await shared.discord.drop_connection(4000)
    await shared.cli_answers("drop", "cli while discord reconnects")
    await shared.telegram_answers("telegram while discord reconnects")
    await shared.discord.wait_ready(readies + 1, within=WAIT)
    await shared.discord_answers("discord after the drop")
    assert shared.discord.resumes == resumes + 1


@in_module_loop
async def test_a_discord_429_storm_delays_only_discord(shared: Platforms) -> None:
    limited = shared.discord.rate_limited
    shared.discord.rate_limit(times=3, retry_after=0.5)
    await shared.discord.push(shared.discord.dm("discord while limited"))
    await shared.cli_answers("limited", "cli while discord is limited")
    await shared.telegram_answers("telegram while discord is limited")
    assert (await shared.discord.next_post(WAIT)).content == "echo: discord while limited"
    assert shared.discord.rate_limited == limited + 3


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
