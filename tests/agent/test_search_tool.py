"""`session_search` through the agent: the person's history everywhere, nobody else's."""

from __future__ import annotations

import pytest

from memory.access.identities import ensure_person
from memory.store.records import Conversation, NewMessage


async def past_session(rig, person: str, platform: str, chat: str, texts: list[str]) -> None:
    await ensure_person(rig.store, person)
    session = await rig.store.open_session(Conversation(platform, chat, "dm", person))
    for index, text in enumerate(texts):
        role = "user" if index % 2 == 0 else "assistant"
        await rig.store.append(session.id, NewMessage(role=role, content=text, speaker=person))
    await rig.store.close_session(session.id, "idle", title=f"{person} on {platform}")


async def search_as(rig, session, query: str, speaker: str = "aiko") -> str:
    rig.call_tool("session_search", {"query": query})
    rig.say("Here is what I found.")
    await rig.agent.respond(rig.turn(session, "do you remember?", speaker=speaker))
    return rig.texts_of(rig.api.last)


@pytest.mark.parametrize("provider_kind", ["anthropic", "openai"])
async def test_finds_the_persons_own_session_from_another_platform(rig) -> None:
    await past_session(rig, "aiko", "slack", "D1", ["We planned the database migration", "Yes"])
    session = await rig.dm()
    found = await search_as(rig, session, "database migration plans")
    assert "aiko on slack" in found
    assert "**database**" in found


async def test_never_finds_another_persons_dm(rig) -> None:
    await past_session(rig, "ben", "discord", "D9", ["My salary negotiation went badly", "Oh"])
    session = await rig.dm()
    found = await search_as(rig, session, "salary negotiation")
    assert "No past conversation matches" in found
    assert "ben" not in found


async def test_in_a_group_only_the_groups_history_is_searched(rig) -> None:
    await past_session(rig, "aiko", "telegram", "100", ["the secret garden plan", "ok"])
    other_group = await rig.group(chat="-900")
    await rig.store.append(
        other_group.id,
        NewMessage(role="user", content="garden party in the other group", speaker="aiko"),
    )
    session = await rig.group()
    await rig.store.append(
        session.id, NewMessage(role="user", content="garden tools for this group", speaker="aiko")
    )
    found = await search_as(rig, session, "garden")
    assert "garden tools for this group" in found
    assert "secret garden plan" not in found
    assert "other group" not in found


async def test_earlier_turns_of_the_current_session_are_searchable(rig) -> None:
    session = await rig.dm()
    rig.say("Noted.")
    await rig.agent.respond(rig.turn(session, "my locker code is on the blue card"))
    found = await search_as(rig, session, "locker")
    assert "blue card" in found


@pytest.mark.parametrize("agent_env", [{"KIOKU_AGENT__SEARCH_BUDGET_CHARS": "500"}])
async def test_results_stay_within_the_budget(rig) -> None:
    for index in range(6):
        await past_session(
            rig, "aiko", "telegram", f"c{index}", [f"kayak trip number {index} " + "x " * 150, "ok"]
        )
    session = await rig.dm()
    rig.call_tool("session_search", {"query": "kayak", "limit": 10})
    rig.say("ok")
    await rig.agent.respond(rig.turn(session, "kayak?"))
    result = rig.api.last.json["messages"][-1]["content"][0]["content"]
    text = result if isinstance(result, str) else result[0]["text"]
    assert len(text) <= 700
    assert "more sessions left out" in text
