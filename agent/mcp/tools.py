"""An MCP server's tool as a kioku `Tool`: offered only where its server's `allow` says."""

from __future__ import annotations

from dataclasses import dataclass

from agent.tools.context import ToolContext
from agent.tools.registry import Tool

EVERYONE = "*"
"""In `allow`, everyone — and the only way a server's tools reach group conversations."""


@dataclass(frozen=True)
class McpTool(Tool):
    """`remote_name` is the tool's own name on its server; `name` is what the model sees.

    A group's tool list is frozen for everyone who writes there and its results are read
    by all, so person-restricted tools stay out of groups; `allow = ["*"]` lets them in.
    """

    remote_name: str = ""
    allow: frozenset[str] = frozenset()

    def applies_to(self, ctx: ToolContext) -> bool:
        if EVERYONE in self.allow:
            return True
        return not ctx.is_group and ctx.speaker is not None and ctx.speaker in self.allow
