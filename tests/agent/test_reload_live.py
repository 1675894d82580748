"""After a platform's edit or deletion changed a stored turn, the open session's live copy
is rebuilt from the store: the model never sees the old text, and the prompt stays frozen."""

from __future__ import annotations

from dataclasses import replace

from agent.turn import Turn
from memory.history.platform_edits import amend_said, erase_said
from memory.store.records import Session
from tests.helpers.agent_rig import Rig

OLD = "ZQXJVORPAL"
NEW = "KWYJIBOMEANT"


def sent(rig: Rig, session: Session, text: str, message_id: str) -> Turn:
    return replace(rig.turn(session, text), platform_message_id=message_id)


async def test_an_amended_message_reaches_the_model_in_its_new_words(rig: Rig) -> None:
    session = await rig.dm()
    rig.say("noted")
    await rig.agent.respond(sent(rig, session, f"meet me at {OLD}", "41"))
    system = rig.system_of(rig.api.last)
    await amend_said(rig.store, "telegram", session.chat, "41", f"meet me at {NEW}")
    assert await rig.agent.reload(session.id)
    rig.say("ok")
    await rig.agent.respond(sent(rig, session, "where again?", "42"))
    texts = rig.texts_of(rig.api.last)
    assert f"meet me at {NEW}" in texts and OLD not in texts
    assert rig.system_of(rig.api.last) == system


async def test_an_erased_message_leaves_the_models_view_and_the_answer_stays(rig: Rig) -> None:
    session = await rig.dm()
    rig.say("first answer")
    await rig.agent.respond(sent(rig, session, "hello", "40"))
    rig.say("noted your code")
    await rig.agent.respond(sent(rig, session, f"my code is {OLD}", "41"))
    await erase_said(rig.store, "telegram", session.chat, "41")
    assert await rig.agent.reload(session.id)
    rig.say("ok")
    await rig.agent.respond(sent(rig, session, "what now?", "42"))
    texts = rig.texts_of(rig.api.last)
    assert OLD not in texts
    assert "hello" in texts and "noted your code" in texts


async def test_a_session_without_a_live_copy_has_nothing_to_reload(rig: Rig) -> None:
    session = await rig.dm()
    assert not await rig.agent.reload(session.id)
