"""Telegram misbehaving while `kioku serve` also serves the CLI socket and Discord: its API
failing with 5xx while polling, rate-limiting sends, a long poll gone silent, a send
answered slowly. The others keep answering throughout, and the Telegram adapter
recovers by itself once the fake heals."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fakes.telegram import HANG, bad_gateway, slow, too_many
from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.platform_daemons import OWNER_CHAT, serving


async def test_telegram_polling_5xx_storm_heals_while_the_others_answer(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with serving(daemons, home, api, tmp_path) as served:
        polls = len(served.tg.sent("getUpdates"))
        served.tg.fail("getUpdates", bad_gateway(), bad_gateway())
        await served.tg.wait_for("getUpdates", count=polls + 1, within=WAIT)
        await served.cli_answers("c1", "cli during the outage")
        await served.discord_answers("discord during the outage")
        await served.telegram_answers("telegram after the outage")
        assert len(served.tg.sent("getUpdates")) >= polls + 3


async def test_telegram_rate_limited_sends_are_delivered_while_the_others_answer(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with serving(daemons, home, api, tmp_path) as served:
        served.tg.fail("sendMessage", too_many(1), too_many(1))
        await served.tg.dm(OWNER_CHAT, "telegram while limited")
        await served.tg.wait_for("sendMessage", count=1, within=WAIT)
        await served.cli_answers("c1", "cli while telegram is limited")
        await served.discord_answers("discord while telegram is limited")
        await served.tg.wait_for("sendMessage", count=3, within=WAIT)
        assert [call.text for call in served.tg.sent()] == ["echo: telegram while limited"] * 3


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


async def test_a_slow_telegram_send_is_waited_for_once_while_the_others_answer(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with serving(daemons, home, api, tmp_path) as served:
        answered = asyncio.Event()
        served.tg.fail("sendMessage", slow(answered))
        await served.tg.dm(OWNER_CHAT, "telegram while slow")
        await served.tg.wait_for("sendMessage", count=1, within=WAIT)
        await served.cli_answers("c1", "cli while telegram is slow")
        await served.discord_answers("discord while telegram is slow")
        answered.set()
        await served.telegram_answers("telegram after the slow send")
        assert [call.text for call in served.tg.sent()] == [
            "echo: telegram while slow",
            "echo: telegram after the slow send",
        ]
