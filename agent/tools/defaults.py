"""The tools every kioku agent has; tools from elsewhere (MCP servers) come as sources."""

from __future__ import annotations

from collections.abc import Sequence

from agent.tools import (
    history_tool,
    memory_tool,
    schedule_tool,
    search_tool,
    skills_tools,
    timezone_tool,
)
from agent.tools.registry import ToolRegistry, ToolSource


def default_registry(sources: Sequence[ToolSource] = ()) -> ToolRegistry:
    """kioku's own tools, then each source's tools in the order given."""
    return ToolRegistry(
        [
            memory_tool.TOOL,
            search_tool.TOOL,
            *skills_tools.TOOLS,
            history_tool.TOOL,
            schedule_tool.TOOL,
            timezone_tool.TOOL,
        ],
        sources,
    )
