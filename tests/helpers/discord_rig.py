"""A Discord adapter on the fake Discord: behind a real gateway with Alice as a known
person, or alone, delivering to an Inbox."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from adapters.base import Event, MenuCommand
from adapters.catch_up import CatchUpPlan, Cursor, no_catch_up
from adapters.discord.adapter import DiscordAdapter
from config.platform_settings import DiscordSettings
from tests.fakes.discord import ALICE_ID, FakeDiscord
from tests.helpers.gateway_rig import GatewayRig, gateway_rig
from tests.helpers.inbox import WITHIN, Inbox

ALICE = f"discord:{ALICE_ID}"
E = TypeVar("E", bound=Event)


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


class Events:
    """The adapter's `deliver` for catch-up and edit tests: every event, in order."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event] = asyncio.Queue()

    async def deliver(self, event: Event) -> None:
        self.queue.put_nowait(event)

    async def next(self, kind: type[E], within: float = WITHIN) -> E:
        """The next event, which must be a `kind`."""
        event = await asyncio.wait_for(self.queue.get(), within)
        assert isinstance(event, kind), f"expected a {kind.__name__}, got {event!r}"
        return event


class Plans:
    """A catch-up plan source (the gateway's part) with fixed cursors; counts the asks."""

    def __init__(self, *cursors: Cursor, max_messages: int = 50) -> None:
        self.plan = CatchUpPlan(cursors, 86_400.0, max_messages)
        self.asked = 0

    async def __call__(self) -> CatchUpPlan:
        self.asked += 1
        return self.plan


@asynccontextmanager
async def discord_recorded(
    fake: FakeDiscord, plans: Plans | None = None, **settings: Any
) -> AsyncIterator[tuple[DiscordAdapter, Events]]:
    """A started Discord adapter on `fake` whose every event lands in `Events`, with `plans`
    as its catch-up plan source (none: catch-up off)."""
    events = Events()
    adapter = DiscordAdapter(
        events.deliver,
        DiscordSettings(
            token="test-token", api_base=fake.api_base, gateway_url=fake.gateway_url, **settings
        ),
        catch_up=plans or no_catch_up,
        ready_timeout=10.0,
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    try:
        yield adapter, events
    finally:
        await adapter.stop()
