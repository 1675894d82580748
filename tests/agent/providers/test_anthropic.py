"""The Anthropic provider, through the real SDK against the fake Messages API."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from agent.providers import (
    ChatMessage,
    ChatRequest,
    ProviderAuthError,
    ProviderError,
    ProviderModelError,
    ProviderTimeout,
    ProviderUnavailable,
    RetryPolicy,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from agent.providers.anthropic import AnthropicProvider
from tests.fakes.anthropic_api import FakeAnthropic

FAST = RetryPolicy(max_retries=3, base_delay=0.001, max_delay=0.01, deadline=5.0)
TOOLS = [
    ToolSpec("recall", "Search past sessions.", {"type": "object", "properties": {}}),
    ToolSpec("remember", "Keep a note.", {"type": "object", "properties": {}}),
]


@pytest.fixture
async def api() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


def make(
    api: FakeAnthropic, *, retry: RetryPolicy = FAST, timeout: float = 5.0
) -> AnthropicProvider:
    return AnthropicProvider(
        model="claude-test", api_key="sk-test", base_url=api.base_url, retry=retry, timeout=timeout
    )


@pytest.fixture
async def provider(api: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    provider = make(api)
    yield provider
    await provider.aclose()


def ask(text: str = "hi", *, system: str = "You are kioku.") -> ChatRequest:
    return ChatRequest(system=system, messages=[ChatMessage.user(text)], tools=TOOLS)


async def test_plain_reply_comes_back_as_text_with_end(api, provider) -> None:
    api.reply_text("Hello there.")
    reply = await provider.complete(ask())
    assert reply.content == (Text("Hello there."),)
    assert reply.stop_reason == "end"
    assert api.last.json["model"] == "claude-test"


async def test_streamed_text_reaches_on_text_in_order(api, provider) -> None:
    api.reply_text("Hel", "lo ", "wor", "ld")
    seen: list[str] = []

    async def on_text(delta: str) -> None:
        seen.append(delta)

    reply = await provider.complete(ask(), on_text)
    assert seen == ["Hel", "lo ", "wor", "ld"]
    assert reply.text == "Hello world"


async def test_tool_use_round_trip(api, provider) -> None:
    api.reply_tool_use("recall", {"query": "tea"}, tool_id="toolu_1", text="Let me look.")
    first = await provider.complete(ask("what tea do I like?"))
    assert first.stop_reason == "tool_use"
    assert first.tool_calls == [ToolCall("toolu_1", "recall", {"query": "tea"})]

    api.reply_text("You like sencha.")
    history = [
        ChatMessage.user("what tea do I like?"),
        first.as_message(),
        ChatMessage.tool_results([ToolResult("toolu_1", "sencha, no sugar")]),
    ]
    second = await provider.complete(ChatRequest("You are kioku.", history, TOOLS))
    assert second.text == "You like sencha."
    sent = api.last.json["messages"]
    assert sent[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "recall",
        "input": {"query": "tea"},
    }
    assert sent[2]["content"][0]["type"] == "tool_result"
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_1"
    assert sent[2]["content"][0]["content"] == "sencha, no sugar"


async def test_error_tool_result_is_flagged(api, provider) -> None:
    api.reply_text("Sorry.")
    history = [
        ChatMessage.user("x"),
        ChatMessage("assistant", (ToolCall("toolu_9", "recall", {}),)),
        ChatMessage.tool_results([ToolResult("toolu_9", "no such session", is_error=True)]),
    ]
    await provider.complete(ChatRequest("s", history))
    assert api.last.json["messages"][2]["content"][0]["is_error"] is True


async def test_cache_breakpoints_on_tools_system_and_latest_turns(api, provider) -> None:
    api.reply_text("ok")
    history = [
        ChatMessage.user("first"),
        ChatMessage("assistant", (Text("answer"),)),
        ChatMessage.user("second"),
        ChatMessage("assistant", (ToolCall("toolu_2", "recall", {}),)),
        ChatMessage.tool_results([ToolResult("toolu_2", "found")]),
    ]
    await provider.complete(ChatRequest("system text", history, TOOLS))
    body = api.last.json
    ephemeral = {"type": "ephemeral"}
    assert [t.get("cache_control") for t in body["tools"]] == [None, ephemeral]
    assert body["system"][0]["cache_control"] == ephemeral
    marked = [
        i
        for i, message in enumerate(body["messages"])
        for block in message["content"]
        if block.get("cache_control") == ephemeral
    ]
    # the latest turn and the user turn before it, each on its last block
    assert marked == [2, 4]
    assert body["messages"][4]["content"][-1]["cache_control"] == ephemeral


@pytest.mark.parametrize(
    "system",
    [
        "plain",
        "  leading and trailing spaces  \n\n",
        "日本語のメモ §\n- お茶: 煎茶\r\n\ttab \u2028 line separator 🍵",
        'quotes " and \\ backslashes </s> {"json": true}',
    ],
)
async def test_system_prompt_reaches_api_unchanged(api, provider, system: str) -> None:
    api.reply_text("ok")
    await provider.complete(ask(system=system))
    assert api.last.json["system"][0]["text"] == system


async def test_usage_includes_cache_read_and_write(api, provider) -> None:
    api.reply_text(
        "ok",
        usage={
            "input_tokens": 3,
            "output_tokens": 9,
            "cache_read_input_tokens": 1800,
            "cache_creation_input_tokens": 250,
        },
    )
    reply = await provider.complete(ask())
    assert reply.usage == Usage(
        input_tokens=3, output_tokens=9, cache_read_tokens=1800, cache_write_tokens=250
    )
    assert reply.usage.total_input_tokens == 2053


async def test_max_tokens_stop_is_reported(api, provider) -> None:
    api.reply_text("cut of", stop_reason="max_tokens")
    reply = await provider.complete(ask())
    assert reply.stop_reason == "max_tokens"


async def test_rate_limit_waits_for_retry_after_then_succeeds(api, provider) -> None:
    api.fail(429, headers={"retry-after": "0.2"})
    api.reply_text("finally")
    started = time.monotonic()
    reply = await provider.complete(ask())
    assert reply.text == "finally"
    assert len(api.requests) == 2
    assert time.monotonic() - started >= 0.2


async def test_overloaded_529_is_retried(api, provider) -> None:
    api.fail(529, message="Overloaded")
    api.reply_text("back")
    reply = await provider.complete(ask())
    assert reply.text == "back"
    assert len(api.requests) == 2


async def test_overloaded_event_inside_stream_is_retried(api, provider) -> None:
    api.fail_in_stream(error_type="overloaded_error")
    api.reply_text("back")
    assert (await provider.complete(ask())).text == "back"


async def test_failure_after_text_was_streamed_is_not_retried(api, provider) -> None:
    """A retry would send the same text to the person twice."""
    api.fail_in_stream("Hel", error_type="overloaded_error")
    api.reply_text("Hello again")
    seen: list[str] = []

    async def on_text(delta: str) -> None:
        seen.append(delta)

    with pytest.raises(ProviderUnavailable):
        await provider.complete(ask(), on_text)
    assert seen == ["Hel"]
    assert len(api.requests) == 1


async def test_retries_stop_after_max_retries(api) -> None:
    provider = make(api, retry=RetryPolicy(max_retries=1, base_delay=0.001, deadline=5))
    for _ in range(3):
        api.fail(503)
    with pytest.raises(ProviderUnavailable) as caught:
        await provider.complete(ask())
    await provider.aclose()
    assert len(api.requests) == 2
    assert "503" in str(caught.value)


async def test_retry_after_past_the_deadline_fails_at_once(api) -> None:
    provider = make(api, retry=RetryPolicy(base_delay=0.001, deadline=3))
    api.fail(429, headers={"retry-after": "60"})
    started = time.monotonic()
    with pytest.raises(ProviderUnavailable):
        await provider.complete(ask())
    await provider.aclose()
    assert time.monotonic() - started < 2


async def test_deadline_exceeded_raises_provider_timeout(api) -> None:
    provider = make(api, retry=RetryPolicy(base_delay=0.001, deadline=0.3))
    api.hang()
    started = time.monotonic()
    with pytest.raises(ProviderTimeout) as caught:
        await provider.complete(ask())
    await provider.aclose()
    assert time.monotonic() - started < 2
    assert caught.value.user_message


async def test_request_timeout_is_retried(api) -> None:
    provider = make(api, timeout=0.2)
    api.hang()
    api.reply_text("second try")
    reply = await provider.complete(ask())
    await provider.aclose()
    assert reply.text == "second try"


async def test_bad_key_raises_auth_error_for_the_person(api, provider) -> None:
    api.fail(401, message="invalid x-api-key")
    with pytest.raises(ProviderAuthError) as caught:
        await provider.complete(ask())
    assert caught.value.user_message == (
        "The model provider rejected kioku's API key — the owner should check KIOKU_LLM__API_KEY."
    )
    assert "401" in str(caught.value) and "invalid x-api-key" in str(caught.value)
    assert len(api.requests) == 1


async def test_unknown_model_raises_model_error(api, provider) -> None:
    api.fail(404, message="model: claude-test")
    with pytest.raises(ProviderModelError) as caught:
        await provider.complete(ask())
    assert "claude-test" in caught.value.user_message
    assert "KIOKU_LLM__MODEL" in caught.value.user_message
    assert len(api.requests) == 1


async def test_malformed_json_body_raises_provider_error(api, provider) -> None:
    api.malformed(b"<html>502 bad gateway</html>", content_type="text/html")
    with pytest.raises(ProviderError) as caught:
        await provider.complete(ask())
    assert type(caught.value) is ProviderError
    assert caught.value.user_message


async def test_malformed_stream_event_raises_provider_error(api, provider) -> None:
    api.malformed(b"event: message_start\ndata: {oops\n\n", content_type="text/event-stream")
    with pytest.raises(ProviderError, match="malformed"):
        await provider.complete(ask())


async def test_cancellation_mid_stream_closes_the_connection(api, provider) -> None:
    api.stream_then_hang("Hel")
    first_delta = asyncio.Event()

    async def on_text(delta: str) -> None:
        first_delta.set()

    task = asyncio.create_task(provider.complete(ask(), on_text))
    await asyncio.wait_for(first_delta.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)
    await asyncio.wait_for(api.client_gone.wait(), 5)


async def test_on_text_errors_are_not_disguised_as_provider_errors(api, provider) -> None:
    api.reply_text("Hel", "lo")

    async def on_text(delta: str) -> None:
        raise LookupError("chat gone")

    with pytest.raises(LookupError):
        await provider.complete(ask(), on_text)


async def test_unreachable_endpoint_is_unavailable() -> None:
    async with FakeAnthropic() as gone:
        url = gone.base_url
    provider = AnthropicProvider(
        model="m", api_key="k", base_url=url, retry=RetryPolicy(max_retries=0, deadline=5)
    )
    with pytest.raises(ProviderUnavailable, match="cannot reach"):
        await provider.complete(ask())
    await provider.aclose()


async def test_api_key_is_sent(api, provider) -> None:
    api.reply_text("ok")
    await provider.complete(ask())
    headers = api.last.headers
    assert headers.get("x-api-key") == "sk-test" or headers.get("authorization") == "Bearer sk-test"
