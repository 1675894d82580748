"""Turns through the agent with a provider on: what it is given to mirror, in which scope."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from agent.build import build_agent
from agent.prompt import TurnContext
from agent.providers import RetryPolicy
from agent.providers.anthropic import AnthropicProvider
from agent.turn import Turn
from config.settings import Settings
from memory.access.identities import ensure_person
from memory.store.database import Store
from memory.store.records import Conversation
from tests.agent.memory_providers.conftest import Start
from tests.fakes.anthropic_api import FakeAnthropic
from tests.helpers.scripted_provider import calls

FAST = RetryPolicy(max_retries=0, base_delay=0.001, max_delay=0.01, deadline=5.0)


async def test_a_group_turn_is_mirrored_in_the_groups_scope_naming_no_person(
    start_providers: Start, store: Store, home: Path
) -> None:
    providers = await start_providers(scripted={"enabled": True, "groups": ["*"]})
    await ensure_person(store, "aiko")
    session = await store.open_session(Conversation("discord", "-500", "group"))
    async with FakeAnthropic() as api:
        api.echo()
        model = AnthropicProvider(model="m", api_key="k", base_url=api.base_url, retry=FAST)
        agent = build_agent(Settings(), store, model, providers=providers)
        context = TurnContext(datetime.now(UTC), "discord", speaker_name="Aiko", is_group=True)
        try:
            await agent.respond(Turn(session, "aiko", "hello group", context))
        finally:
            await agent.aclose()
        assert "Scripted recall for group:discord:-500" in str(api.last.json["messages"][-1])
    assert providers.mirror is not None
    await providers.mirror.idle()
    [copy] = [c for c in calls(home, "scripted") if c["hook"] == "record_turn"]
    assert copy["scope"] == "group:discord:-500" and copy["user"] == "hello group"
    assert sorted(copy["meta"]) == ["platform", "ts"]
    assert "aiko" not in str(copy)


async def test_a_mirrored_exchange_carries_the_turn_said_before_it(
    start_providers: Start, store: Store, home: Path
) -> None:
    providers = await start_providers(scripted={"enabled": True})
    await ensure_person(store, "aiko")
    session = await store.open_session(Conversation("telegram", "5", "dm", "aiko"))
    async with FakeAnthropic() as api:
        api.echo()
        model = AnthropicProvider(model="m", api_key="k", base_url=api.base_url, retry=FAST)
        agent = build_agent(Settings(), store, model, providers=providers)
        context = TurnContext(datetime.now(UTC), "telegram", speaker_name="Aiko")
        try:
            await agent.respond(Turn(session, "aiko", "first words", context))
            await agent.respond(Turn(session, "aiko", "second words", context))
        finally:
            await agent.aclose()
    assert providers.mirror is not None
    await providers.mirror.idle()
    first, second = [c for c in calls(home, "scripted") if c["hook"] == "record_turn"]
    assert first["before"] is None
    answer_id, answer = second["before"]
    assert answer_id == first["ids"][-1] and "first words" in answer
