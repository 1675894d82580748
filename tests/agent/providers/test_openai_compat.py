"""The OpenAI-compatible provider, through the real `openai` SDK against the fake endpoint."""

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
    ProviderUnavailable,
    RetryPolicy,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from agent.providers.openai_compat import OpenAICompatProvider
from tests.fakes.openai_api import FakeOpenAI

FAST = RetryPolicy(max_retries=3, base_delay=0.001, max_delay=0.01, deadline=5.0)
TOOLS = [ToolSpec("recall", "Search past sessions.", {"type": "object", "properties": {}})]


@pytest.fixture
async def api() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def provider(api: FakeOpenAI) -> AsyncIterator[OpenAICompatProvider]:
    provider = OpenAICompatProvider(model="llama3.2", base_url=api.base_url, retry=FAST)
    yield provider
    await provider.aclose()


def ask(text: str = "hi", *, system: str = "You are kioku.") -> ChatRequest:
    return ChatRequest(system=system, messages=[ChatMessage.user(text)], tools=TOOLS)


async def test_plain_reply_comes_back_as_text_with_end(api, provider) -> None:
    api.reply_text("Hello there.")
    reply = await provider.complete(ask())
    assert reply.content == (Text("Hello there."),)
    assert reply.stop_reason == "end"
    assert api.last.json["model"] == "llama3.2"


async def test_streamed_text_reaches_on_text_in_order(api, provider) -> None:
    api.reply_text("Hel", "lo ", "wor", "ld")
    seen: list[str] = []

    async def on_text(delta: str) -> None:
        seen.append(delta)

    reply = await provider.complete(ask(), on_text)
    assert seen == ["Hel", "lo ", "wor", "ld"]
    assert reply.text == "Hello world"


async def test_system_prompt_is_the_first_message_unchanged(api, provider) -> None:
    system = "日本語のメモ §\n  trailing  \r\n🍵"
    api.reply_text("ok")
    await provider.complete(ask(system=system))
    assert api.last.json["messages"][0] == {"role": "system", "content": system}


async def test_tool_calls_are_assembled_from_deltas(api, provider) -> None:
    api.reply_tool_calls(("recall", {"query": "tea", "limit": 3}), ("recall", {"query": "cake"}))
    reply = await provider.complete(ask())
    assert reply.stop_reason == "tool_use"
    assert reply.tool_calls == [
        ToolCall("call_fake_0", "recall", {"query": "tea", "limit": 3}),
        ToolCall("call_fake_1", "recall", {"query": "cake"}),
    ]
    assert api.last.json["tools"][0]["function"]["name"] == "recall"


async def test_tool_call_round_trip(api, provider) -> None:
    api.reply_tool_calls(("recall", {"query": "tea"}), text="Let me look.")
    first = await provider.complete(ask("what tea do I like?"))
    api.reply_text("You like sencha.")
    history = [
        ChatMessage.user("what tea do I like?"),
        first.as_message(),
        ChatMessage.tool_results([ToolResult("call_fake_0", "sencha", is_error=False)]),
    ]
    second = await provider.complete(ChatRequest("You are kioku.", history, TOOLS))
    assert second.text == "You like sencha."
    sent = api.last.json["messages"]
    assert sent[2]["role"] == "assistant"
    assert sent[2]["content"] == "Let me look."
    assert sent[2]["tool_calls"][0]["id"] == "call_fake_0"
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == '{"query": "tea"}'
    assert sent[3] == {"role": "tool", "tool_call_id": "call_fake_0", "content": "sencha"}


async def test_stop_after_tool_calls_still_means_tool_use(api, provider) -> None:
    """Some local servers finish with "stop" even when they called a tool."""
    api.reply_tool_calls(("recall", {}), finish_reason="stop")
    reply = await provider.complete(ask())
    assert reply.stop_reason == "tool_use"


async def test_length_finish_is_max_tokens(api, provider) -> None:
    api.reply_text("cut of", finish_reason="length")
    assert (await provider.complete(ask())).stop_reason == "max_tokens"


async def test_usage_separates_cached_prompt_tokens(api, provider) -> None:
    api.reply_text(
        "ok", usage={"prompt_tokens": 1000, "completion_tokens": 8, "cached_tokens": 900}
    )
    reply = await provider.complete(ask())
    assert reply.usage == Usage(input_tokens=100, output_tokens=8, cache_read_tokens=900)
    assert reply.usage.total_input_tokens == 1000


async def test_rate_limit_waits_for_retry_after_then_succeeds(api, provider) -> None:
    api.fail(429, headers={"retry-after": "0.2"})
    api.reply_text("finally")
    started = time.monotonic()
    reply = await provider.complete(ask())
    assert reply.text == "finally"
    assert len(api.requests) == 2
    assert time.monotonic() - started >= 0.2


async def test_server_error_is_retried(api, provider) -> None:
    api.fail(502)
    api.reply_text("back")
    assert (await provider.complete(ask())).text == "back"


async def test_bad_key_raises_auth_error_for_the_person(api, provider) -> None:
    api.fail(401, message="Incorrect API key provided")
    with pytest.raises(ProviderAuthError) as caught:
        await provider.complete(ask())
    assert "KIOKU_LLM__API_KEY" in caught.value.user_message
    assert "Incorrect API key provided" in str(caught.value)
    assert len(api.requests) == 1


async def test_unknown_model_raises_model_error(api, provider) -> None:
    api.fail(404, message="The model `llama3.2` does not exist", code="model_not_found")
    with pytest.raises(ProviderModelError) as caught:
        await provider.complete(ask())
    assert "llama3.2" in caught.value.user_message


async def test_model_not_found_code_wins_over_status(api, provider) -> None:
    api.fail(400, message="no such model", code="model_not_found")
    with pytest.raises(ProviderModelError):
        await provider.complete(ask())


async def test_malformed_stream_raises_provider_error(api, provider) -> None:
    api.malformed(b"data: {oops\n\n", content_type="text/event-stream")
    with pytest.raises(ProviderError, match="malformed"):
        await provider.complete(ask())


async def test_invalid_tool_arguments_come_back_as_a_refusal_for_the_model(api, provider) -> None:
    broken = b'data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m",'
    broken += b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1",'
    broken += (
        b'"function":{"name":"recall","arguments":"{\\"q\\": "}}]},"finish_reason":"tool_calls"}]}'
    )
    broken += b"\n\ndata: [DONE]\n\n"
    api.malformed(broken, content_type="text/event-stream")
    (call,) = (await provider.complete(ask())).tool_calls
    assert (call.name, call.arguments) == ("recall", {})
    assert call.refusal is not None
    assert call.refusal.startswith("Arguments for recall must be valid JSON")


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


async def test_without_a_key_a_placeholder_is_sent(api, provider) -> None:
    api.reply_text("ok")
    await provider.complete(ask())
    assert api.last.headers["Authorization"].startswith("Bearer ")


async def test_unreachable_endpoint_is_unavailable() -> None:
    async with FakeOpenAI() as gone:
        url = gone.base_url
    provider = OpenAICompatProvider(
        model="m", base_url=url, retry=RetryPolicy(max_retries=0, deadline=5)
    )
    with pytest.raises(ProviderUnavailable, match="cannot reach"):
        await provider.complete(ask())
    await provider.aclose()
