"""Door: what MCP servers send, through the real `mcp` SDK client over stdio.

`tests/fakes/hostile_mcp_server.py` speaks JSON-RPC by hand so it can send anything: a
tool list of hostile tools (deep, invalid and huge schemas, a 10 MB description, names
that clash once made safe, thousands of tools), a tool list the SDK cannot read, pages
without end, and hostile results (deep structured content, 10 MB text, invalid content
types, every corpus item as the answer line, as text and as structured content). A
refused tool is left out with a log line naming the server and the tool while the rest
work; a refused result is a tool error the model reads; the next call is answered.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from structlog.testing import capture_logs

from agent.agent import Agent
from agent.build import build_agent
from agent.mcp.connection import ServerConnection
from agent.mcp.listing import MAX_DESCRIPTION, MAX_PAGES, MAX_TOOLS
from agent.mcp.manager import McpManager
from agent.mcp.results import MAX_RESULT_CHARS
from agent.prompt import TurnContext
from agent.turn import Turn
from agent.untrusted import shorten
from config.paths import ensure_home
from config.settings import McpServerSettings, McpSettings
from inputs.limits import MAX_JSON_DEPTH
from memory.access.identities import ensure_person
from memory.store.database import Store
from memory.store.records import Conversation
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.hostile_mcp_server import FILLERS, REFUSED, SHAPES
from tests.helpers.doors import anthropic_provider, module_settings, no_unhandled, rendered
from tests.helpers.hostile import ITEMS, unhandled
from tests.helpers.paths import FAKES

pytestmark = pytest.mark.asyncio(loop_scope="module")

HOSTILE = FAKES / "hostile_mcp_server.py"
CAPPED = MAX_RESULT_CHARS + 200
"""A result the model reads is at most this long (the cap plus its note)."""


def server(*args: str) -> McpServerSettings:
    return McpServerSettings(
        command=sys.executable, args=[str(HOSTILE), *args], allow=["aiko"], timeout=10
    )


@dataclass
class Door:
    manager: McpManager
    agent: Agent
    api: FakeAnthropic
    store: Store
    startup: list[dict[str, Any]]
    """What was logged while the servers started and listed their tools."""

    def connection(self, name: str) -> ServerConnection:
        return self.manager.connections[name]

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The model calls `tool`: the result it reads back, and whether it is an error."""
        await ensure_person(self.store, "aiko")
        session = await self.store.open_session(Conversation("telegram", "1", "dm", "aiko"))
        self.api.reply_tool_use(tool, arguments)
        self.api.reply_text("done")
        context = TurnContext(when=datetime.now(UTC), platform="telegram", speaker_name="Aiko")
        turn = Turn(session=session, speaker="aiko", text=f"please use {tool}", context=context)
        outcome = await self.agent.respond(turn)
        assert outcome.text == "done", outcome
        block = self.api.last.json["messages"][-1]["content"][0]
        content = block["content"]
        text = content if isinstance(content, str) else "".join(b["text"] for b in content)
        return text, bool(block.get("is_error"))

    async def still_answers(self) -> None:
        assert await self.call("hostile__echo", {"text": "still here"}) == ("still here", False)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def door(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Door]:
    """One manager with the three hostile servers, one fake model and agent, per module."""
    home = tmp_path_factory.mktemp("doors-mcp") / "kioku-home"
    settings = module_settings(home)
    servers = {
        "hostile": server(),
        "unreadable": server("--unreadable-list"),
        "endless": server("--endless-pages"),
    }
    manager = McpManager(McpSettings(servers=servers))
    with capture_logs() as startup:
        await manager.start(wait=20)
    store = await Store.open(home / "state.db")
    async with FakeAnthropic() as api:
        provider = anthropic_provider(api, settings)
        agent = build_agent(settings, store, provider, mcp=manager)
        try:
            yield Door(manager, agent, api, store, startup)
        finally:
            await agent.aclose()
            await store.close()
            await manager.aclose()


# -- tool lists ----------------------------------------------------------------------------


async def test_starting_hostile_servers_logs_no_unhandled_exception(door: Door) -> None:
    assert unhandled(rendered(door.startup)) == []
    assert door.connection("hostile").state == "running"


async def test_each_refused_tool_is_left_out_with_a_line_naming_server_and_tool(
    door: Door,
) -> None:
    left_out = {
        e["tool"]: e["error"]
        for e in door.startup
        if e["event"] == "mcp_tool_skipped" and e["server"] == "hostile"
    }
    refused = {name for name in REFUSED if name != "clash.me"}
    assert {shorten(name, 80) for name in refused} <= set(left_out)
    assert "nests deeper than 32 levels" in left_out["deep_schema"]
    assert "not valid JSON Schema" in left_out["invalid_schema"]
    assert "bytes of JSON; at most 65,536" in left_out["huge_schema"]
    assert "characters; at most 128" in left_out[shorten("n" * 200, 80)]
    assert "hostile__clash_me, is another tool's too" in left_out["clash me"]
    tools = door.connection("hostile").tools
    assert not {name for name in tools if "deep" in name or "schema" in name or "nnnn" in name}
    assert "hostile__clash_me" in tools


async def test_a_huge_description_is_cut_with_a_note(door: Door) -> None:
    description = door.connection("hostile").tools["hostile__huge_description"].description
    assert len(description) < MAX_DESCRIPTION + 100
    assert "cut by kioku" in description


async def test_thousands_of_tools_are_cut_at_the_per_server_limit(door: Door) -> None:
    tools = door.connection("hostile").tools
    assert len(tools) == MAX_TOOLS
    assert {"hostile__echo", "hostile__result", "hostile__corpus"} <= set(tools)
    fillers = len([name for name in tools if name.startswith("hostile__filler_")])
    over = [e for e in door.startup if e["event"] == "mcp_tools_over_limit"]
    assert [(e["server"], e["left_out"]) for e in over] == [("hostile", FILLERS - fillers)]
    left_out = {e["tool"] for e in door.startup if e["event"] == "mcp_tool_skipped"}
    assert f"filler_{fillers}" in left_out


@pytest.mark.parametrize(("tool", "arguments"), [("ref_loop", {}), ("remote_ref", {"a": 1})])
async def test_a_schema_that_cannot_check_arguments_is_a_tool_error(
    door: Door, tool: str, arguments: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Valid JSON Schema, unusable: a `$ref` loop (RecursionError in jsonschema) or a
    `$ref` to a URL, which kioku never fetches."""
    with no_unhandled(caplog):
        text, is_error = await door.call(f"hostile__{tool}", arguments)
    assert is_error
    assert text.startswith(f"The schema of hostile__{tool} cannot check arguments")
    await door.still_answers()


async def test_a_tool_list_the_sdk_cannot_read_fails_that_server_alone(door: Door) -> None:
    unreadable = door.connection("unreadable")
    assert unreadable.state == "restarting"
    assert unreadable.error is not None
    assert unreadable.error.startswith("Unreadable: its tool list could not be read")
    assert unreadable.tools == {}
    assert door.connection("hostile").state == "running"
    await door.still_answers()


async def test_a_server_paging_without_end_is_read_for_a_bounded_number_of_pages(
    door: Door,
) -> None:
    tools = door.connection("endless").tools
    assert sorted(tools) == sorted(f"endless__page_{page}" for page in range(MAX_PAGES))


# -- results -------------------------------------------------------------------------------

RESULTS = {
    "unreadable-deep": (True, "with a message kioku could not read"),
    "lone-surrogate": (True, "with a message kioku could not read"),
    "nan-structured": (False, '{"n": NaN}'),
    "deep-structured": (True, f"nests deeper than {MAX_JSON_DEPTH} levels"),
    "ten-mb-text": (False, "result cut by kioku: showing 16,384 of 10,485,760"),
    "ten-mb-error": (True, "result cut by kioku"),
    "many-blocks": (False, "result cut by kioku"),
    "invalid-content-type": (True, "The call to hostile__result failed"),
    "content-not-a-list": (True, "The call to hostile__result failed"),
    "null-content": (True, "The call to hostile__result failed"),
}


async def test_every_shape_of_the_fake_is_expected() -> None:
    assert set(RESULTS) == set(SHAPES)


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_hostile_result_is_an_error_or_capped_text_for_the_model(
    door: Door, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    with no_unhandled(caplog):
        text, is_error = await door.call("hostile__result", {"shape": shape})
    expected_error, expected_text = RESULTS[shape]
    assert (is_error, expected_text in text) == (expected_error, True), text[:300]
    assert len(text) <= CAPPED
    await door.still_answers()


@pytest.mark.parametrize("item", list(ITEMS))
async def test_a_corpus_item_as_the_answer_line_fails_the_call_at_once(
    door: Door, item: str, caplog: pytest.LogCaptureFixture
) -> None:
    with no_unhandled(caplog):
        text, is_error = await door.call("hostile__corpus", {"item": item, "as": "line"})
    assert is_error
    assert "answered the call to hostile__corpus with a message kioku could not read" in text
    assert len(text) <= CAPPED
    await door.still_answers()


@pytest.mark.parametrize("given_as", ["text", "structured"])
@pytest.mark.parametrize("item", list(ITEMS))
async def test_a_corpus_item_inside_a_result_is_passed_on_capped_or_refused(
    door: Door, item: str, given_as: str, caplog: pytest.LogCaptureFixture
) -> None:
    with no_unhandled(caplog):
        text, is_error = await door.call("hostile__corpus", {"item": item, "as": given_as})
    assert len(text) <= CAPPED
    if given_as == "text":
        assert not is_error
    await door.still_answers()


# -- the CLI probes a server the same way ---------------------------------------------------


def configure(home: Path) -> None:
    ensure_home(home)
    lines = []
    for name, args in (("hostile", []), ("unreadable", ["--unreadable-list"])):
        lines += [
            f"[mcp.servers.{name}]",
            f"command = {json.dumps(sys.executable)}",
            f"args = {json.dumps([str(HOSTILE), *args])}",
        ]
    (home / "config.toml").write_text("\n".join(lines) + "\n")


async def test_kioku_mcp_test_lists_only_the_tools_kioku_accepts(
    home: Path, kioku: Callable[..., Any]
) -> None:
    configure(home)
    result = await asyncio.to_thread(kioku, "mcp", "test", "hostile")
    assert result.returncode == 0, result.stderr
    assert f"hostile: connected, {MAX_TOOLS} tools" in result.stdout
    assert "deep_schema" not in result.stdout
    assert "mcp_tool_skipped" in result.stderr
    assert len(result.stdout) < 200 * MAX_TOOLS + 10 * MAX_DESCRIPTION
    assert unhandled(result.stderr) == []


async def test_kioku_mcp_test_of_an_unreadable_list_exits_1_with_the_reason(
    home: Path, kioku: Callable[..., Any]
) -> None:
    configure(home)
    result = await asyncio.to_thread(kioku, "mcp", "test", "unreadable")
    assert result.returncode == 1
    assert "its tool list could not be read" in result.stderr
    assert unhandled(result.stderr) == []
