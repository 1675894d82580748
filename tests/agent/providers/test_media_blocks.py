"""A person's images and PDFs as each API receives them, through the real SDKs: the bytes
decoded from the request body are the bytes sent, in the person's order."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import pytest

from agent.providers import ChatMessage, ChatRequest, Document, Image, Text, ToolCall, ToolResult
from agent.providers.anthropic import AnthropicProvider
from agent.providers.openai_compat import OpenAICompatProvider
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI

PIXELS = bytes(range(256)) * 3
PDF = b"%PDF-1.4\n" + bytes(range(255, -1, -1))
PHOTO = Image("image/png", PIXELS, "[photo 2x2: dot.png]")
LEASE = Document("application/pdf", PDF, "[document lease.pdf, 1 page]\nThe rent is 900.")


def turn() -> ChatMessage:
    return ChatMessage("user", (Text("what do these say?"), PHOTO, LEASE))


@pytest.fixture
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
async def openai_api() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


async def ask_anthropic(api: FakeAnthropic, messages: list[ChatMessage]) -> list[dict]:
    provider = AnthropicProvider(model="claude-test", api_key="sk-test", base_url=api.base_url)
    api.reply_text("ok")
    try:
        await provider.complete(ChatRequest("system", messages))
    finally:
        await provider.aclose()
    return api.last.json["messages"]


async def ask_openai(api: FakeOpenAI, messages: list[ChatMessage]) -> list[dict]:
    provider = OpenAICompatProvider(model="llava", base_url=api.base_url)
    api.reply_text("ok")
    try:
        await provider.complete(ChatRequest("system", messages))
    finally:
        await provider.aclose()
    return api.last.json["messages"]


async def test_anthropic_gets_text_then_base64_image_and_document_blocks(anthropic_api) -> None:
    sent = await ask_anthropic(anthropic_api, [turn()])
    text, image, document = sent[0]["content"]
    assert text == {"type": "text", "text": "what do these say?"}
    assert image["type"] == "image"
    assert image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == PIXELS
    assert document["type"] == "document"
    assert document["source"]["type"] == "base64"
    assert document["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(document["source"]["data"]) == PDF


async def test_anthropic_cache_breakpoint_may_sit_on_a_document_block(anthropic_api) -> None:
    sent = await ask_anthropic(anthropic_api, [turn()])
    assert [block.get("cache_control") for block in sent[0]["content"]] == [
        None,
        None,
        {"type": "ephemeral"},
    ]


async def test_anthropic_cache_breakpoint_on_an_image_ending_the_earlier_turn(
    anthropic_api,
) -> None:
    earlier = ChatMessage("user", (Text("look"), PHOTO))
    messages = [earlier, ChatMessage("assistant", (Text("a dot"),)), ChatMessage.user("thanks")]
    sent = await ask_anthropic(anthropic_api, messages)
    assert sent[0]["content"][-1]["type"] == "image"
    assert sent[0]["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_anthropic_tool_results_still_lead_a_turn_with_an_image(anthropic_api) -> None:
    messages = [
        ChatMessage.user("look it up"),
        ChatMessage("assistant", (ToolCall("toolu_1", "recall", {}),)),
        ChatMessage("user", (Text("and this"), PHOTO, ToolResult("toolu_1", "found"))),
    ]
    sent = await ask_anthropic(anthropic_api, messages)
    assert [block["type"] for block in sent[2]["content"]] == ["tool_result", "text", "image"]


async def test_openai_gets_an_image_url_data_url_and_the_document_as_text(openai_api) -> None:
    sent = await ask_openai(openai_api, [turn()])
    assert sent[0] == {"role": "system", "content": "system"}
    text, image, document = sent[1]["content"]
    assert text == {"type": "text", "text": "what do these say?"}
    assert image["type"] == "image_url"
    prefix = "data:image/png;base64,"
    assert image["image_url"]["url"].startswith(prefix)
    assert base64.b64decode(image["image_url"]["url"].removeprefix(prefix)) == PIXELS
    assert document == {"type": "text", "text": LEASE.stand_in}


async def test_openai_turn_with_only_a_document_stays_one_string(openai_api) -> None:
    sent = await ask_openai(openai_api, [ChatMessage("user", (Text("read this"), LEASE))])
    assert sent[1] == {"role": "user", "content": f"read this\n\n{LEASE.stand_in}"}


async def test_openai_turn_without_files_is_unchanged(openai_api) -> None:
    sent = await ask_openai(openai_api, [ChatMessage.user("hello")])
    assert sent[1] == {"role": "user", "content": "hello"}
