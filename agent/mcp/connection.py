"""One MCP server, kept connected: a named task owns its session, restarting it when it dies.

The SDK's transports and sessions run anyio task groups, which must be entered and left
by the same task, so each server gets one long-lived task that connects, lists the tools,
refreshes them when the server says they changed, and reconnects with backoff after a
failure. Calls come from the conversations' tasks; each call also watches the
connection, so a server that dies mid-call, or answers with a message the SDK cannot
read, gives an error result at once, not a hang.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import structlog
from mcp import ClientSession, McpError, types
from mcp.types import CONNECTION_CLOSED

from agent.mcp.listing import accept, list_tools
from agent.mcp.results import render
from agent.mcp.session import CONNECT_TIMEOUT, Interrupted, Watch, connect, describe, race
from agent.mcp.tools import McpTool
from agent.tools.context import ToolContext
from agent.tools.registry import Handler, ToolError
from config.settings import McpServerSettings
from inputs.limits import InputRefused
from plumbing.backoff import backoff_delay

log = structlog.get_logger("kioku.mcp")

RECONNECT_BASE = 1.0
RECONNECT_CAP = 300.0
"""A server that keeps failing is retried 1 s after the first failure, doubling to 5 min."""


class CallFailed(ToolError):
    """A refusal for the model, with a short `kind` for the log (never argument values)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ServerConnection:
    """One configured server: its state, its current tools, and calls to them."""

    def __init__(self, name: str, settings: McpServerSettings) -> None:
        self.name = name
        self.settings = settings
        self.state = "starting"
        self.error: str | None = None
        self.restarts = 0
        self._failures = 0
        self.tools: dict[str, McpTool] = {}
        self._session: ClientSession | None = None
        self._closed = asyncio.Event()
        self._watch = Watch(name)
        self._wake = asyncio.Event()
        self._refresh_due = False
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mcp-{self.name}")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._set_state("stopped", None)

    async def wait_until(self, ready: Callable[[ServerConnection], bool]) -> None:
        """Return once `ready(self)` holds; it is checked after every change of state."""
        while True:
            changed = self._changed
            if ready(self):
                return
            await changed.wait()

    def available(self, ctx: ToolContext) -> list[McpTool]:
        """The server's tools as it lists them now, those `ctx` may use (a `ToolSource`)."""
        return [tool for tool in self.tools.values() if tool.applies_to(ctx)]

    def snapshot(self) -> dict[str, Any]:
        """State and tools for `kioku status` and `kioku mcp list` (JSON-ready)."""
        return {
            "state": self.state,
            "error": self.error,
            "restarts": self.restarts,
            "tools": [
                {"name": tool.name, "tool": tool.remote_name, "description": tool.description}
                for tool in self.tools.values()
            ],
        }

    async def call(
        self, name: str, remote: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> str:
        """The tool's result as text; every failure is a `ToolError` written for the model."""
        started = time.monotonic()
        failure: str | None = None
        try:
            return await self._call(name, remote, arguments)
        except CallFailed as refusal:
            failure = refusal.kind
            raise
        finally:
            log.info(
                "mcp_call",
                server=self.name,
                tool=remote,
                person=ctx.speaker,
                duration_ms=round((time.monotonic() - started) * 1000, 1),
                ok=failure is None,
                error=failure,
            )

    async def _call(self, name: str, remote: str, arguments: dict[str, Any]) -> str:
        session, closed, unreadable = self._session, self._closed, self._watch.unreadable
        if session is None or self.state != "running" or closed.is_set():
            raise CallFailed("not connected", self._down_message())
        try:
            async with asyncio.timeout(self.settings.timeout):
                result = await race(session.call_tool(remote, arguments), closed, unreadable)
        except Interrupted as stop:
            if stop.event is closed:
                raise CallFailed("connection lost", self._lost_message(name)) from None
            raise CallFailed("unreadable answer", self._unreadable_message(name)) from None
        except TimeoutError:
            raise CallFailed(
                "timeout",
                f"{name} did not answer within {self.settings.timeout:g} s and was abandoned "
                "(it may still be running on the server). Do not retry it now; tell the person.",
            ) from None
        except McpError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                raise CallFailed("connection lost", self._lost_message(name)) from None
            raise CallFailed("refused", f"{name} was refused: {describe(exc)}") from None
        except Exception as exc:
            raise CallFailed("failed", f"The call to {name} failed: {describe(exc)}") from None
        try:
            text = render(result)
        except InputRefused as refusal:
            raise CallFailed(
                "result refused", f"The result of {name} was refused: {refusal}."
            ) from None
        if result.isError:
            raise CallFailed("tool error", f"{name} reported an error: {text}")
        return text

    def _down_message(self) -> str:
        why = f" (last error: {self.error})" if self.error else ""
        return (
            f"The MCP server {self.name!r} is not connected right now{why}; kioku is "
            "reconnecting it. Its tools will work again once it is back: tell the person, "
            "or carry on without it."
        )

    def _lost_message(self, name: str) -> str:
        return (
            f"The MCP server {self.name!r} stopped during the call to {name}; kioku is "
            "restarting it. The call may or may not have taken effect: check before repeating it."
        )

    def _unreadable_message(self, name: str) -> str:
        return (
            f"The MCP server {self.name!r} answered the call to {name} with a message kioku "
            f"could not read ({self._watch.error}). The call may or may not have taken "
            "effect: check before repeating it, or tell the person."
        )

    def _set_state(self, state: str, error: str | None) -> None:
        self.state, self.error = state, error
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def _run(self) -> None:
        while True:
            try:
                await self._serve()
                reason = "the server closed the connection"
            except Exception as exc:
                reason = describe(exc)
            self._session = None
            self.restarts += 1
            delay = backoff_delay(self._failures, RECONNECT_BASE, RECONNECT_CAP)
            self._failures += 1
            self._set_state("restarting", reason)
            log.warning("mcp_server_down", server=self.name, error=reason, retry_in=round(delay, 1))
            await asyncio.sleep(delay)

    async def _serve(self) -> None:
        async with connect(self.settings, self._watch, self._on_message) as (session, closed):
            self._closed = closed
            self._refresh(await self._list(session))
            self._session = session
            self._failures = 0
            self._set_state("running", None)
            log.info("mcp_server_ready", server=self.name, tools=len(self.tools))
            while not closed.is_set():
                await self._wait_for_wake(closed)
                if self._refresh_due and not closed.is_set():
                    self._refresh_due = False
                    self._refresh(await self._list(session))
                    self._set_state("running", None)
                    log.info("mcp_tools_changed", server=self.name, tools=len(self.tools))

    async def _wait_for_wake(self, closed: asyncio.Event) -> None:
        waits = [asyncio.ensure_future(self._wake.wait()), asyncio.ensure_future(closed.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
        self._wake.clear()

    async def _on_message(self, message: Any) -> None:
        """Runs in the session's receive loop, so it only flags work for the server's task."""
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ToolListChangedNotification
        ):
            self._refresh_due = True
            self._wake.set()

    async def _list(self, session: ClientSession) -> list[types.Tool]:
        return await self._watch.answer(list_tools(session), "its tool list")

    def _refresh(self, listed: list[types.Tool]) -> None:
        """Replace the tool set at once; a tool `listing.accept` refuses is left out, logged."""
        self.tools = {
            tool.name: McpTool(
                name=tool.name,
                description=tool.description,
                input_schema=tool.schema,
                handler=self._handler(tool.name, tool.remote),
                remote_name=tool.remote,
                allow=frozenset(self.settings.allow),
            )
            for tool in accept(self.name, listed)
        }

    def _handler(self, name: str, remote: str) -> Handler:
        async def handle(arguments: dict[str, Any], ctx: ToolContext) -> str:
            return await self.call(name, remote, arguments, ctx)

        return handle


async def probe(settings: McpServerSettings, name: str) -> dict[str, Any]:
    """Start the server, list its tools, stop it: for `kioku mcp test` and `list`."""
    watch = Watch(name)
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT), connect(settings, watch) as (session, _):
            listed = await watch.answer(list_tools(session), "its tool list")
    except Exception as exc:
        return {"state": "failed", "error": describe(exc), "restarts": 0, "tools": []}
    tools = [
        {"name": tool.name, "tool": tool.remote, "description": tool.description}
        for tool in accept(name, listed)
    ]
    return {"state": "ok", "error": None, "restarts": 0, "tools": tools}
