"""MCP tools through the agent: a real SDK server (stdio and streamable HTTP), the fake model."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from agent.agent import Agent
from agent.build import build_agent
from agent.mcp.connection import ServerConnection
from agent.mcp.manager import McpManager
from agent.mcp.results import IMAGE_NOTE, MAX_RESULT_CHARS
from agent.providers import RetryPolicy
from agent.providers.anthropic import AnthropicProvider
from config.load import load_settings
from config.paths import ensure_home
from config.settings import McpServerSettings, McpSettings
from memory.access.identities import ensure_person
from memory.store.database import Store
from memory.store.records import Conversation, Session
from tests.fakes.anthropic_api import FakeAnthropic
from tests.helpers.agent_rig import Rig
from tests.helpers.paths import FAKES

FAKE_SERVER = FAKES / "mcp_server.py"
FAST = RetryPolicy(max_retries=0, base_delay=0.001, max_delay=0.01, deadline=5.0)
WAIT = 15.0


def stdio_server(**overrides: Any) -> McpServerSettings:
    return McpServerSettings(command=sys.executable, args=[str(FAKE_SERVER)], **overrides)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """One streamable HTTP server for the module; its first stdout line is its URL."""
    process = subprocess.Popen(
        [sys.executable, str(FAKE_SERVER), "--http"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(10)


@dataclass
class McpRig:
    rig: Rig
    manager: McpManager

    @property
    def api(self) -> FakeAnthropic:
        assert isinstance(self.rig.api, FakeAnthropic)
        return self.rig.api

    @property
    def agent(self) -> Agent:
        return self.rig.agent

    def connection(self, name: str = "fake") -> ServerConnection:
        return self.manager.connections[name]

    async def dm(self, person: str = "aiko", chat: str = "100") -> Session:
        await ensure_person(self.rig.store, person)
        return await self.rig.store.open_session(Conversation("telegram", chat, "dm", person))

    async def ask(self, session: Session, text: str, speaker: str = "aiko") -> dict[str, Any]:
        """One turn; returns the tool_result block the model got back (if any)."""
        await self.agent.respond(self.rig.turn(session, text, speaker=speaker))
        last = self.api.requests[-1].json["messages"][-1]["content"]
        return last[0] if isinstance(last, list) else {"content": last}

    async def call(self, session: Session, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.api.reply_tool_use(tool, args)
        self.api.reply_text("done")
        return await self.ask(session, f"please use {tool}")


def offered(request_json: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in request_json.get("tools", [])]


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


@pytest.fixture
def servers(request: pytest.FixtureRequest) -> dict[str, McpServerSettings]:
    """Indirect parameter: "stdio" (default), "http", or a dict of server settings."""
    param = getattr(request, "param", "stdio")
    if isinstance(param, dict):
        return param
    if param == "http":
        return {"fake": McpServerSettings(url=request.getfixturevalue("http_url"), allow=["aiko"])}
    return {"fake": stdio_server(allow=["aiko"])}


@pytest.fixture
async def mcp(home: Path, servers: dict[str, McpServerSettings]) -> AsyncIterator[McpRig]:
    settings = load_settings()
    ensure_home(home)
    manager = McpManager(McpSettings(servers=servers))
    await manager.start(wait=WAIT)
    async with FakeAnthropic() as api:
        provider = AnthropicProvider(
            model="claude-test",
            api_key="sk-test",
            base_url=api.base_url,
            retry=FAST,
            timeout=5.0,
            context_window=settings.llm.known_window,
        )
        store = await Store.open(home / "state.db")
        agent = build_agent(settings, store, provider, mcp=manager)
        try:
            yield McpRig(Rig("anthropic", api, agent, store, settings, home), manager)
        finally:
            await agent.aclose()
            await store.close()
            await manager.aclose()


BOTH = pytest.mark.parametrize("servers", ["stdio", "http"], indirect=True)


@BOTH
async def test_tools_are_offered_with_their_schema_and_called(mcp: McpRig) -> None:
    session = await mcp.dm()
    result = await mcp.call(session, "fake__add", {"a": 2, "b": 3})
    tools = {tool["name"]: tool for tool in mcp.api.requests[0].json["tools"]}
    assert tools["fake__add"]["input_schema"]["required"] == ["a", "b"]
    assert tools["fake__add"]["description"] == "Add two integers."
    assert "memory" in tools
    assert text_of(result) == "5"
    assert not result.get("is_error")


@BOTH
async def test_arguments_are_validated_against_the_servers_schema(mcp: McpRig) -> None:
    session = await mcp.dm()
    result = await mcp.call(session, "fake__add", {"a": "two", "b": 3})
    assert result["is_error"] is True
    assert "Invalid arguments for fake__add" in text_of(result)


@BOTH
async def test_an_error_the_tool_reports_is_an_error_result(mcp: McpRig) -> None:
    session = await mcp.dm()
    result = await mcp.call(session, "fake__fail", {"message": "disk full"})
    assert result["is_error"] is True
    assert "fake__fail reported an error" in text_of(result)
    assert "disk full" in text_of(result)


async def test_a_person_not_in_allow_never_sees_the_tools(mcp: McpRig) -> None:
    session = await mcp.dm("ken")
    mcp.api.reply_tool_use("fake__echo", {"text": "hi"})
    mcp.api.reply_text("ok")
    result = await mcp.ask(session, "echo hi", speaker="ken")
    assert not [name for name in offered(mcp.api.requests[0].json) if name.startswith("fake__")]
    assert result["is_error"] is True
    assert "There is no tool 'fake__echo'" in text_of(result)


async def test_groups_see_no_person_restricted_tools(mcp: McpRig) -> None:
    await ensure_person(mcp.rig.store, "aiko")
    session = await mcp.rig.store.open_session(Conversation("discord", "-5", "group"))
    mcp.api.reply_text("hello all")
    await mcp.ask(session, "hi")
    assert "memory" in offered(mcp.api.requests[0].json)
    assert not [n for n in offered(mcp.api.requests[0].json) if n.startswith("fake__")]


@pytest.mark.parametrize("servers", [{"fake": stdio_server(allow=["*"])}], indirect=True)
async def test_allow_everyone_offers_the_tools_in_groups_and_to_anyone(mcp: McpRig) -> None:
    await ensure_person(mcp.rig.store, "aiko")
    group = await mcp.rig.store.open_session(Conversation("discord", "-5", "group"))
    result = await mcp.call(group, "fake__echo", {"text": "for all"})
    assert text_of(result) == "for all"
    await mcp.call(await mcp.dm("ken"), "fake__echo", {"text": "x"})
    assert "fake__echo" in offered(mcp.api.requests[-1].json)


async def test_a_crashed_server_gives_error_results_until_it_is_restarted(mcp: McpRig) -> None:
    session = await mcp.dm()
    result = await mcp.call(session, "fake__crash", {})
    assert result["is_error"] is True
    assert "stopped during the call to fake__crash" in text_of(result)
    connection = mcp.connection()
    async with asyncio.timeout(WAIT):
        await connection.wait_until(lambda c: c.state == "restarting")
    meanwhile = await mcp.call(session, "fake__echo", {"text": "anyone?"})
    assert meanwhile["is_error"] is True
    assert "'fake' is not connected right now" in text_of(meanwhile)
    async with asyncio.timeout(WAIT):
        await connection.wait_until(lambda c: c.state == "running")
    assert connection.restarts == 1
    again = await mcp.call(session, "fake__echo", {"text": "back"})
    assert text_of(again) == "back"


@pytest.mark.parametrize(
    "servers", [{"fake": stdio_server(allow=["aiko"], timeout=0.5)}], indirect=True
)
async def test_a_hanging_tool_times_out_and_the_server_stays_usable(mcp: McpRig) -> None:
    session = await mcp.dm()
    result = await mcp.call(session, "fake__slow", {"seconds": 60})
    assert result["is_error"] is True
    assert "did not answer within 0.5 s" in text_of(result)
    assert text_of(await mcp.call(session, "fake__echo", {"text": "still here"})) == "still here"


@BOTH
async def test_oversized_results_are_capped_with_a_note(mcp: McpRig) -> None:
    session = await mcp.dm()
    text = text_of(await mcp.call(session, "fake__big", {"size": 100_000}))
    assert text.startswith("x" * MAX_RESULT_CHARS)
    assert len(text) < MAX_RESULT_CHARS + 200
    assert "result cut by kioku: showing 16,384 of 100,000 characters" in text


async def test_images_are_replaced_by_a_note(mcp: McpRig) -> None:
    session = await mcp.dm()
    assert text_of(await mcp.call(session, "fake__image", {})) == f"a red dot\n{IMAGE_NOTE}"


@pytest.mark.parametrize(
    "servers", [{"fake": stdio_server(allow=["aiko"], env={"KIOKU_FAKE": "tea"})}], indirect=True
)
async def test_the_configured_environment_reaches_the_server(mcp: McpRig) -> None:
    session = await mcp.dm()
    assert text_of(await mcp.call(session, "fake__env", {"name": "KIOKU_FAKE"})) == "tea"


async def test_a_changed_tool_list_reaches_new_sessions_not_open_ones(mcp: McpRig) -> None:
    first = await mcp.dm()
    await mcp.call(first, "fake__grow", {})
    async with asyncio.timeout(WAIT):
        await mcp.connection().wait_until(lambda c: "fake__extra" in c.tools)
    mcp.api.reply_text("ok")
    await mcp.ask(first, "again")
    assert "fake__extra" not in offered(mcp.api.requests[-1].json)
    second = await mcp.dm(chat="other")
    assert text_of(await mcp.call(second, "fake__extra", {})) == "extra here"
    assert "fake__extra" in offered(mcp.api.requests[-1].json)


async def test_every_call_is_logged_without_its_arguments(mcp: McpRig) -> None:
    session = await mcp.dm()
    with capture_logs() as logs:
        await mcp.call(session, "fake__echo", {"text": "secret plans"})
        await mcp.call(session, "fake__fail", {"message": "boom"})
    calls = [entry for entry in logs if entry["event"] == "mcp_call"]
    assert [(c["server"], c["tool"], c["person"], c["ok"]) for c in calls] == [
        ("fake", "echo", "aiko", True),
        ("fake", "fail", "aiko", False),
    ]
    assert calls[1]["error"] == "tool error"
    assert all(isinstance(c["duration_ms"], float) for c in calls)
    assert "secret plans" not in repr(logs)


async def test_the_status_shows_each_servers_state_and_tools(mcp: McpRig) -> None:
    state = mcp.manager.states()["fake"]
    assert (state["state"], state["transport"], state["restarts"]) == ("running", "stdio", 0)
    assert "fake__add" in [tool["name"] for tool in state["tools"]]
