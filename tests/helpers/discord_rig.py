"""A Discord adapter on the fake Discord: behind a real gateway with Alice as a known
person, or alone, delivering to an Inbox."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from adapters.base import MenuCommand
from adapters.discord.adapter import DiscordAdapter
from config.platform_settings import DiscordSettings
from tests.fakes.discord import ALICE_ID, FakeDiscord
from tests.helpers.gateway_rig import GatewayRig, gateway_rig
from tests.helpers.inbox import Inbox

ALICE = f"discord:{ALICE_ID}"


@asynccontextmanager
async def discord_served(
    home: Path, fake: FakeDiscord, *, commands: Sequence[MenuCommand] = (), **settings: Any
) -> AsyncIterator[tuple[GatewayRig, DiscordAdapter]]:
    """The gateway with a started Discord adapter; `settings` are its DiscordSettings."""
    async with gateway_rig(home) as rig:
        adapter = DiscordAdapter(
            rig.gateway.handle,
            DiscordSettings(
                token="test-token",
                api_base=fake.api_base,
                gateway_url=fake.gateway_url,
                **settings,
            ),
            commands=commands,
            ready_timeout=10.0,
            guild_ready_timeout=0.05,
        )
        rig.adapters["discord"] = adapter  # type: ignore[assignment]
        await adapter.start()
        try:
            await rig.person("alice", ALICE)
            yield rig, adapter
        finally:
            await adapter.stop()


@asynccontextmanager
async def discord_alone(inbox: Inbox) -> AsyncIterator[FakeDiscord]:
    """A fake Discord and a started Discord adapter on it, with no gateway: what the
    adapter makes of a message is what lands in `inbox`."""
    async with FakeDiscord() as fake:
        settings = DiscordSettings(
            token="test-token", api_base=fake.api_base, gateway_url=fake.gateway_url
        )
        adapter = DiscordAdapter(inbox.deliver, settings, guild_ready_timeout=0.05)
        await adapter.start()
        try:
            yield fake
        finally:
            await adapter.stop()
