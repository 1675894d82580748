"""What /undo takes out of a live session: the person's latest text and everything after
it, whatever shape the turns took (tool rounds, a failed call, the round limit)."""

from __future__ import annotations

from agent.history import without_last_exchange
from agent.loop import FORCE_ANSWER
from agent.providers import ChatMessage, Text, ToolCall, ToolResult

NOTES = (FORCE_ANSWER,)


def user(*texts: str) -> ChatMessage:
    return ChatMessage("user", tuple(Text(t) for t in texts))


def said(text: str) -> ChatMessage:
    return ChatMessage("assistant", (Text(text),))


def call(call_id: str) -> ChatMessage:
    return ChatMessage("assistant", (ToolCall(call_id, "session_search", {"query": "x"}),))


def results(call_id: str, *extra: str) -> ChatMessage:
    return ChatMessage("user", (ToolResult(call_id, "found"), *(Text(t) for t in extra)))


def test_a_plain_exchange_goes() -> None:
    kept = [user("hello"), said("hi")]
    assert without_last_exchange([*kept, user("my pin is 9317"), said("noted")], NOTES) == kept


def test_tool_rounds_and_the_round_limit_note_go_with_the_reply() -> None:
    kept = [user("hello"), said("hi")]
    exchange = [
        user("look it up"),
        call("c1"),
        results("c1"),
        call("c2"),
        results("c2", FORCE_ANSWER),
        said("here it is"),
    ]
    assert without_last_exchange([*kept, *exchange], NOTES) == kept


def test_an_earlier_message_merged_into_the_same_turn_stays() -> None:
    # The model failed after "first", so "second" was merged into the same user turn.
    messages = [user("hello"), said("hi"), user("first", "second"), said("answer")]
    assert without_last_exchange(messages, NOTES) == [user("hello"), said("hi"), user("first")]


def test_results_the_message_followed_stay_before_it() -> None:
    # A call failed after the tool round; the person wrote again into the results' turn.
    messages = [user("look it up"), call("c1"), results("c1", "never mind"), said("ok")]
    assert without_last_exchange(messages, NOTES) == [user("look it up"), call("c1"), results("c1")]


def test_a_compaction_note_before_the_message_stays() -> None:
    note = "(kioku: summary of 6 earlier messages …)\nthey talked about tea"
    messages = [user("start"), said("hi"), user(note, "my pin is 9317"), said("noted")]
    assert without_last_exchange(messages, NOTES) == [user("start"), said("hi"), user(note)]


def test_nothing_said_is_none() -> None:
    assert without_last_exchange([], NOTES) is None
