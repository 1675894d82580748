"""Telegram misbehaving while `kioku serve` also serves the CLI socket and Discord: its API
failing with 5xx while polling, rate-limiting sends, a long poll gone silent, a send
answered slowly. The others keep answering throughout, and the Telegram adapter
recovers by itself once the fake heals.

The faults that heal share one daemon (`shared`): each test leaves Telegram answering again,
counts only what it caused, and its own CLI ids; the silent long poll, with its short
silence limit, has its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.fakes.telegram import HANG, bad_gateway, slow, too_many
from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.platform_daemons import OWNER_CHAT, Platforms, module_serving, serving

in_module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Platforms]:
    async with module_serving(tmp_path_factory.mktemp("telegram-faults")) as served:
        yield served


@in_module_loop
async def test_telegram_polling_5xx_storm_heals_while_the_others_answer(shared: Platforms) -> None:
    polls = len(shared.tg.sent("getUpdates"))
    shared.tg.fail("getUpdates", bad_gateway(), bad_gateway())
    await shared.tg.wait_for("getUpdates", count=polls + 1, within=WAIT)
    await shared.cli_answers("storm", "cli during the outage")
    await shared.discord_answers("discord during the outage")
    await shared.telegram_answers("telegram after the outage")
    assert len(shared.tg.sent("getUpdates")) >= polls + 3


@in_module_loop
async def test_telegram_rate_limited_sends_are_delivered_while_the_others_answer(
    shared: Platforms,
) -> None:
    sent = len(shared.tg.sent())
    shared.tg.fail("sendMessage", too_many(1), too_many(1))
    await shared.tg.dm(OWNER_CHAT, "telegram while limited")
    await shared.tg.wait_for("sendMessage", count=sent + 1, within=WAIT)
    await shared.cli_answers("limited", "cli while telegram is limited")
    await shared.discord_answers("discord while telegram is limited")
    await shared.tg.wait_for("sendMessage", count=sent + 3, within=WAIT)
    assert [call.text for call in shared.tg.sent()[sent:]] == ["echo: telegram while limited"] * 3


async def test_a_silent_telegram_long_poll_is_replaced_while_the_others_answer(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    quick = {"KIOKU_TELEGRAM__SILENCE_LIMIT": "1"}
    async with serving(daemons, home, api, tmp_path, **quick) as served:
        polls = len(served.tg.sent("getUpdates"))
        served.tg.fail("getUpdates", HANG)
        await served.cli_answers("c1", "cli while telegram hangs")
        await served.discord_answers("discord while telegram hangs")
        await served.tg.wait_for("getUpdates", count=polls + 2, within=WAIT)
        await served.telegram_answers("telegram after the silence")


@in_module_loop
async def test_a_slow_telegram_send_is_waited_for_once_while_the_others_answer(
    shared: Platforms,
) -> None:
    sent = len(shared.tg.sent())
    answered = asyncio.Event()
    shared.tg.fail("sendMessage", slow(answered))
    await shared.tg.dm(OWNER_CHAT, "telegram while slow")
    await shared.tg.wait_for("sendMessage", count=sent + 1, within=WAIT)
    await shared.cli_answers("slow", "cli while telegram is slow")
    await shared.discord_answers("discord while telegram is slow")
    answered.set()
    await shared.telegram_answers("telegram after the slow send")
    assert [call.text for call in shared.tg.sent()[sent:]] == [
        "echo: telegram while slow",
        "echo: telegram after the slow send",
    ]
