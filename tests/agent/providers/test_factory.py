"""Which provider the settings select, and what a person reads when none is configured."""

from __future__ import annotations

import pytest

from agent.providers import (
    ChatMessage,
    ChatRequest,
    NoProvider,
    ProviderNotConfigured,
    ProviderTimeout,
    build_provider,
)
from agent.providers.anthropic import AnthropicProvider
from agent.providers.openai_compat import OpenAICompatProvider
from config.settings import Settings
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI

ASK = ChatRequest(system="s", messages=[ChatMessage.user("hi")])


def test_anthropic_is_the_default_with_a_kioku_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIOKU_LLM__API_KEY", "sk-kioku")
    monkeypatch.setenv("KIOKU_LLM__MODEL", "claude-haiku-4-5")
    provider = build_provider(Settings().llm)
    assert isinstance(provider, AnthropicProvider)
    assert provider.model == "claude-haiku-4-5"


async def test_anthropic_key_falls_back_to_anthropic_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeAnthropic() as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
        monkeypatch.setenv("KIOKU_LLM__BASE_URL", api.base_url)
        provider = build_provider(Settings().llm)
        api.reply_text("ok")
        await provider.complete(ASK)
        await provider.aclose()
    headers = api.last.headers
    assert "sk-from-env" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])


async def test_kioku_key_wins_over_anthropic_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeAnthropic() as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
        monkeypatch.setenv("KIOKU_LLM__API_KEY", "sk-kioku")
        monkeypatch.setenv("KIOKU_LLM__BASE_URL", api.base_url)
        provider = build_provider(Settings().llm)
        api.reply_text("ok")
        await provider.complete(ASK)
        await provider.aclose()
    sent = " ".join(api.last.headers.values())
    assert "sk-kioku" in sent
    assert "sk-from-env" not in sent


async def test_no_key_gives_a_provider_that_explains_how_to_configure() -> None:
    provider = build_provider(Settings().llm)
    assert isinstance(provider, NoProvider)
    assert "KIOKU_LLM__API_KEY" in provider.reply
    assert "\n" not in provider.reply
    with pytest.raises(ProviderNotConfigured) as caught:
        await provider.complete(ASK)
    assert caught.value.user_message == provider.reply


def test_openai_without_base_url_is_not_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIOKU_LLM__PROVIDER", "openai")
    monkeypatch.setenv("KIOKU_LLM__API_KEY", "sk-something")
    provider = build_provider(Settings().llm)
    assert isinstance(provider, NoProvider)
    assert "KIOKU_LLM__BASE_URL" in provider.reply


async def test_openai_settings_reach_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeOpenAI() as api:
        monkeypatch.setenv("KIOKU_LLM__PROVIDER", "openai")
        monkeypatch.setenv("KIOKU_LLM__BASE_URL", api.base_url)
        monkeypatch.setenv("KIOKU_LLM__MODEL", "qwen2.5:7b")
        monkeypatch.setenv("KIOKU_LLM__MAX_TOKENS", "321")
        provider = build_provider(Settings().llm)
        assert isinstance(provider, OpenAICompatProvider)
        api.reply_text("ok")
        await provider.complete(ASK)
        await provider.aclose()
    assert api.last.json["model"] == "qwen2.5:7b"
    assert api.last.json["max_tokens"] == 321


async def test_deadline_setting_bounds_a_call(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeAnthropic() as api:
        monkeypatch.setenv("KIOKU_LLM__API_KEY", "sk-kioku")
        monkeypatch.setenv("KIOKU_LLM__BASE_URL", api.base_url)
        monkeypatch.setenv("KIOKU_LLM__DEADLINE", "0.3")
        provider = build_provider(Settings().llm)
        api.hang()
        with pytest.raises(ProviderTimeout, match=r"0\.3 s deadline"):
            await provider.complete(ASK)
        await provider.aclose()
