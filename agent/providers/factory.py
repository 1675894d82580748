"""Choose the provider from the settings, or explain in one line how to configure one."""

from __future__ import annotations

import os

from agent.providers.base import ChatRequest, ModelReply, OnText, Provider
from agent.providers.errors import ProviderNotConfigured
from agent.providers.retry import RetryPolicy
from config.settings import LLMSettings

NO_ANTHROPIC_KEY = (
    "No model is configured yet — the owner should set KIOKU_LLM__API_KEY (or ANTHROPIC_API_KEY) "
    "for Anthropic, or KIOKU_LLM__PROVIDER=openai with KIOKU_LLM__BASE_URL, then restart kioku."
)
NO_OPENAI_URL = (
    "No model endpoint is configured yet — the owner should set KIOKU_LLM__BASE_URL "
    "(e.g. http://localhost:11434/v1 for Ollama) and KIOKU_LLM__MODEL, then restart kioku."
)


class NoProvider:
    """Stands in when no model is configured: the daemon still runs (memory, commands) and
    every model call raises `ProviderNotConfigured` whose `user_message` is `reply`."""

    name = "none"
    context_window = 0

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.model = ""

    async def complete(self, request: ChatRequest, on_text: OnText | None = None) -> ModelReply:
        raise ProviderNotConfigured("no model provider is configured", user_message=self.reply)

    async def aclose(self) -> None:
        return None


def build_provider(
    llm: LLMSettings, *, retry: RetryPolicy | None = None, context_window: int | None = None
) -> Provider:
    """The configured provider, or a `NoProvider` saying what to set. `context_window` is
    the one the daemon learned from the server (`llm.context_window = "auto"`).

    Anthropic's key comes from `llm.api_key`, else the `ANTHROPIC_API_KEY` variable; an
    OpenAI-compatible endpoint needs `llm.base_url` and takes a key only if it wants one.
    """
    policy = retry or RetryPolicy(max_retries=llm.max_retries, deadline=llm.deadline)
    window = context_window or llm.known_window
    # Each SDK is imported only when chosen: together they cost ~4 s and ~90 MB at start-up.
    key = llm.api_key.get_secret_value() if llm.api_key else None
    if llm.provider == "openai":
        if not llm.base_url:
            return NoProvider(NO_OPENAI_URL)
        from agent.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(
            model=llm.model,
            base_url=llm.base_url,
            api_key=key,
            max_tokens=llm.max_tokens,
            timeout=llm.timeout,
            context_window=window,
            retry=policy,
        )
    key = key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        return NoProvider(NO_ANTHROPIC_KEY)
    from agent.providers.anthropic import AnthropicProvider

    return AnthropicProvider(
        model=llm.model,
        api_key=key,
        base_url=llm.base_url,
        max_tokens=llm.max_tokens,
        timeout=llm.timeout,
        context_window=window,
        retry=policy,
    )
