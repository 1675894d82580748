"""The `history_delete` tool on its own: it refuses in groups, never deletes, and holds
the list it returned as the conversation's waiting deletion."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.deletions import is_confirmation
from agent.tools import history_tool
from agent.tools.context import Services, ToolContext
from agent.tools.defaults import default_registry
from agent.tools.registry import ToolError
from config.load import load_settings
from config.paths import ensure_home
from memory.access.identities import ensure_person
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

DM = Conversation("telegram", "100", "dm", "aiko")


@pytest.fixture
async def services(home: Path) -> AsyncIterator[Services]:
    ensure_home(home)
    store = await Store.open(home / "state.db")
    try:
        await ensure_person(store, "aiko")
        yield Services(store, home, load_settings())
    finally:
        await store.close()


async def dm_context(services: Services) -> ToolContext:
    session = await services.store.open_session(DM)
    await services.store.append(session.id, NewMessage("user", "hello", "aiko"))
    await services.store.append(session.id, NewMessage("user", "my salary is 9000", "aiko"))
    return ToolContext(
        services, session.id, "telegram", "100", False, "aiko", True, session.conversation
    )


async def test_in_a_group_it_is_neither_offered_nor_run(services: Services) -> None:
    group = ToolContext(services, 1, "telegram", "-5", True, "aiko", False, "group:x")
    registry = default_registry()
    assert "history_delete" not in [t.name for t in registry.available(group)]
    outcome = await registry.call("history_delete", {"matching": "salary"}, group)
    assert outcome.is_error
    with pytest.raises(ToolError, match="cannot be deleted from a group"):
        await history_tool.handle({"matching": "salary"}, group)


async def test_it_lists_and_holds_the_plan_without_deleting(services: Services) -> None:
    ctx = await dm_context(services)
    listing = await history_tool.handle({"matching": "salary"}, ctx)
    assert listing.startswith("Not deleted yet.") and "my salary is 9000" in listing
    assert [m.content for m in await services.store.messages(ctx.session_id)] == [
        "hello",
        "my salary is 9000",
    ]
    pending = services.deletions.take(ctx.conversation)
    assert pending is not None and pending.person == "aiko" and pending.plan.turn_count == 1


async def test_without_anything_to_delete_it_asks_what(services: Services) -> None:
    ctx = await dm_context(services)
    with pytest.raises(ToolError, match="nothing selected"):
        await history_tool.handle({}, ctx)
    assert "Nothing in the person's history matches" in await history_tool.handle(
        {"matching": "pelican"}, ctx
    )
    assert services.deletions.take(ctx.conversation) is None


@pytest.mark.parametrize("text", ["yes", "Yes", " YES. ", "yes!"])
def test_a_yes_confirms(text: str) -> None:
    assert is_confirmation(text)


@pytest.mark.parametrize("text", ["yes please delete", "y", "ok", "no", "/yes", ""])
def test_anything_else_does_not(text: str) -> None:
    assert not is_confirmation(text)
