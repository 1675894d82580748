"""The tools providers offer the model, named `<provider>__<tool>` as MCP tools are.

A provider's tools are offered only in conversations whose scope it admits, and each
call runs in that conversation's scope, never one the model names: whatever the
arguments say, bob's call searches bob's memory. Results are screened like recall.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.mcp.names import tool_name
from agent.memory_providers.base import MemoryProvider, ProviderError, Scope
from agent.memory_providers.scopes import admits
from agent.memory_providers.screening import screened
from agent.tools.context import ToolContext
from agent.tools.registry import Tool, ToolError
from config.provider_settings import ProviderSettings

if TYPE_CHECKING:
    from agent.memory_providers.manager import MemoryProviders


def conversation_scope(ctx: ToolContext) -> Scope | None:
    """The scope of the conversation a tool runs in; None in a DM without a known person."""
    if ctx.is_group:
        return Scope("group", f"{ctx.platform}:{ctx.chat}")
    return None if ctx.speaker is None else Scope("person", ctx.speaker)


@dataclass(frozen=True)
class ProviderToolCall:
    """Runs one provider tool for the conversation's scope, within the provider's timeout."""

    name: str
    provider_name: str
    provider: MemoryProvider
    settings: ProviderSettings
    budget: int

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        scope = conversation_scope(ctx)
        if scope is None or not admits(self.settings, scope):
            raise ToolError(f"{self.provider_name} does not hold this conversation's memory.")
        try:
            async with asyncio.timeout(self.settings.timeout):
                result = await self.provider.call(self.name, arguments, scope)
        except TimeoutError as exc:
            raise ToolError(f"{self.provider_name} did not answer in time; try later.") from exc
        except ProviderError as exc:
            raise ToolError(f"{self.provider_name}: {exc}") from exc
        text = screened(self.provider_name, [result], self.budget)
        return text or f"{self.provider_name} found nothing usable."


class ProviderTools:
    """The `ToolSource` of every running provider's tools, in configuration order."""

    def __init__(self, providers: MemoryProviders) -> None:
        self.providers = providers

    def available(self, ctx: ToolContext) -> list[Tool]:
        scope = conversation_scope(ctx)
        if scope is None:
            return []
        tools: list[Tool] = []
        for entry in self.providers.admitting(scope):
            assert entry.provider is not None
            for offered in entry.provider.tools():
                call = ProviderToolCall(
                    offered.name,
                    entry.name,
                    entry.provider,
                    entry.settings,
                    self.providers.settings.recall_chars,
                )
                tools.append(
                    Tool(
                        name=tool_name(entry.name, offered.name),
                        description=f"({entry.name}) {offered.description}",
                        input_schema=offered.input_schema,
                        handler=call,
                    )
                )
        return tools
