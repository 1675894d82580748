"""The tools the model may call: a name, a JSON schema, an async handler, where it applies.

Everything that comes back from the model is untrusted input, so arguments are
validated against the schema before a handler sees them, and every failure becomes a
result the model can read and act on — never an exception that ends the turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import structlog
from jsonschema import Draft202012Validator

from agent.tools.context import ToolContext

log = structlog.get_logger("kioku.tools")

Where = Literal["any", "dm", "group"]
Handler = Callable[[dict[str, Any], ToolContext], Awaitable[str]]


class ToolError(Exception):
    """A refusal written for the model: what was wrong and what to do next."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    where: Where = "any"
    sequential: bool = False
    """Calls that write the same state (notes, skills) run one after another, in order."""

    def applies_to(self, ctx: ToolContext) -> bool:
        return self.where == "any" or (self.where == "group") == ctx.is_group


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    is_error: bool = False


class ToolRegistry:
    """Holds the tools; adding one is a single `register` call."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        Draft202012Validator.check_schema(tool.input_schema)
        self._tools[tool.name] = tool
        self._validators[tool.name] = Draft202012Validator(tool.input_schema)

    def available(self, ctx: ToolContext) -> list[Tool]:
        """The tools this conversation may use, in registration order (stable for caching)."""
        return [tool for tool in self._tools.values() if tool.applies_to(ctx)]

    def is_sequential(self, name: str) -> bool:
        tool = self._tools.get(name)
        return tool is not None and tool.sequential

    async def call(self, name: str, arguments: Any, ctx: ToolContext) -> ToolOutcome:
        tool = self._tools.get(name)
        if tool is None or not tool.applies_to(ctx):
            names = ", ".join(t.name for t in self.available(ctx)) or "none"
            return ToolOutcome(f"There is no tool {name!r} here. Available tools: {names}.", True)
        if not isinstance(arguments, dict):
            return ToolOutcome(f"Arguments for {name} must be a JSON object.", True)
        problems = sorted(self._validators[name].iter_errors(arguments), key=lambda e: e.path)
        if problems:
            listed = "; ".join(_describe(problem) for problem in problems[:5])
            return ToolOutcome(
                f"Invalid arguments for {name}: {listed}. Fix them and call again.", True
            )
        try:
            return ToolOutcome(await tool.handler(arguments, ctx))
        except ToolError as refusal:
            return ToolOutcome(str(refusal), True)
        except Exception:
            log.exception("tool_failed", tool=name, session=ctx.session_id)
            return ToolOutcome(f"The {name} tool failed inside kioku; the error is logged.", True)


def _describe(error: Any) -> str:
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message
