"""kioku's tools and the tool sources beside them (MCP servers), as one registry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.tools.context import Services, ToolContext
from agent.tools.registry import Tool, ToolRegistry, Where
from config.load import load_settings
from config.paths import ensure_home
from memory.store.database import Store

NUMBER = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def tool(name: str, where: Where = "any", sequential: bool = False) -> Tool:
    async def handle(arguments: dict[str, Any], ctx: ToolContext) -> str:
        return f"{name} got {arguments['n']}"

    return Tool(name, f"the {name} tool", NUMBER, handle, where=where, sequential=sequential)


class Source:
    """A source whose tools can change between calls, as a server's do."""

    def __init__(self, *tools: Tool) -> None:
        self.tools = list(tools)

    def available(self, ctx: ToolContext) -> list[Tool]:
        return [t for t in self.tools if t.applies_to(ctx)]


@pytest.fixture
async def services(home: Path) -> AsyncIterator[Services]:
    ensure_home(home)
    store = await Store.open(home / "state.db")
    try:
        yield Services(store, home, load_settings())
    finally:
        await store.close()


def context(services: Services, is_group: bool = False) -> ToolContext:
    return ToolContext(services, 1, "telegram", "100", is_group, "aiko", not is_group)


def names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


async def test_own_tools_come_first_then_each_source_in_order(services: Services) -> None:
    first, second = Source(tool("b__one"), tool("b__two")), Source(tool("a__one"))
    registry = ToolRegistry([tool("zeta"), tool("alpha")], [first, second])
    assert names(registry.available(context(services))) == [
        "zeta",
        "alpha",
        "b__one",
        "b__two",
        "a__one",
    ]


async def test_a_source_tool_is_called_with_validated_arguments(services: Services) -> None:
    registry = ToolRegistry([tool("own")], [Source(tool("srv__add"))])
    ctx = context(services)
    done = await registry.call("srv__add", {"n": 2}, ctx)
    refused = await registry.call("srv__add", {"n": "two"}, ctx)
    assert (done.content, done.is_error) == ("srv__add got 2", False)
    assert refused.is_error and refused.content.startswith("Invalid arguments for srv__add: n:")


async def test_a_tool_its_source_has_since_dropped_is_refused_listing_the_others(
    services: Services,
) -> None:
    source = Source(tool("srv__add"), tool("srv__sub"))
    registry = ToolRegistry([tool("own")], [source])
    source.tools = source.tools[1:]
    outcome = await registry.call("srv__add", {"n": 1}, context(services))
    assert outcome.is_error
    assert outcome.content == ("There is no tool 'srv__add' here. Available tools: own, srv__sub.")


async def test_a_source_tool_is_offered_and_called_only_where_it_applies(
    services: Services,
) -> None:
    registry = ToolRegistry([], [Source(tool("srv__dm", where="dm"))])
    group = context(services, is_group=True)
    assert names(registry.available(group)) == []
    assert (await registry.call("srv__dm", {"n": 1}, group)).is_error
    assert not (await registry.call("srv__dm", {"n": 1}, context(services))).is_error


async def test_sequential_is_read_from_whichever_tool_answers_the_name(
    services: Services,
) -> None:
    source = Source(tool("srv__write", sequential=True), tool("srv__read"))
    registry = ToolRegistry([tool("notes", sequential=True), tool("search")], [source])
    ctx = context(services)
    answers = {name: registry.is_sequential(name, ctx) for name in names(registry.available(ctx))}
    assert answers == {"notes": True, "search": False, "srv__write": True, "srv__read": False}
    assert not registry.is_sequential("missing", ctx)
