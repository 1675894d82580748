"""Long sessions are compacted; reviews keep notes current without delaying replies."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from agent.compaction import SUMMARY_SYSTEM
from agent.reflection import REVIEW

SMALL_WINDOW = {
    "KIOKU_LLM__CONTEXT_WINDOW": "2000",
    "KIOKU_AGENT__COMPACTION__KEEP_FIRST": "2",
    "KIOKU_AGENT__COMPACTION__KEEP_LAST": "2",
}


async def chat(rig, session, count: int, prompt_tokens: int = 100) -> None:
    for index in range(count):
        rig.say(f"answer {index}", prompt_tokens=prompt_tokens)
        await rig.agent.respond(rig.turn(session, f"question {index}"))
        await rig.agent.after_turn(session.id, "aiko")


@pytest.mark.parametrize("agent_env", [SMALL_WINDOW])
async def test_compaction_summarises_the_middle_when_the_window_fills(rig) -> None:
    session = await rig.dm()
    await chat(rig, session, 4)
    rig.say("answer 4", prompt_tokens=1500)  # 75% of the window: over the 60% threshold
    rig.api.reply_text("They asked questions 1 to 3; all answered.")  # the summary call
    await rig.agent.respond(rig.turn(session, "question 4"))
    await rig.agent.after_turn(session.id, "aiko")
    summary_request = rig.api.last.json
    assert summary_request["system"][0]["text"] == SUMMARY_SYSTEM
    assert "question 2" in summary_request["messages"][0]["content"][0]["text"]

    rig.say("answer 5")
    await rig.agent.respond(rig.turn(session, "question 5"))
    sent = rig.texts_of(rig.api.last)
    assert "They asked questions 1 to 3" in sent
    assert "question 0" in sent and "question 4" in sent and "question 5" in sent
    assert "question 2" not in sent
    stored = await rig.store.get_session(session.id)
    assert stored is not None and stored.summary == "They asked questions 1 to 3; all answered."
    assert len([m for m in await rig.store.messages(session.id) if m.role == "user"]) == 6


@pytest.mark.parametrize("agent_env", [SMALL_WINDOW])
async def test_failed_compaction_drops_the_middle_with_a_note(rig) -> None:
    session = await rig.dm()
    await chat(rig, session, 4)
    rig.say("answer 4", prompt_tokens=1500)
    rig.fail(400)
    await rig.agent.respond(rig.turn(session, "question 4"))
    await rig.agent.after_turn(session.id, "aiko")
    rig.say("answer 5")
    outcome = await rig.agent.respond(rig.turn(session, "question 5"))
    assert outcome.text == "answer 5"
    sent = rig.texts_of(rig.api.last)
    assert "were left out to fit the context" in sent
    assert "question 2" not in sent


@pytest.mark.parametrize("agent_env", [{"KIOKU_AGENT__REFLECTION__EVERY_USER_TURNS": "2"}])
async def test_reflection_adds_a_note_after_n_turns_without_delaying_the_reply(rig) -> None:
    session = await rig.dm()
    await chat(rig, session, 1)
    gate = asyncio.Event()
    rig.say("Enjoy the trip!")
    outcome = await rig.agent.respond(rig.turn(session, "I'm moving to Osaka in March"))
    assert outcome.text == "Enjoy the trip!"

    rig.api.hold_until(gate)  # the review's first call waits until the test lets it go
    rig.call_tool("memory", {"action": "add", "target": "memory", "content": "Moving to Osaka"})
    rig.say("nothing else to save")
    await rig.agent.after_turn(session.id, "aiko")  # returns while the review waits
    assert not (rig.home / "people" / "aiko" / "MEMORY.md").exists()
    gate.set()
    await rig.agent.idle()
    assert "Moving to Osaka" in (rig.home / "people" / "aiko" / "MEMORY.md").read_text()
    review_request = rig.api.requests[-2]
    assert REVIEW in rig.texts_of(review_request)
    assert review_request.json["system"] == rig.api.requests[0].json["system"]


@pytest.mark.parametrize("agent_env", [{"KIOKU_AGENT__REFLECTION__ENABLED": "false"}])
async def test_reflection_can_be_turned_off(rig) -> None:
    session = await rig.dm()
    await chat(rig, session, 12)
    await rig.agent.idle()
    assert len(rig.api.requests) == 12


async def test_closing_a_session_stores_the_models_title_and_summary(rig) -> None:
    session = await rig.dm()
    await chat(rig, session, 1)
    rig.say("nothing to save")  # the closing review
    rig.say('{"title": "Questions", "summary": "Aiko asked one question. It was answered."}')
    await rig.agent.close_session(session.id, "idle")
    stored = await rig.store.get_session(session.id)
    assert stored is not None
    assert (stored.title, stored.summary, stored.end_reason) == (
        "Questions",
        "Aiko asked one question. It was answered.",
        "idle",
    )


async def test_closing_falls_back_to_the_first_words_when_the_model_fails(rig) -> None:
    session = await rig.dm()
    await chat(rig, session, 1)
    rig.say("nothing to save")
    rig.fail(500)
    rig.fail(500)
    rig.fail(500)
    await rig.agent.close_session(session.id, "shutdown")
    stored = await rig.store.get_session(session.id)
    assert stored is not None and stored.title == "question 0"
    assert stored.ended_at is not None


@pytest.mark.parametrize("agent_env", [SMALL_WINDOW])
async def test_the_compaction_call_is_charged_to_the_person_whose_turn_filled_the_window(
    rig,
) -> None:
    session = await rig.dm()
    await chat(rig, session, 4)
    rig.say("answer 4", prompt_tokens=1500)
    rig.api.reply_text("They asked questions 1 to 3.", usage={"input_tokens": 900})
    await rig.agent.respond(rig.turn(session, "question 4"))
    await rig.agent.after_turn(session.id, "aiko")

    now = datetime.now(UTC)
    kinds = await rig.store.usage_totals(
        "kind", now - timedelta(hours=1), now + timedelta(hours=1), person="aiko"
    )

    assert {(t.key, t.calls) for t in kinds} == {("reply", 5), ("compaction", 1)}
    (compaction,) = [t for t in kinds if t.key == "compaction"]
    assert compaction.input_tokens == 900
