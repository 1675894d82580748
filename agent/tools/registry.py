"""The tools the model may call: a name, a JSON schema, an async handler, where it applies.

kioku's own tools are registered here; tools from elsewhere (each MCP server's) come from
a `ToolSource` the registry asks whenever it lists or calls tools. Everything that comes
back from the model is untrusted input, so arguments are validated against the schema
before a handler sees them, and every failure becomes a result the model can read and
act on — never an exception that ends the turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, Protocol

import structlog
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.exceptions import Unresolvable

from agent.tools.context import ToolContext
from agent.untrusted import SHORT, shorten

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

    @cached_property
    def validator(self) -> Draft202012Validator:
        """Checks the model's arguments; built once per tool, on its first call. Its `$ref`s
        resolve only within the schema: a server's schema never makes kioku fetch a URL."""
        return Draft202012Validator(self.input_schema, registry=Registry())


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    is_error: bool = False


class ToolSource(Protocol):
    """Tools kioku does not define itself, such as an MCP server's.

    Asked on every listing and every call, so it answers with the tools it has now; each
    has a valid JSON Schema, a name unique across the registry, and its `applies_to`.
    """

    def available(self, ctx: ToolContext) -> list[Tool]:
        """The tools this conversation may use now, in a stable order."""
        ...


class ToolRegistry:
    """kioku's own tools, then each source's in the order given, as one set of tools.

    Adding one of kioku's tools is a single `register` call; the order of `available` is
    stable, so the tool list stays a cacheable prefix of every model call.
    """

    def __init__(self, tools: Iterable[Tool] = (), sources: Sequence[ToolSource] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources = tuple(sources)
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        Draft202012Validator.check_schema(tool.input_schema)
        self._tools[tool.name] = tool

    def available(self, ctx: ToolContext) -> list[Tool]:
        """The tools this conversation may use: kioku's in registration order, then each
        source's."""
        tools = [tool for tool in self._tools.values() if tool.applies_to(ctx)]
        for source in self._sources:
            tools += source.available(ctx)
        return tools

    def is_sequential(self, name: str, ctx: ToolContext) -> bool:
        tool = self._find(name, ctx)
        return tool is not None and tool.sequential

    async def call(
        self, name: str, arguments: Any, ctx: ToolContext, *, refusal: str | None = None
    ) -> ToolOutcome:
        """Run the tool `name` with the model's `arguments`; `refusal` is the provider's
        reason the arguments could not be used (`ToolCall.refusal`), returned instead."""
        tool = self._find(name, ctx)
        if tool is None:
            names = ", ".join(t.name for t in self.available(ctx)) or "none"
            return ToolOutcome(f"There is no tool {name!r} here. Available tools: {names}.", True)
        if refusal is not None:
            return ToolOutcome(refusal, True)
        if not isinstance(arguments, dict):
            return ToolOutcome(f"Arguments for {name} must be a JSON object.", True)
        try:
            problems = sorted(tool.validator.iter_errors(arguments), key=lambda e: e.path)
        except (RecursionError, Unresolvable) as exc:
            # The arguments nest at most MAX_JSON_DEPTH levels (the provider saw to it), so
            # this is the schema's fault: a `$ref` loop, or one pointing outside itself.
            why = (
                "its $refs loop without end"
                if isinstance(exc, RecursionError)
                else f"a $ref points outside it, to {shorten(str(exc.ref), 120)}"
            )
            log.warning("tool_schema_unusable", tool=name, error=why)
            return ToolOutcome(
                f"The schema of {name} cannot check arguments ({why}), so it cannot be "
                "called. Carry on without it, or tell the person.",
                True,
            )
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

    def _find(self, name: str, ctx: ToolContext) -> Tool | None:
        """The tool `name` as this conversation may use it now; a source's tool is looked
        up at call time, so one its server has since dropped is refused."""
        own = self._tools.get(name)
        if own is not None:
            return own if own.applies_to(ctx) else None
        for source in self._sources:
            for tool in source.available(ctx):
                if tool.name == name:
                    return tool
        return None


def _describe(error: Any) -> str:
    """One problem, short: jsonschema's message repeats the value, which may be huge, so a
    long one names the rule broken instead ("to: the maxLength is 32")."""
    where = "/".join(str(part) for part in error.absolute_path)
    message = error.message
    if len(message) > SHORT:
        message = f"the {error.validator} is {shorten(repr(error.validator_value), 60)}"
    return shorten(f"{where}: {message}" if where else message)
