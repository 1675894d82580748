"""One turn through the agent: replies, tools, failures, and what is stored when."""

from __future__ import annotations

import asyncio

import pytest

from agent.agent import Agent
from agent.loop import FORCE_ANSWER
from agent.providers import NoProvider, RetryPolicy
from agent.tools.defaults import default_registry

BOTH = pytest.mark.parametrize("provider_kind", ["anthropic", "openai"])


@BOTH
async def test_streamed_reply_reaches_the_caller_in_order_and_is_stored(rig) -> None:
    session = await rig.dm()
    rig.say("Good ", "morning", ", Aiko!")
    deltas: list[str] = []

    async def collect(delta: str) -> None:
        deltas.append(delta)

    outcome = await rig.agent.respond(rig.turn(session, "hello"), collect)
    assert outcome.text == "Good morning, Aiko!"
    assert deltas == ["Good ", "morning", ", Aiko!"]
    stored = await rig.store.messages(session.id)
    assert [(m.role, m.content) for m in stored] == [
        ("user", "hello"),
        ("assistant", "Good morning, Aiko!"),
    ]


@BOTH
async def test_memory_tool_call_writes_the_note_then_the_model_answers(rig) -> None:
    session = await rig.dm()
    rig.call_tool("memory", {"action": "add", "target": "user", "content": "Prefers green tea"})
    rig.say("Noted: green tea.")
    outcome = await rig.agent.respond(rig.turn(session, "I prefer green tea"))
    assert outcome.text == "Noted: green tea."
    assert outcome.tool_calls == 1
    notes = (rig.home / "people" / "aiko" / "USER.md").read_text()
    assert "Prefers green tea" in notes
    assert "Added to USER.md" in rig.texts_of(rig.api.requests[-1])
    stored = await rig.store.messages(session.id)
    tool_rows = [m for m in stored if m.role == "tool"]
    assert tool_rows[0].tool_name == "memory"
    assert "green tea" in (tool_rows[0].tool_arguments or "")


async def test_invalid_tool_arguments_come_back_to_the_model_as_an_error(rig) -> None:
    session = await rig.dm()
    rig.call_tool("memory", {"action": "shout", "target": "user"})
    rig.say("Sorry, let me fix that.")
    await rig.agent.respond(rig.turn(session, "remember this"))
    body = rig.api.requests[-1].json
    result = body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["is_error"] is True
    assert "Invalid arguments for memory" in str(result["content"])


async def test_unknown_tool_is_reported_to_the_model_with_the_available_ones(rig) -> None:
    session = await rig.dm()
    rig.call_tool("launch_rockets", {})
    rig.say("I cannot do that.")
    await rig.agent.respond(rig.turn(session, "launch"))
    assert "There is no tool 'launch_rockets'" in rig.texts_of(rig.api.requests[-1])
    assert "memory" in rig.texts_of(rig.api.requests[-1])


@pytest.mark.parametrize("agent_env", [{"KIOKU_AGENT__MAX_TOOL_ROUNDS": "2"}])
async def test_tool_rounds_are_bounded_then_an_answer_is_forced(rig) -> None:
    session = await rig.dm()
    for index in range(3):
        rig.call_tool(
            "memory",
            {"action": "add", "target": "memory", "content": f"fact {index}"},
            call_id=f"t{index}",
        )
    outcome = await rig.agent.respond(rig.turn(session, "loop forever"))
    assert len(rig.api.requests) == 3
    assert FORCE_ANSWER in rig.texts_of(rig.api.requests[-1])
    assert outcome.tool_calls == 2
    rig.say("Fine.")
    await rig.agent.respond(rig.turn(session, "and now?"))
    # The third call was never run: it is answered as not run, so the API accepts the history.
    assert "not run" in rig.texts_of(rig.api.requests[-1])


@BOTH
async def test_rate_limit_then_success(rig) -> None:
    session = await rig.dm()
    rig.fail(429, headers={"retry-after": "0.01"})
    rig.say("Here I am.")
    outcome = await rig.agent.respond(rig.turn(session, "hi"))
    assert outcome.text == "Here I am."
    assert outcome.error is None


@BOTH
async def test_bad_key_gives_a_short_reply_and_keeps_the_message(rig) -> None:
    session = await rig.dm()
    rig.fail(401)
    outcome = await rig.agent.respond(rig.turn(session, "are you there?"))
    assert "API key" in outcome.text
    assert outcome.error
    stored = await rig.store.messages(session.id)
    assert [(m.role, m.content) for m in stored] == [("user", "are you there?")]


async def test_timeout_keeps_the_message_and_the_next_turn_sends_both(rig) -> None:
    session = await rig.dm()
    rig.api.hang()
    rig.agent.provider._retry = RetryPolicy(max_retries=0, deadline=0.3)
    outcome = await rig.agent.respond(rig.turn(session, "first question"))
    assert "too long" in outcome.text
    rig.say("Answering both.")
    await rig.agent.respond(rig.turn(session, "second question"))
    sent = rig.texts_of(rig.api.requests[-1])
    assert "first question" in sent and "second question" in sent
    stored = await rig.store.messages(session.id)
    assert [m.content for m in stored if m.role == "user"] == ["first question", "second question"]


async def test_stop_interrupts_the_model_call_and_records_the_turn(rig) -> None:
    session = await rig.dm()
    rig.api.stream_then_hang("Let me think")
    started = asyncio.Event()

    async def on_text(_delta: str) -> None:
        started.set()

    task = asyncio.create_task(rig.agent.respond(rig.turn(session, "long task"), on_text))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = await rig.store.messages(session.id)
    assert stored[-1].role == "assistant"
    assert stored[-1].content == "Let me think\n\n(interrupted)"
    rig.say("Back.")
    outcome = await rig.agent.respond(rig.turn(session, "continue"))
    assert outcome.text == "Back."


async def test_without_a_model_free_text_gets_the_configuration_hint(rig) -> None:
    agent = Agent(NoProvider("Set KIOKU_LLM__API_KEY."), rig.agent.services, default_registry())
    session = await rig.dm()
    outcome = await agent.respond(rig.turn(session, "hello?"))
    assert outcome.text == "Set KIOKU_LLM__API_KEY."
    assert [m.content for m in await rig.store.messages(session.id)] == ["hello?"]
    await agent.after_turn(session.id, "aiko")
    await agent.close_session(session.id, "new")
    closed = await rig.store.get_session(session.id)
    assert closed is not None and closed.ended_at is not None
    assert closed.title == "hello?"


async def test_token_usage_of_every_call_is_summed_on_the_session(rig) -> None:
    session = await rig.dm()
    rig.call_tool("memory", {"action": "add", "target": "user", "content": "Plays the cello"})
    rig.api.reply_text(
        "Noted.",
        usage={"input_tokens": 5, "output_tokens": 3, "cache_read_input_tokens": 900},
    )
    await rig.agent.respond(rig.turn(session, "I play the cello"))
    stored = await rig.store.get_session(session.id)
    assert stored is not None
    # The fake's default usage (12 in, 7 out) for the tool call, then the scripted one.
    assert stored.usage.input_tokens == 12 + 5
    assert stored.usage.output_tokens == 7 + 3
    assert stored.usage.cache_read_tokens == 900
