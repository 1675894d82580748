"""A Node MCP server under kioku's systemd unit: it dies under MemoryDenyWriteExecute, and
starts under the unit `kioku service install` renders once it is configured.

systemd itself is not used: `systemd-run` needs a running systemd (PID 1, or a user
manager on a session bus), which containers and CI runners usually lack. Instead a Python
process stands in for the daemon under the unit and applies, before kioku's real MCP
client (`agent.mcp.connection.probe`) starts the server, what the unit gives a child:
the unit's `Environment=` lines as its whole environment (KIOKU_HOME, PATH; plus
PYTHONPATH for this checkout and HOME), `NoNewPrivileges=` as prctl(PR_SET_NO_NEW_PRIVS),
and `MemoryDenyWriteExecute=` as prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN), the kernel's
own form of the same rule (Linux >= 6.3), inherited by children as systemd's filter is.
The mount sandbox (ProtectSystem=, ProtectHome=) is not reproduced here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from config.settings import McpServerSettings, McpSettings
from gateway.service.mcp_needs import DEFAULT_PATH, mcp_needs, unit_path_value
from gateway.service.units import UnitSpec, render
from tests.helpers.paths import FAKES, KIOKU, ROOT
from tests.helpers.unit_files import keys

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
NO_MDWE = 77

DAEMON = f"""
import asyncio, ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
    raise SystemExit("PR_SET_NO_NEW_PRIVS failed")
if sys.argv[1] == "yes" and libc.prctl(65, 1, 0, 0, 0) != 0:  # PR_SET_MDWE, REFUSE_EXEC_GAIN
    raise SystemExit({NO_MDWE})
from agent.mcp.connection import probe
from config.settings import McpServerSettings
settings = McpServerSettings.model_validate_json(sys.argv[2])
print(json.dumps(asyncio.run(probe(settings, "notes"))))
"""


@pytest.fixture
def node_install(tmp_path: Path) -> Path:
    """A Node installed as nvm does: a bin folder off the system PATH holding `node` and
    the server's launcher (a `#!/usr/bin/env node` script, as npx is)."""
    assert NODE is not None
    bin_dir = tmp_path / ".nvm" / "versions" / "node" / "v20" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "node").symlink_to(NODE)
    shutil.copy(FAKES / "mcp_server.js", bin_dir / "kioku-node-mcp")
    return bin_dir


def unit_for(server: McpServerSettings, search_path: str) -> str:
    """The system unit `kioku service install --system` renders with this server configured."""
    needs = mcp_needs(McpSettings(servers={"notes": server}), search_path)
    path = unit_path_value(needs.command_dirs)
    return render(UnitSpec(KIOKU, "/var/lib/kioku", 20.0, True, path, needs.folders, needs.stdio))


def unit_environment(unit: str) -> dict[str, str]:
    lines = [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("Environment=")]
    return dict(line.split("=", 1) for line in lines)


def under_unit(
    unit: str, server: McpServerSettings, tmp_path: Path, *, mdwe: str | None = None
) -> dict[str, Any]:
    """kioku's probe of `server`, run as the daemon would be under `unit` (with systemd's
    default PATH when the unit sets none)."""
    env = {
        "PATH": ":".join(DEFAULT_PATH),
        **unit_environment(unit),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "KIOKU_HOME": str(tmp_path / "home"),
    }
    mdwe = mdwe or keys(unit).get("MemoryDenyWriteExecute", "no")
    result = subprocess.run(
        [sys.executable, "-c", DAEMON, mdwe, server.model_dump_json()],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    if result.returncode == NO_MDWE:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux >= 6.3)")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_node_dies_under_memory_deny_write_execute() -> None:
    script = (
        "import ctypes, os, sys\n"
        "if ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) != 0:\n"
        f"    raise SystemExit({NO_MDWE})\n"
        "os.execv(sys.argv[1], [sys.argv[1], '-e', 'console.log(6 * 7)'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(NODE)], capture_output=True, text=True, timeout=60
    )
    if result.returncode == NO_MDWE:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux >= 6.3)")
    assert result.returncode != 0
    assert "42" not in result.stdout


def test_a_node_mcp_server_starts_under_the_unit_rendered_for_it(
    node_install: Path, tmp_path: Path
) -> None:
    server = McpServerSettings(command="kioku-node-mcp")
    unit = unit_for(server, str(node_install))
    assert "MemoryDenyWriteExecute" not in keys(unit)
    assert unit_environment(unit)["PATH"] == ":".join((str(node_install), *DEFAULT_PATH))
    report = under_unit(unit, server, tmp_path)
    assert report["state"] == "ok", report["error"]
    assert [tool["tool"] for tool in report["tools"]] == ["echo"]


def test_the_same_server_fails_under_memory_deny_write_execute(
    node_install: Path, tmp_path: Path
) -> None:
    server = McpServerSettings(command="kioku-node-mcp")
    report = under_unit(unit_for(server, str(node_install)), server, tmp_path, mdwe="yes")
    assert report["state"] == "failed", report
    assert "closed" in report["error"].lower()  # node aborted at start-up


def test_without_its_folder_on_path_the_server_is_not_found(
    node_install: Path, tmp_path: Path
) -> None:
    server = McpServerSettings(command="kioku-node-mcp")
    unit = unit_for(server, ":".join(DEFAULT_PATH))
    assert "PATH" not in unit_environment(unit)
    report = under_unit(unit, server, tmp_path)
    assert report["state"] == "failed", report
    assert "kioku-node-mcp" in report["error"]
