"""The frozen system prompt, cache breakpoints, groups, and notes across sessions."""

from __future__ import annotations

import pytest

from agent.prompt import GUIDANCE
from memory.notes.origin import NoteOrigin

BOTH = pytest.mark.parametrize("provider_kind", ["anthropic", "openai"])


async def seed_notes(rig, person: str = "aiko") -> None:
    await rig.agent.services.notes(person).add(
        "user", "Aiko is a nurse in Kyoto", origin=NoteOrigin("cli")
    )


@BOTH
async def test_system_prompt_is_byte_identical_across_a_session_despite_a_memory_write(
    rig,
) -> None:
    await seed_notes(rig)
    session = await rig.dm()
    rig.say("Hi Aiko.")
    await rig.agent.respond(rig.turn(session, "hello"))
    rig.call_tool("memory", {"action": "add", "target": "user", "content": "Loves hiking"})
    rig.say("Noted.")
    await rig.agent.respond(rig.turn(session, "I love hiking"))
    rig.say("Sure.")
    await rig.agent.respond(rig.turn(session, "thanks"))
    systems = {rig.system_of(request) for request in rig.api.requests}
    assert len(systems) == 1
    (system,) = systems
    assert "Aiko is a nurse in Kyoto" in system
    assert "Loves hiking" not in system

    await rig.agent.close_session(session.id, "new")  # title request is the 4th call
    rig.say("Welcome back.")
    new_session = await rig.dm()
    await rig.agent.respond(rig.turn(new_session, "morning"))
    assert "Loves hiking" in rig.system_of(rig.api.requests[-1])


async def test_cache_breakpoints_on_tools_system_and_latest_turn(rig) -> None:
    session = await rig.dm()
    rig.say("one")
    await rig.agent.respond(rig.turn(session, "first"))
    rig.say("two")
    await rig.agent.respond(rig.turn(session, "second"))
    body = rig.api.requests[-1].json
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in tool for tool in body["tools"][:-1])
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_the_prompt_orders_guidance_then_notes_and_fences_the_notes(rig) -> None:
    await seed_notes(rig)
    session = await rig.dm()
    rig.say("ok")
    await rig.agent.respond(rig.turn(session, "hi"))
    system = rig.system_of(rig.api.last)
    assert system.startswith(GUIDANCE)
    assert system.index("Aiko is a nurse") > len(GUIDANCE)


@pytest.mark.parametrize("agent_env", [{"KIOKU_SCHEDULE__DEFAULT_TIMEZONE": "UTC"}])
async def test_per_message_context_travels_in_the_user_turn(rig) -> None:
    session = await rig.group()
    rig.say("Hello group.")
    await rig.agent.respond(rig.turn(session, "hi all", speaker="aiko", name="Aiko"))
    sent = rig.texts_of(rig.api.last)
    assert "[Wed 2026-12-02 09:30 +00:00 (UTC) · discord · from Aiko]" in sent
    assert "2026-12-02" not in rig.system_of(rig.api.last)


async def test_group_prompt_holds_no_private_notes(rig) -> None:
    await seed_notes(rig)
    session = await rig.group()
    rig.say("Hi.")
    await rig.agent.respond(rig.turn(session, "what do you know about me?"))
    assert "nurse" not in rig.system_of(rig.api.last)
    assert "nurse" not in rig.texts_of(rig.api.last)


async def test_memory_tool_in_a_group_saves_without_showing_the_notes(rig) -> None:
    await seed_notes(rig)
    session = await rig.group()
    rig.call_tool("memory", {"action": "add", "target": "user", "content": "Vegetarian"})
    rig.say("Got it.")
    await rig.agent.respond(rig.turn(session, "remember I am vegetarian"))
    sent = rig.texts_of(rig.api.last)
    assert "Saved to the speaker's private notes." in sent
    assert "nurse" not in sent
    notes = (rig.home / "people" / "aiko" / "USER.md").read_text()
    assert "Vegetarian" in notes


async def test_memory_refusal_in_a_group_does_not_list_the_entries(rig) -> None:
    await seed_notes(rig)
    session = await rig.group()
    rig.call_tool("memory", {"action": "remove", "target": "user", "old_text": "astronaut"})
    rig.say("Could not.")
    await rig.agent.respond(rig.turn(session, "forget that I am an astronaut"))
    sent = rig.texts_of(rig.api.last)
    assert "Not saved" in sent
    assert "nurse" not in sent


@pytest.mark.parametrize("agent_env", [{"KIOKU_AGENT__GROUP_PRIVATE_NOTES": "true"}])
async def test_owner_may_allow_private_notes_in_groups(rig) -> None:
    await seed_notes(rig)
    session = await rig.group()
    rig.say("Hi.")
    await rig.agent.respond(rig.turn(session, "hi"))
    rig.say("Hi again.")
    await rig.agent.respond(rig.turn(session, "hi again"))
    assert "nurse" not in rig.system_of(rig.api.last)
    assert rig.texts_of(rig.api.last).count("Aiko is a nurse in Kyoto") == 1


async def test_a_restarted_agent_continues_the_open_session_with_its_turns(rig) -> None:
    session = await rig.dm()
    rig.call_tool("memory", {"action": "add", "target": "memory", "content": "Runs Debian"})
    rig.say("Noted Debian.")
    await rig.agent.respond(rig.turn(session, "my server runs Debian"))
    rig.agent.forget(session.id)  # as after a crash: only the store remains
    rig.say("Yes, Debian.")
    await rig.agent.respond(rig.turn(session, "what does it run?"))
    body = rig.api.last.json
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    kinds = [block["type"] for block in body["messages"][1]["content"]]
    assert "tool_use" in kinds
    assert body["messages"][2]["content"][0]["type"] == "tool_result"
    assert "my server runs Debian" in rig.texts_of(rig.api.last)
