"""`kioku serve` with the CLI socket, a fake Telegram and a fake Discord, for the tests
where one platform misbehaves while the others keep serving."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.fakes.discord import ALICE_ID, FakeDiscord
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Client, Daemon, killed_at_end, own_home, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic

OWNER_CHAT = 111


def telegram_env(tg: FakeTelegram) -> dict[str, str]:
    """The daemon's settings for the fake Telegram; the DM sender is the owner (no pairing)."""
    return {
        "KIOKU_TELEGRAM__TOKEN": TELEGRAM_TOKEN,
        "KIOKU_TELEGRAM__BASE_URL": tg.base_url,
        "KIOKU_TELEGRAM__BASE_FILE_URL": tg.base_file_url,
        "KIOKU_TELEGRAM__POLL_TIMEOUT": "1",
        "KIOKU_OWNER__IDENTITIES": f'["telegram:{OWNER_CHAT}"]',
    }


@dataclass
class Platforms:
    """The running daemon, its fakes and a CLI connection; `*_answers` ask and wait."""

    daemon: Daemon
    tg: FakeTelegram
    discord: FakeDiscord
    cli: Client

    async def telegram_answers(self, text: str) -> None:
        await self.tg.dm(OWNER_CHAT, text)
        while not any(call.text == f"echo: {text}" for call in self.tg.sent()):
            await self.tg.wait_for("sendMessage", count=len(self.tg.sent()) + 1, within=WAIT)

    async def discord_answers(self, text: str) -> None:
        await self.discord.push(self.discord.dm(text))
        assert (await self.discord.next_post(WAIT)).content == f"echo: {text}"

    async def cli_answers(self, message_id: str, text: str) -> None:
        assert await self.cli.ask(message_id, text) == f"echo: {text}"


@asynccontextmanager
async def serving(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, **settings: str
) -> AsyncIterator[Platforms]:
    """`settings`: more of the daemon's environment (e.g. short silence limits)."""
    async with FakeTelegram() as tg, FakeDiscord(heartbeat_interval_ms=1000) as discord:
        env = {
            **telegram_env(tg),
            "KIOKU_OWNER__IDENTITIES": f'["telegram:{OWNER_CHAT}", "discord:{ALICE_ID}"]',
            **discord.env(),
            **settings,
        }
        daemon = await run_daemon(daemons, home, api, tmp_path, **env)
        assert b"STATUS=serving: cli, discord, telegram" in daemon.ready, daemon.ready
        await discord.wait_ready(1, within=WAIT)
        cli = await Client.connect(home)
        yield Platforms(daemon, tg, discord, cli)
        await cli.close()
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0


@asynccontextmanager
async def module_serving(tmp: Path, **settings: str) -> AsyncIterator[Platforms]:
    """`serving` shared by a test module, with a fake model of its own and its KIOKU_HOME
    `tmp/home`."""
    home = tmp / "home"
    async with (
        GatedAnthropic() as api,
        killed_at_end() as started,
        serving(started, home, api, tmp, **own_home(home), **settings) as served,
    ):
        yield served
