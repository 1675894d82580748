"""All configured MCP servers: started with the daemon, closed on shutdown, shown in status.

The SDK is imported only when at least one server is enabled (it costs about half a
second and 15 MB), so a daemon without MCP servers never loads it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import structlog

from agent.mcp.names import sanitise
from agent.tools.context import ToolContext
from agent.tools.registry import Tool
from config.settings import McpServerSettings, McpSettings

if TYPE_CHECKING:
    from agent.mcp.connection import ServerConnection

log = structlog.get_logger("kioku.mcp")

STARTUP_WAIT = 10.0
"""How long start-up waits for the servers' first connection before serving without them."""


class McpManager:
    """Owns one `ServerConnection` per enabled server, and is the `ToolSource` that offers
    their tools to the agent: each server's in configuration order."""

    def __init__(self, settings: McpSettings) -> None:
        self.settings = settings
        self.connections: dict[str, ServerConnection] = {}

    async def start(self, wait: float = STARTUP_WAIT) -> None:
        """Start every enabled server; wait up to `wait` s for their first connection, so
        that the first sessions already see their tools. A slow one keeps trying after."""
        enabled = {name: server for name, server in self.settings.servers.items() if server.enabled}
        if not enabled:
            return
        from agent.mcp.connection import ServerConnection

        taken: dict[str, str] = {}
        for name, server in enabled.items():
            clash = taken.setdefault(sanitise(name), name)
            if clash != name:
                log.error(
                    "mcp_server_skipped",
                    server=name,
                    error=f"its tools' names clash with {clash!r}",
                )
                continue
            self.connections[name] = ServerConnection(name, server)
            self.connections[name].start()
        first = [
            asyncio.ensure_future(connection.wait_until(lambda c: c.state != "starting"))
            for connection in self.connections.values()
        ]
        _, pending = await asyncio.wait(first, timeout=wait)
        for waiter in pending:
            waiter.cancel()
        log.info("mcp_started", servers={n: c.state for n, c in self.connections.items()})

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.connections.values()))

    async def __aenter__(self) -> McpManager:
        """`start`; a start cut short closes what it had started."""
        try:
            await self.start()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def available(self, ctx: ToolContext) -> list[Tool]:
        """Every server's tools as they are now that `ctx` may use, server by server."""
        return [tool for c in self.connections.values() for tool in c.available(ctx)]

    def states(self) -> dict[str, dict[str, Any]]:
        """Every configured server with its state and tools (JSON-ready, no secrets)."""
        out: dict[str, dict[str, Any]] = {}
        for name, server in self.settings.servers.items():
            connection = self.connections.get(name)
            live = connection.snapshot() if connection else _idle(server)
            out[name] = {**describe_server(server), **live}
        return out


def describe_server(server: McpServerSettings) -> dict[str, Any]:
    """What the configuration says about a server, without env values or headers."""
    return {
        "transport": "stdio" if server.command is not None else "http",
        "target": server.command if server.command is not None else server.url,
        "enabled": server.enabled,
        "allow": list(server.allow),
        "timeout": server.timeout,
    }


def _idle(server: McpServerSettings) -> dict[str, Any]:
    state = "stopped" if server.enabled else "disabled"
    return {"state": state, "error": None, "restarts": 0, "tools": []}
