"""`kioku mcp`: the configured MCP servers, their state and tools; try one server alone.

`list` asks the running daemon (live state, restarts, current tools); when kioku is
not running it starts each enabled server briefly instead. `test NAME` always starts
the server on its own, so it works while the daemon runs too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from gateway.cli.common import EXIT_USAGE, daemon_status, fail, run_async, settings_or_exit

if TYPE_CHECKING:
    from config.settings import McpServerSettings, Settings

app = typer.Typer(help="Tools from MCP servers: list them, test one.", no_args_is_help=True)


@app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Servers, their state and their tools (asks the daemon, or starts each server briefly)."""
    from config.logs import configure_from

    settings = settings_or_exit()
    configure_from(settings)  # a server's warnings (tools left out) go to stderr, not stdout
    status = daemon_status(settings.home)
    live = None if status is None else dict(status.get("mcp", {}))
    servers = live if live is not None else run_async(_probe_all(settings))
    if as_json:
        print(json.dumps({"running": live is not None, "servers": servers}, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    if not servers:
        console.print("No MCP servers configured: add [mcp.servers.<name>] to config.toml.")
        return
    source = "from the running daemon" if live is not None else "kioku is not running: probed"
    table = Table(title=f"MCP servers ({source})")
    for column in ("server", "transport", "state", "allow", "tools"):
        table.add_column(column)
    for name, server in servers.items():
        state = server["state"] + (f": {server['error']}" if server.get("error") else "")
        tools = ", ".join(tool["tool"] for tool in server["tools"]) or "-"
        table.add_row(
            escape(name),
            server["transport"],
            escape(state),
            escape(", ".join(server["allow"])),
            escape(tools),
        )
    console.print(table)


@app.command("test")
def test_command(name: str = typer.Argument(..., help="The server's name in config.toml.")) -> None:
    """Start one server, list its tools, stop it; exit 1 with the reason if that fails."""
    from config.logs import configure_from

    settings = settings_or_exit()
    configure_from(settings)
    server = settings.mcp.servers.get(name)
    if server is None:
        known = ", ".join(sorted(settings.mcp.servers)) or "none"
        fail(f"no MCP server {name!r} in config.toml (configured: {known})", EXIT_USAGE)
    from agent.mcp.connection import probe

    result = run_async(probe(server, name))
    if result["state"] != "ok":
        fail(f"{name}: failed: {result['error']}")
    note = "" if server.enabled else " (disabled in config.toml; tested anyway)"
    print(f"{name}: connected{note}, {len(result['tools'])} tools")
    for tool in result["tools"]:
        summary = (tool["description"] or "").strip().splitlines()
        print(f"  {tool['name']}" + (f" — {summary[0]}" if summary else ""))


async def _probe_all(settings: Settings) -> dict[str, Any]:
    names = list(settings.mcp.servers)
    import asyncio

    results = await asyncio.gather(*(_probe(settings.mcp.servers[n], n) for n in names))
    return dict(zip(names, results, strict=True))


async def _probe(server: McpServerSettings, name: str) -> dict[str, Any]:
    from agent.mcp.manager import describe_server

    described = describe_server(server)
    if not server.enabled:
        return {**described, "state": "disabled", "error": None, "restarts": 0, "tools": []}
    from agent.mcp.connection import probe

    return {**described, **await probe(server, name)}


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="mcp")
