"""The systemd units: rendered for this install, accepted by systemd, written where it looks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from config.load import load_settings
from config.settings import Settings
from gateway.service.units import (
    DEPLOYED,
    DOCUMENTED_EXECUTABLE,
    SYSTEM_UNIT_PATH,
    UnitSpec,
    render,
    this_install,
    unit_path,
    write_unit,
)
from tests.helpers.paths import DEPLOY, KIOKU
from tests.helpers.unit_files import keys

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def verify(unit: str, tmp_path: Path, *, user: bool) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze verify` on `unit`, the executable swapped for this install's."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    path = runtime / "kioku.service"
    path.write_text(unit)
    command = [str(ANALYZE), *(["--user"] if user else []), "verify", str(path)]
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("name", sorted(DEPLOYED))
def test_deploy_units_are_the_rendered_defaults(name: str) -> None:
    assert (DEPLOY / name).read_text() == render(DEPLOYED[name])


@needs_analyze
@pytest.mark.parametrize("name", sorted(DEPLOYED))
def test_systemd_analyze_accepts_the_deploy_unit(name: str, tmp_path: Path) -> None:
    text = (DEPLOY / name).read_text()
    text = text.replace(str(DOCUMENTED_EXECUTABLE), str(KIOKU))
    text = text.replace("%h/kioku/.venv/bin/kioku", str(KIOKU))
    result = verify(text, tmp_path, user=name == "kioku-user.service")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@needs_analyze
@pytest.mark.parametrize("system", [True, False])
def test_systemd_analyze_accepts_the_unit_rendered_for_this_install(
    system: bool, tmp_path: Path
) -> None:
    unit = render(UnitSpec(KIOKU, str(tmp_path / "home"), 20.0, system))
    result = verify(unit, tmp_path, user=not system)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_system_unit_is_notify_with_watchdog_dedicated_user_and_hardening() -> None:
    unit = keys(render(DEPLOYED["kioku.service"]))
    assert unit["Type"] == "notify"
    assert unit["NotifyAccess"] == "main"
    assert unit["WatchdogSec"] == "60"
    assert unit["User"] == "kioku"
    assert unit["StateDirectory"] == "kioku"
    assert unit["Environment"] == "KIOKU_HOME=/var/lib/kioku"
    assert unit["EnvironmentFile"] == "-/etc/kioku/env"
    assert unit["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert unit["Restart"] == "on-failure"
    for key in ("NoNewPrivileges", "PrivateTmp", "PrivateDevices", "LockPersonality"):
        assert unit[key] == "yes"
    assert unit["ProtectSystem"] == "strict"
    assert unit["ProtectHome"] == "yes"
    assert unit["UMask"] == "0077"


def test_stop_timeout_outlasts_the_grace_period() -> None:
    unit = keys(render(UnitSpec(KIOKU, "/var/lib/kioku", 120.0, True)))
    assert int(unit["TimeoutStopSec"]) >= 150


def test_user_unit_has_no_user_and_no_namespace_sandboxing() -> None:
    unit = keys(render(DEPLOYED["kioku-user.service"]))
    assert "User" not in unit
    assert "ProtectSystem" not in unit
    assert unit["Environment"] == "KIOKU_HOME=%h/.kioku"
    assert unit["WantedBy"] == "default.target"


def test_executable_under_a_home_folder_keeps_home_readable() -> None:
    unit = keys(render(UnitSpec(Path("/home/ann/kioku/.venv/bin/kioku"), "/srv/k", 20, True)))
    assert unit["ProtectHome"] == "read-only"
    assert unit["ReadWritePaths"] == "/srv/k"


def test_daemon_libraries_work_under_memory_deny_write_execute() -> None:
    """MemoryDenyWriteExecute=yes, emulated with the kernel's PR_SET_MDWE (Linux >= 6.3)."""
    script = (
        "import ctypes, mmap, asyncio, pathlib, tempfile\n"
        "if ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) != 0:\n"
        "    raise SystemExit(77)\n"
        "try:\n"
        "    mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
        "    raise SystemExit('W+X memory was allowed: the emulation is not active')\n"
        "except PermissionError:\n"
        "    pass\n"
        "import telegram, discord, slack_bolt, anthropic, openai, aiohttp, ssl\n"
        "from memory.store.database import Store\n"
        "async def main():\n"
        "    store = await Store.open(pathlib.Path(tempfile.mkdtemp()) / 'state.db')\n"
        "    assert (await store.check_integrity()).ok\n"
        "    await store.close()\n"
        "asyncio.run(main())\n"
        "assert ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 7)() == 7\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    if result.returncode == 77:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux >= 6.3)")
    assert result.returncode == 0, result.stderr


def test_this_install_names_its_executable_home_and_grace_period(home: Path) -> None:
    user = this_install(Settings(), system=False)
    assert (user.executable, user.home, user.system) == (KIOKU, str(home), False)
    assert user.grace_period == Settings().gateway.grace_period
    assert this_install(Settings(), system=True).home == str(home)


def test_the_user_unit_goes_where_systemctl_user_looks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert unit_path(system=False) == tmp_path / "xdg" / "systemd" / "user" / "kioku.service"
    assert unit_path(system=True) == SYSTEM_UNIT_PATH


def test_write_unit_replaces_the_file_readable_by_systemd(tmp_path: Path) -> None:
    path = tmp_path / "units" / "kioku.service"
    write_unit(path, "old\n")
    write_unit(path, "new\n")
    assert path.read_text() == "new\n"
    assert path.stat().st_mode & 0o777 == 0o644
    assert os.listdir(path.parent) == ["kioku.service"]


def test_memory_deny_write_execute_is_set_only_without_a_stdio_mcp_server() -> None:
    plain = render(UnitSpec(KIOKU, "/var/lib/kioku", 20.0, True))
    with_mcp = render(UnitSpec(KIOKU, "/var/lib/kioku", 20.0, True, stdio_mcp=True))
    assert keys(plain)["MemoryDenyWriteExecute"] == "yes"
    assert "MemoryDenyWriteExecute" not in keys(with_mcp)
    assert "# JIT runtimes (Node's V8, Java, .NET) abort under it." in with_mcp


def test_mcp_program_folders_come_first_on_the_units_path() -> None:
    spec = UnitSpec(KIOKU, "%h/.kioku", 20.0, False, path="/home/ann/.nvm/bin:/usr/bin")
    assert keys(render(spec))["Environment"] == "PATH=/home/ann/.nvm/bin:/usr/bin"


def test_mcp_folders_are_writable_and_home_read_only_instead_of_hidden() -> None:
    spec = UnitSpec(KIOKU, "/var/lib/kioku", 20.0, True, folders=("/home/me/notes", "/srv/a b"))
    unit = keys(render(spec))
    assert unit["ProtectHome"] == "read-only"
    assert unit["ReadWritePaths"] == '-/home/me/notes "-/srv/a b"'


def test_a_kioku_home_under_home_is_not_hidden_from_the_unit() -> None:
    unit = keys(render(UnitSpec(DOCUMENTED_EXECUTABLE, "/home/ann/.kioku", 20.0, True)))
    assert (unit["ProtectHome"], unit["ReadWritePaths"]) == ("read-only", "/home/ann/.kioku")


@needs_analyze
def test_systemd_analyze_accepts_a_unit_shaped_by_mcp_servers(tmp_path: Path) -> None:
    spec = UnitSpec(
        KIOKU, str(tmp_path), 20.0, True, "/opt/node 1/bin:/usr/bin", ("/srv/a b",), True
    )
    result = verify(render(spec), tmp_path, user=False)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_this_install_reads_what_its_stdio_mcp_servers_need(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nvm_bin, notes = tmp_path / "nvm" / "bin", tmp_path / "notes"
    nvm_bin.mkdir(parents=True)
    notes.mkdir()
    (nvm_bin / "npx").write_text("#!/bin/sh\n")
    (nvm_bin / "npx").chmod(0o755)
    monkeypatch.setenv("PATH", f"{nvm_bin}:/usr/bin:/bin")
    home.mkdir()
    (home / "config.toml").write_text(
        f'[mcp.servers.files]\ncommand = "npx"\nargs = ["-y", "server", "{notes}"]\n'
    )
    spec = this_install(load_settings(), system=True)
    assert spec.path == f"{nvm_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert (spec.folders, spec.stdio_mcp) == ((str(notes),), True)
