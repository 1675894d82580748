"""`session_search` through the agent: the person's history everywhere, nobody else's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.access.identities import ensure_person
from memory.importers.jsonl import Parsed, store_parsed
from memory.schedule.timezones import set_timezone
from memory.store.records import Conversation, NewMessage, PastSession


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


async def dated_session(rig, title: str, text: str, at: datetime) -> None:
    """A past session of aiko's, as it was lived: one turn at `at`."""
    await ensure_person(rig.store, "aiko")
    conversation = Conversation("telegram", title, "dm", "aiko")
    turns = [NewMessage("user", text, speaker="aiko", ts=at)]
    await store_parsed(rig.store, Parsed(sessions=[PastSession(title, conversation, turns, title)]))


def tool_result(rig) -> dict:
    """The last tool_result block kioku sent the model."""
    for message in reversed(rig.api.last.json["messages"]):
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                return {"text": text, "is_error": bool(block.get("is_error"))}
    raise AssertionError("no tool result was sent")


async def search_with(rig, arguments: dict) -> dict:
    session = await rig.dm()
    rig.call_tool("session_search", arguments)
    rig.say("ok")
    await rig.agent.respond(rig.turn(session, "do you remember?", speaker="aiko"))
    return tool_result(rig)


async def test_since_and_until_keep_to_the_dates_given(rig) -> None:
    await dated_session(rig, "march", "garden hose", datetime(2026, 3, 12, 12, tzinfo=UTC))
    await dated_session(rig, "april", "garden hose", datetime(2026, 4, 12, 12, tzinfo=UTC))
    arguments = {"query": "garden hose", "since": "2026-03-01", "until": "2026-03-31"}
    result = await search_with(rig, arguments)
    assert not result["is_error"], result
    assert "march" in result["text"] and "april" not in result["text"]


async def test_a_bad_date_is_a_clear_error(rig) -> None:
    result = await search_with(rig, {"query": "garden", "since": "last spring"})
    assert result["is_error"]
    assert "since 'last spring' is not a date: use YYYY-MM-DD" in result["text"]


async def test_time_in_the_query_is_read_in_the_persons_zone(rig) -> None:
    now = datetime.now(UTC)
    # A zone where it is now at least three hours from midnight, so "today" holds now - 1h.
    zone = "Europe/London" if 3 <= now.hour <= 21 else "Asia/Tokyo"
    await ensure_person(rig.store, "aiko")
    await set_timezone(rig.store, "aiko", zone)
    await dated_session(rig, "recent", "garden hose", now - timedelta(hours=1))
    await dated_session(rig, "older", "garden hose", now - timedelta(days=40))
    result = await search_with(rig, {"query": "the garden hose today"})
    assert "recent" in result["text"] and "older" not in result["text"]
