"""Server-sent events as the Anthropic and OpenAI APIs send them, built by hand so that
any field can hold anything: for the tests of the model door."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.fakes.anthropic_api import DEFAULT_USAGE, _message_start
from tests.fakes.scripted_server import sse


def anthropic_start() -> bytes:
    return _message_start(DEFAULT_USAGE)


def openai_chunk(delta: dict[str, Any] | None = None, finish: Any = None, **top: Any) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }
    return sse(None, {**body, **top})


def as_event(kind: str, raw: bytes) -> list[bytes]:
    """`raw` as the data of one event, after a good start."""
    if kind == "anthropic":
        return [anthropic_start(), b"event: content_block_delta\ndata: " + raw + b"\n\n"]
    return [openai_chunk({"role": "assistant", "content": ""}), b"data: " + raw + b"\n\n"]


def anthropic_text(text: Any, stop: Any = "end_turn", usage: Any = 5) -> list[bytes]:
    return [
        anthropic_start(),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop},
                "usage": {"output_tokens": usage},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]


def anthropic_tool(tool_id: Any, name: Any) -> list[bytes]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    return [
        anthropic_start(),
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        sse("message_stop", {"type": "message_stop"}),
    ]


def openai_text(content: Any, finish: Any = "stop", usage: Any = 5) -> list[bytes]:
    tokens = {"prompt_tokens": usage, "completion_tokens": 1, "total_tokens": 6}
    return [
        openai_chunk({"role": "assistant", "content": ""}),
        openai_chunk({"content": content}),
        openai_chunk({}, finish),
        sse(None, {"id": "x", "object": "chat.completion.chunk", "choices": [], "usage": tokens}),
        sse(None, "[DONE]"),
    ]


def openai_tool(call_id: Any, name: Any, index: Any = 0) -> list[bytes]:
    call = {"index": index, "id": call_id, "type": "function", "function": {"name": name}}
    return [
        openai_chunk({"tool_calls": [call]}),
        openai_chunk({}, "tool_calls"),
        sse(None, "[DONE]"),
    ]


CUT_MID_EVENT = b'event: content_block_start\ndata: {"type": "content_block_st'
DEEP_ACROSS_LINES = b"".join(b"data: " + b"[" * 50 + b"\n" for _ in range(2_000)) + b"\n"
"""An event whose data lines are each shallow, joined by the SDK into 100,000 levels."""


BROKEN: dict[str, dict[str, list[bytes]]] = {
    "anthropic": {
        "text-is-a-number": anthropic_text(42),
        "text-is-an-object": anthropic_text({"text": "hi"}),
        "stop-reason-is-a-list": anthropic_text("hi", stop=["end_turn"]),
        "tool-name-is-a-number": anthropic_tool("toolu_1", 42),
        "tool-id-is-a-list": anthropic_tool(["toolu_1"], "memory"),
        "tool-name-is-huge": anthropic_tool("toolu_1", "m" * 100_000),
        "usage-too-large-to-store": anthropic_text("hi", usage=10**30),
        "usage-is-a-string": anthropic_text("hi", usage="seven"),
        "ends-mid-event": [anthropic_start(), CUT_MID_EVENT],
        "deep-across-data-lines": [anthropic_start(), b"event: ping\n" + DEEP_ACROSS_LINES],
        "ends-after-text": anthropic_text("half an answ")[:3],
    },
    "openai": {
        "no-choices": [
            sse(None, {"id": "x", "object": "chat.completion.chunk"}),
            sse(None, "[DONE]"),
        ],
        "choices-is-a-number": [openai_chunk(choices=42), sse(None, "[DONE]")],
        "choices-is-an-object": [openai_chunk(choices={"index": 0}), sse(None, "[DONE]")],
        "choice-without-delta": [openai_chunk(choices=[{"index": 0}]), sse(None, "[DONE]")],
        "content-is-a-number": openai_text(42),
        "content-is-a-list": openai_text(["hi"]),
        "finish-reason-is-an-object": openai_text("hi", finish={"why": "stop"}),
        "tool-name-is-a-number": openai_tool("call_1", 42),
        "tool-id-is-a-number": openai_tool(42, "memory"),
        "tool-index-is-a-string": openai_tool("call_1", "memory", index="zero"),
        "tool-without-name": openai_tool("call_1", None),
        "usage-too-large-to-store": openai_text("hi", usage=10**30),
        "usage-is-negative": openai_text("hi", usage=-5),
        "ends-mid-event": [openai_chunk({"content": "Hel"}), b'data: {"id": "x", "choi'],
        "deep-across-data-lines": [openai_chunk({"content": "Hel"}), DEEP_ACROSS_LINES],
        "ends-after-text": openai_text("half an answ")[:2],
    },
}
"""Replies a careless server sends, by provider and name: each must cost one apology."""


@st.composite
def deep_event(draw: st.DrawFn) -> bytes:
    """One event whose data lines are each shallow but nest up to 10,000 levels once the
    SDK joins them (Python's parser breaks near its recursion limit: 1,000, and a few
    thousand more while hypothesis runs), with comment lines between them (they do not
    end an event) and any kind of line end."""
    depth = draw(st.integers(1, 10_000))
    opener = draw(st.sampled_from([b"[", b'{"a":']))
    end = draw(st.sampled_from([b"\n", b"\r", b"\r\n"]))
    lines: list[bytes] = []
    while depth > 0:
        size = min(depth, draw(st.integers(1, 500)))
        depth -= size
        lines.append(b"data: " + opener * size + end)
        if draw(st.booleans()):
            lines.append(b": keep-alive" + end)
    return b"".join(lines) + end
