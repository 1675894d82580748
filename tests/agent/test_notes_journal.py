"""Notes changes made by the model (in a turn, in a review) are journaled with their session;
the prompt dates each entry by month and stays byte-identical for the whole session."""

from __future__ import annotations

import pytest

from memory.notes.journal import NotesJournal
from memory.notes.origin import NoteOrigin

REFLECT_EVERY_TURN = {"KIOKU_AGENT__REFLECTION__EVERY_USER_TURNS": "1"}


async def test_the_memory_tool_in_a_turn_is_journaled_with_its_session(rig) -> None:
    session = await rig.dm()
    rig.call_tool("memory", {"action": "add", "target": "user", "content": "Loves hiking"})
    rig.say("Noted.")
    await rig.agent.respond(rig.turn(session, "I love hiking"))
    (event,) = await NotesJournal(rig.store).events("aiko")
    assert (event.source, event.session_id) == ("memory tool", session.id)
    assert [(c.action, c.after) for c in event.changes] == [("add", "Loves hiking")]


@pytest.mark.parametrize("agent_env", [REFLECT_EVERY_TURN])
async def test_a_reflection_write_is_journaled_with_the_session_it_reviewed(rig) -> None:
    session = await rig.dm()
    rig.say("Enjoy the trip!")
    await rig.agent.respond(rig.turn(session, "I'm moving to Osaka in March"))
    rig.call_tool("memory", {"action": "add", "target": "memory", "content": "Moving to Osaka"})
    rig.say("nothing else to save")
    await rig.agent.after_turn(session.id, "aiko")
    await rig.agent.idle()
    (event,) = await NotesJournal(rig.store).events("aiko")
    assert (event.source, event.session_id) == ("reflection", session.id)
    assert [(c.action, c.after) for c in event.changes] == [("add", "Moving to Osaka")]


async def test_the_prompt_shows_entry_months_and_stays_byte_identical_in_the_session(
    rig,
) -> None:
    notes = rig.agent.services.notes("aiko")
    await notes.add("user", "Aiko is a nurse in Kyoto", origin=NoteOrigin("cli"))
    (seeded,) = await NotesJournal(rig.store).events("aiko")
    session = await rig.dm()
    rig.say("Hi Aiko.")
    await rig.agent.respond(rig.turn(session, "hello"))
    rig.call_tool("memory", {"action": "add", "target": "user", "content": "Loves hiking"})
    rig.say("Noted.")
    await rig.agent.respond(rig.turn(session, "I love hiking"))
    systems = {rig.system_of(request) for request in rig.api.requests}
    assert len(systems) == 1
    assert f"({seeded.at:%Y-%m}) Aiko is a nurse in Kyoto" in systems.pop()


async def test_an_edit_by_hand_is_journaled_when_a_session_opens(rig) -> None:
    notes = rig.agent.services.notes("aiko")
    await notes.add("user", "Aiko is a nurse in Kyoto", origin=NoteOrigin("cli"))
    notes.path("user").write_text("Aiko is a doctor in Kyoto\n", encoding="utf-8")
    session = await rig.dm()
    rig.say("Hi Aiko.")
    await rig.agent.respond(rig.turn(session, "hello"))
    hand, _ = await NotesJournal(rig.store).events("aiko")
    assert hand.source == "hand edit"
    assert [(c.before, c.after) for c in hand.changes] == [
        ("Aiko is a nurse in Kyoto", "Aiko is a doctor in Kyoto")
    ]
    assert "Aiko is a doctor in Kyoto" in rig.system_of(rig.api.last)
