"""The manager without servers to run: no SDK loaded, disabled servers shown as such."""

from __future__ import annotations

import subprocess
import sys

from agent.mcp.manager import McpManager
from config.settings import McpServerSettings, McpSettings


def test_the_daemon_modules_do_not_load_the_sdk() -> None:
    code = "import sys, gateway.daemon, agent.build; print('mcp' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "False"


async def test_disabled_servers_are_not_started_and_show_as_disabled() -> None:
    server = McpServerSettings(url="http://127.0.0.1:9/mcp", enabled=False, allow=["*"])
    manager = McpManager(McpSettings(servers={"off": server}))
    await manager.start()
    assert manager.connections == {}
    state = manager.states()["off"]
    assert (state["state"], state["transport"], state["allow"], state["tools"]) == (
        "disabled",
        "http",
        ["*"],
        [],
    )
    await manager.aclose()
