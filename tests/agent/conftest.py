"""An agent wired to the real store, real notes and a fake model API (Anthropic or OpenAI).

Tests script the model through `Rig.say` / `Rig.call_tool` / `Rig.fail`, which speak to
whichever fake the `provider_kind` fixture chose, so one test can cover both providers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.build import build_agent
from agent.providers import Provider, RetryPolicy
from agent.providers.anthropic import AnthropicProvider
from agent.providers.openai_compat import OpenAICompatProvider
from config.load import load_settings
from config.paths import ensure_home
from memory.store.database import Store
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI
from tests.helpers.agent_rig import Rig

FAST = RetryPolicy(max_retries=2, base_delay=0.001, max_delay=0.01, deadline=5.0)


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
        common = {"retry": FAST, "timeout": 5.0, "context_window": settings.llm.known_window}
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
