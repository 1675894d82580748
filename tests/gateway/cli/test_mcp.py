"""`kioku mcp test` and `kioku mcp list`, run as the real console script."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from config.paths import ensure_home
from tests.helpers.paths import FAKES

FAKE_SERVER = FAKES / "mcp_server.py"


def configure(home: Path) -> None:
    ensure_home(home)
    (home / "config.toml").write_text(
        f"""
[mcp.servers.fake]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(FAKE_SERVER))}]
allow = ["owner", "aiko"]

[mcp.servers.broken]
command = "/nonexistent/mcp-server"

[mcp.servers.off]
url = "http://127.0.0.1:9/mcp"
enabled = false
"""
    )


def test_mcp_test_starts_the_server_and_lists_its_tools(home: Path, kioku) -> None:
    configure(home)
    result = kioku("mcp", "test", "fake")
    assert result.returncode == 0, result.stderr
    assert "fake: connected, 9 tools" in result.stdout
    assert "fake__add — Add two integers." in result.stdout


def test_mcp_test_of_a_server_that_cannot_start_exits_1_with_the_reason(home: Path, kioku) -> None:
    configure(home)
    result = kioku("mcp", "test", "broken")
    assert result.returncode == 1
    assert "broken: failed" in result.stderr
    assert "/nonexistent/mcp-server" in result.stderr


def test_mcp_test_of_an_unknown_server_names_the_configured_ones(home: Path, kioku) -> None:
    configure(home)
    result = kioku("mcp", "test", "nope")
    assert result.returncode == 2
    assert "no MCP server 'nope'" in result.stderr
    assert "broken, fake, off" in result.stderr


def test_mcp_list_json_probes_each_server_when_kioku_is_not_running(home: Path, kioku) -> None:
    configure(home)
    result = kioku("mcp", "list", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["running"] is False
    fake, broken, off = (report["servers"][name] for name in ("fake", "broken", "off"))
    assert fake["state"] == "ok"
    assert fake["allow"] == ["owner", "aiko"]
    assert {"name": "fake__echo", "tool": "echo"}.items() <= fake["tools"][0].items()
    assert broken["state"] == "failed"
    assert "/nonexistent/mcp-server" in broken["error"]
    assert off == {**off, "state": "disabled", "transport": "http", "tools": []}
