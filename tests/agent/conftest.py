"""An agent wired to the real store, real notes and a fake model API (Anthropic or OpenAI).

Tests script the model through `Rig.say` / `Rig.call_tool` / `Rig.fail`, which speak to
whichever fake the `provider_kind` fixture chose, so one test can cover both providers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent.agent import Agent
from agent.build import build_agent
from agent.prompt import TurnContext
from agent.providers import Provider, RetryPolicy
from agent.providers.anthropic import AnthropicProvider
from agent.providers.openai_compat import OpenAICompatProvider
from agent.turn import Turn
from config.load import load_settings
from config.paths import ensure_home
from config.settings import Settings
from memory.records import Conversation, Session
from memory.store import Store
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.scripted_server import Received

FAST = RetryPolicy(max_retries=2, base_delay=0.001, max_delay=0.01, deadline=5.0)


@dataclass
class Rig:
    kind: str
    api: FakeAnthropic | FakeOpenAI
    agent: Agent
    store: Store
    settings: Settings
    home: Path

    # -- scripting the model ------------------------------------------------------------
    def say(self, *chunks: str, prompt_tokens: int | None = None) -> None:
        if isinstance(self.api, FakeAnthropic):
            usage = None if prompt_tokens is None else {"input_tokens": prompt_tokens}
            self.api.reply_text(*chunks, usage=usage)
        else:
            usage = None if prompt_tokens is None else {"prompt_tokens": prompt_tokens}
            self.api.reply_text(*chunks, usage=usage)

    def call_tool(self, name: str, arguments: Mapping[str, Any], call_id: str = "t1") -> None:
        if isinstance(self.api, FakeAnthropic):
            self.api.reply_tool_use(name, arguments, tool_id=call_id)
        else:
            self.api.reply_tool_calls((name, arguments))

    def fail(self, status: int, headers: Mapping[str, str] | None = None) -> None:
        self.api.fail(status, headers=headers)

    # -- reading what the model was sent --------------------------------------------------
    def system_of(self, request: Received) -> str:
        body = request.json
        if self.kind == "anthropic":
            return "".join(block["text"] for block in body["system"])
        return body["messages"][0]["content"]

    def texts_of(self, request: Received) -> str:
        """Every text the conversation (not the system prompt) held, joined."""
        out: list[str] = []
        messages = request.json["messages"]
        for message in messages if self.kind == "anthropic" else messages[1:]:
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "text":
                    out.append(block["text"])
                elif block.get("type") == "tool_result":
                    out.append(str(block["content"]))
        return "\n".join(out)

    # -- conversations ------------------------------------------------------------------
    async def dm(self, person: str = "aiko", chat: str = "100") -> Session:
        await self.store.ensure_person(person)
        return await self.store.open_session(Conversation("telegram", chat, "dm", person))

    async def group(self, chat: str = "-500", members: tuple[str, ...] = ("aiko",)) -> Session:
        for person in members:
            await self.store.ensure_person(person)
        return await self.store.open_session(Conversation("discord", chat, "group"))

    def turn(self, session: Session, text: str, speaker: str = "aiko", name: str = "Aiko") -> Turn:
        context = TurnContext(
            when=datetime(2026, 12, 2, 9, 30, tzinfo=UTC),
            platform=session.platform,
            speaker_name=name,
            is_group=session.kind == "group",
        )
        return Turn(session=session, speaker=speaker, text=text, context=context)


@pytest.fixture
def provider_kind() -> str:
    return "anthropic"


@pytest.fixture
def agent_env() -> dict[str, str]:
    """Extra KIOKU_ settings for the rig; a test overrides it with parametrize."""
    return {}


@pytest.fixture
async def rig(
    provider_kind: str, home: Path, monkeypatch: pytest.MonkeyPatch, agent_env: dict[str, str]
) -> AsyncIterator[Rig]:
    for name, value in agent_env.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    ensure_home(home)
    fake: FakeAnthropic | FakeOpenAI = (
        FakeAnthropic() if provider_kind == "anthropic" else FakeOpenAI()
    )
    async with fake as api:
        provider: Provider
        common = {"retry": FAST, "timeout": 5.0, "context_window": settings.llm.context_window}
        if provider_kind == "anthropic":
            provider = AnthropicProvider(
                model="claude-test", api_key="sk-test", base_url=api.base_url, **common
            )
        else:
            provider = OpenAICompatProvider(model="llama-test", base_url=api.base_url, **common)
        store = await Store.open(home / "state.db")
        agent = build_agent(settings, store, provider)
        try:
            yield Rig(provider_kind, api, agent, store, settings, home)
        finally:
            await agent.aclose()
            await store.close()
