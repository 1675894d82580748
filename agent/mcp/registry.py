"""kioku's own tools plus those the MCP servers list now, as one registry for the agent.

A session's tool list is taken from `available` once, when it opens; calls are looked up
at call time, so a tool a server has since dropped is refused with the usual message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.tools.context import ToolContext
from agent.tools.registry import Tool, ToolOutcome, ToolRegistry

if TYPE_CHECKING:
    from agent.mcp.manager import McpManager


class McpRegistry(ToolRegistry):
    def __init__(self, base: ToolRegistry, manager: McpManager) -> None:
        super().__init__()
        self._base = base
        self._manager = manager

    def register(self, tool: Tool) -> None:
        self._base.register(tool)

    def available(self, ctx: ToolContext) -> list[Tool]:
        """kioku's tools, then each server's in configuration order (stable for caching)."""
        tools = self._base.available(ctx)
        for connection in self._manager.connections.values():
            tools += connection.registry.available(ctx)
        return tools

    def is_sequential(self, name: str) -> bool:
        return self._base.is_sequential(name)

    async def call(self, name: str, arguments: Any, ctx: ToolContext) -> ToolOutcome:
        for connection in self._manager.connections.values():
            tool = connection.tools.get(name)
            if tool is not None and tool.applies_to(ctx):
                return await connection.registry.call(name, arguments, ctx)
        if any(tool.name == name for tool in self._base.available(ctx)):
            return await self._base.call(name, arguments, ctx)
        names = ", ".join(tool.name for tool in self.available(ctx)) or "none"
        return ToolOutcome(f"There is no tool {name!r} here. Available tools: {names}.", True)
