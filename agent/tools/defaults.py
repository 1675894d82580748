"""The tools every kioku agent has; later layers (MCP) register theirs beside them."""

from __future__ import annotations

from agent.tools import memory_tool, search_tool, skills_tools
from agent.tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    return ToolRegistry([memory_tool.TOOL, search_tool.TOOL, *skills_tools.TOOLS])
