"""The neutral conversation types the agent builds on."""

from __future__ import annotations

import pytest

from agent.providers import ChatMessage, ModelReply, Text, ToolCall, ToolResult


def test_user_message_cannot_hold_a_tool_call() -> None:
    with pytest.raises(ValueError, match="user message cannot hold a ToolCall"):
        ChatMessage("user", (ToolCall("t1", "recall", {}),))


def test_assistant_message_cannot_hold_a_tool_result() -> None:
    with pytest.raises(ValueError, match="assistant message cannot hold a ToolResult"):
        ChatMessage("assistant", (ToolResult("t1", "x"),))


def test_content_given_as_a_list_is_stored_as_a_tuple() -> None:
    message = ChatMessage("user", [Text("a"), ToolResult("t1", "b")])  # type: ignore[arg-type]
    assert message.content == (Text("a"), ToolResult("t1", "b"))


def test_reply_becomes_the_assistant_turn() -> None:
    reply = ModelReply((Text("Looking. "), ToolCall("t1", "recall", {"q": "x"})), "tool_use")
    assert reply.as_message() == ChatMessage("assistant", reply.content)
    assert reply.text == "Looking. "
    assert reply.tool_calls == [ToolCall("t1", "recall", {"q": "x"})]
