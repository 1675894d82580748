"""What an MCP server lists, checked before its tools are offered to the model.

The owner chose the server, but its tool list is still input from outside: every tool's
description and schema go into every model call, and the schema is run by jsonschema on
every call of the tool. So the list is bounded on purpose, tool by tool: a refused tool
is left out with one log line naming the server and the tool, and the server's other
tools still work. (A listing the SDK cannot read at all fails as a whole; see
`connection`.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from jsonschema import Draft202012Validator, SchemaError
from mcp import ClientSession, types

from agent.mcp.names import tool_name
from agent.mcp.results import cap
from agent.untrusted import nesting, shorten

log = structlog.get_logger("kioku.mcp")

MAX_TOOLS = 100
"""Tools offered per server: more than a model chooses among well (OpenAI refuses a
request with more than 128 tools)."""
MAX_PAGES = 20
"""Pages of one listing read, so a server that pages without end cannot hold kioku."""
MAX_NAME = 128
"""Characters of a tool's own name (the MCP specification asks for 1 to 128)."""
MAX_SCHEMA_DEPTH = 32
"""Nesting of a tool's input schema as JSON; real schemas nest under ten levels, and a
deep one could exhaust jsonschema's recursion on every call."""
MAX_SCHEMA_BYTES = 65_536
"""A tool's input schema as JSON: it is sent with every model call."""
MAX_DESCRIPTION = 2_000
"""Characters of a tool's description kept; a longer one is cut, with a note."""


@dataclass(frozen=True)
class Listed:
    """A tool kioku offers: `name` as the model sees it, `remote` as its server calls it."""

    name: str
    remote: str
    description: str
    schema: dict[str, Any]


async def list_tools(session: ClientSession) -> list[types.Tool]:
    """The tools the server lists, across pages; reading stops past `MAX_TOOLS` tools or
    after `MAX_PAGES` pages (`accept` reports what is left out)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.nextCursor
        if not cursor or len(tools) > MAX_TOOLS:
            break
    return tools


def accept(server: str, listed: Sequence[types.Tool]) -> list[Listed]:
    """The tools of `server` kioku offers, in the server's order; each refused one is
    logged (`mcp_tool_skipped`) and left out."""
    accepted: dict[str, Listed] = {}
    for position, remote in enumerate(listed):
        if len(accepted) == MAX_TOOLS:
            more = len(listed) - position
            _skip(server, remote.name, f"over the limit of {MAX_TOOLS} tools per server")
            if more > 1:
                log.warning("mcp_tools_over_limit", server=server, left_out=more)
            break
        schema = {"type": "object", **remote.inputSchema}
        problem = _problem(remote.name, schema)
        name = tool_name(server, remote.name) if problem is None else ""
        if problem is None and name in accepted:
            problem = f"its name for the model, {name}, is another tool's too"
        if problem is not None:
            _skip(server, remote.name, problem)
            continue
        description = remote.description or remote.title or remote.name
        accepted[name] = Listed(name, remote.name, cap(description, MAX_DESCRIPTION), schema)
    return list(accepted.values())


def _problem(remote: str, schema: dict[str, Any]) -> str | None:
    """Why the tool cannot be offered, or None."""
    if len(remote) > MAX_NAME:
        return f"its name is {len(remote):,} characters; at most {MAX_NAME} are allowed"
    if nesting(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
        return f"its input schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
    try:  # the model APIs' JSON has no NaN or Infinity
        size = len(json.dumps(schema, ensure_ascii=False, allow_nan=False).encode())
    except ValueError:
        return "its input schema holds NaN or Infinity, which JSON does not allow"
    if size > MAX_SCHEMA_BYTES:
        return f"its input schema is {size:,} bytes of JSON; at most {MAX_SCHEMA_BYTES:,}"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"its input schema is not valid JSON Schema: {shorten(exc.message)}"
    return None


def _skip(server: str, remote: str, problem: str) -> None:
    log.warning("mcp_tool_skipped", server=server, tool=shorten(remote, 80), error=problem)
