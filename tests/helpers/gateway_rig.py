"""A gateway wired to real parts: store, agent (fake model API or none), identities,
and in-process recording adapters for telegram and the CLI.

`GatedAnthropic` holds a request whose newest user text contains a gate's word until
the test opens the gate, so tests order turns with events instead of sleeps.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from adapters.base import Adapter, Inbound
from agent.agent import Agent
from agent.build import build_agent
from agent.providers import NoProvider, Provider, RetryPolicy
from agent.providers.anthropic import AnthropicProvider
from config.load import load_settings
from config.paths import ensure_home
from config.settings import Settings
from gateway.gateway import Gateway
from gateway.identity import Identities
from memory.access.identities import ensure_person, link_identity
from memory.store.database import Store
from plumbing.meter import QUIET, Meter
from tests.fakes.anthropic_api import FakeAnthropic, _last_user_text
from tests.helpers.recording_adapter import RecordingAdapter

FAST = RetryPolicy(max_retries=0, base_delay=0.001, max_delay=0.01, deadline=5.0)


class GatedAnthropic(FakeAnthropic):
    """Echoes every message; one containing a gated word waits for its gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gates: dict[str, asyncio.Event] = {}
        self.arrived: dict[str, asyncio.Event] = {}
        self.echo()

    def gate(self, word: str) -> asyncio.Event:
        self.arrived[word] = asyncio.Event()
        gate = self.gates[word] = asyncio.Event()
        return gate

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        text = _last_user_text(await request.json())
        for word, gate in self.gates.items():
            if word in text:
                self.arrived[word].set()
                await gate.wait()
        return await super()._handle(request)


@dataclass
class GatewayRig:
    gateway: Gateway
    store: Store
    agent: Agent
    identities: Identities
    settings: Settings
    home: Path
    api: GatedAnthropic | None
    adapters: dict[str, RecordingAdapter] = field(default_factory=dict)

    @property
    def telegram(self) -> RecordingAdapter:
        return self.adapters["telegram"]

    async def person(self, person: str, *identities: str) -> None:
        await ensure_person(self.store, person)
        for identity in identities:
            await link_identity(self.store, identity, person)

    def dm(
        self,
        sender: str,
        text: str,
        message_id: str,
        *,
        chat: str | None = None,
        platform: str = "telegram",
        **extra: object,
    ) -> Inbound:
        chat = chat if chat is not None else sender.rsplit(":", 1)[-1]
        return Inbound(platform, chat, sender, text, True, message_id=message_id, **extra)

    def group(
        self,
        sender: str,
        text: str,
        message_id: str,
        *,
        chat: str = "-500",
        addressed: bool = True,
        **extra: object,
    ) -> Inbound:
        return Inbound(
            "telegram",
            chat,
            sender,
            text,
            False,
            addressed=addressed,
            message_id=message_id,
            **extra,
        )

    async def ask(self, inbound: Inbound, adapter: str = "telegram") -> str:
        await self.gateway.handle(inbound)
        return await self.adapters[adapter].next_text()


def _outlets(adapters: dict[str, RecordingAdapter]):
    def outlet(platform: str) -> Adapter | None:
        return adapters.get(platform)

    return outlet


@asynccontextmanager
async def gateway_rig(
    home: Path, *, model: bool = True, meter: Meter = QUIET
) -> AsyncIterator[GatewayRig]:
    settings = load_settings()
    ensure_home(home)
    store = await Store.open(home / "state.db")
    api: GatedAnthropic | None = None
    try:
        if model:
            api = await GatedAnthropic().start()
            provider: Provider = AnthropicProvider(
                model="claude-test",
                api_key="sk-test",
                base_url=api.base_url,
                retry=FAST,
                timeout=5.0,
                context_window=settings.llm.known_window,
            )
        else:
            provider = NoProvider("No model is configured.")
        agent = build_agent(settings, store, provider, meter=meter)
        identities = Identities(store, settings)
        adapters: dict[str, RecordingAdapter] = {}
        gateway = Gateway(store, agent, identities, settings, _outlets(adapters), meter)
        for name, streams in (("telegram", False), ("cli", True)):
            adapters[name] = RecordingAdapter(gateway.handle, name, streams)
        rig = GatewayRig(gateway, store, agent, identities, settings, home, api, adapters)
        try:
            yield rig
        finally:
            await gateway.close()
            await agent.idle()
            await agent.aclose()
    finally:
        if api is not None:
            await api.close()
        await store.close()


class Chat:
    """Numbered messages from one sender, in a DM or the group."""

    def __init__(self, rig: GatewayRig, sender: str, group: bool = False) -> None:
        self.rig, self.sender, self.group, self.count = rig, sender, group, 0

    async def __call__(self, text: str) -> str:
        self.count += 1
        message_id = f"{self.sender}-{self.group}-{self.count}"
        make = self.rig.group if self.group else self.rig.dm
        return await self.rig.ask(make(self.sender, text, message_id))
