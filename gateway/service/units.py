"""kioku's systemd units: rendered from the install's facts, and where systemd finds them.

The units are rendered from where the `kioku` executable is, which KIOKU_HOME, and the
shutdown grace period, so that what gets installed always runs this kioku;
`deploy/kioku.service` and `deploy/kioku-user.service` are these same renderings with
the documented default paths, kept identical by a test. `kioku service install` writes
them and `kioku doctor` looks for the user unit.
"""

from __future__ import annotations

import math
import os
import pwd
import sys
from dataclasses import dataclass
from pathlib import Path

from config.paths import DEFAULT_HOME, SYSTEM_HOME
from config.settings import Settings
from gateway.service.mcp_needs import mcp_needs, unit_path_value
from plumbing.files import atomic_write

SYSTEM_USER = "kioku"
SYSTEM_UNIT_PATH = Path("/etc/systemd/system/kioku.service")
DOCUMENTED_EXECUTABLE = Path("/opt/kioku/.venv/bin/kioku")
USER_HOME_SPEC = "%h/.kioku"
WATCHDOG_SEC = 60
# systemd's stop timeout must outlast the grace period (turns finishing) plus closing down.
STOP_MARGIN_SEC = 30
HOME_TREES = (Path("/home"), Path("/root"), Path("/run/user"))
DEFAULT_GRACE = 20.0


@dataclass(frozen=True)
class UnitSpec:
    """The facts a unit depends on; the last three come from the stdio MCP servers."""

    executable: Path
    home: str
    grace_period: float
    system: bool
    path: str | None = None
    folders: tuple[str, ...] = ()
    stdio_mcp: bool = False


# What deploy/ holds: kioku installed in /opt/kioku/.venv (system) or ~/kioku/.venv (user).
DEPLOYED = {
    "kioku.service": UnitSpec(DOCUMENTED_EXECUTABLE, str(SYSTEM_HOME), DEFAULT_GRACE, True),
    "kioku-user.service": UnitSpec(
        Path("%h/kioku/.venv/bin/kioku"), USER_HOME_SPEC, DEFAULT_GRACE, False
    ),
}


def render(spec: UnitSpec) -> str:
    """The unit file text for `spec` (system unit with a dedicated user, or a user unit)."""
    stop_timeout = max(60, math.ceil(spec.grace_period) + STOP_MARGIN_SEC)
    lines = [
        *(_SYSTEM_HEADER if spec.system else _USER_HEADER),
        "[Unit]",
        "Description=kioku chat gateway with per-person memory",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=notify",
        "NotifyAccess=main",
        f"ExecStart={spec.executable} serve",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        "RestartSec=5",
        f"WatchdogSec={WATCHDOG_SEC}",
        f"TimeoutStopSec={stop_timeout}",
        f"Environment=KIOKU_HOME={spec.home}",
        *_path(spec),
        "UMask=0077",
    ]
    lines += _system_service(spec) if spec.system else []
    lines += [
        "NoNewPrivileges=yes",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
        "LockPersonality=yes",
        *_memory_deny_write_execute(spec),
        "SystemCallArchitectures=native",
        "",
        "[Install]",
        f"WantedBy={'multi-user.target' if spec.system else 'default.target'}",
    ]
    return "\n".join(lines) + "\n"


_SYSTEM_HEADER = [
    "# kioku as a system service, run by the dedicated user `kioku`.",
    "# `sudo kioku service install --system` writes this unit for the running install.",
    "# By hand, with kioku installed in /opt/kioku/.venv:",
    "#   sudo useradd --system --user-group --home-dir /var/lib/kioku \\",
    "#     --shell /usr/sbin/nologin kioku",
    "#   sudo install -d -m 0700 -o kioku -g kioku /var/lib/kioku",
    "#   secrets (KIOKU_LLM__API_KEY=...) in /var/lib/kioku/.env, mode 0600, owned by kioku",
    "#   sudo cp kioku.service /etc/systemd/system/ && sudo systemctl daemon-reload",
    "#   sudo systemctl enable --now kioku",
    "# Reload the configuration with `systemctl reload kioku` (SIGHUP).",
]

_USER_HEADER = [
    "# kioku as a user service of the account that owns it.",
    "# `kioku service install --user` writes this unit to ~/.config/systemd/user/.",
    "#   systemctl --user daemon-reload && systemctl --user enable --now kioku",
    "#   loginctl enable-linger $USER   # keep it running while you are logged out",
    "# Reload the configuration with `systemctl --user reload kioku` (SIGHUP).",
]


def _system_service(spec: UnitSpec) -> list[str]:
    """Dedicated user and the filesystem/kernel sandbox (namespaces: system units only)."""
    if spec.home == str(SYSTEM_HOME):
        data = ["StateDirectory=kioku", "StateDirectoryMode=0700"]
    else:
        data = [f"ReadWritePaths={spec.home}"]
    return [
        f"User={SYSTEM_USER}",
        f"Group={SYSTEM_USER}",
        *data,
        "EnvironmentFile=-/etc/kioku/env",
        "ProtectSystem=strict",
        *_protect_home(spec),
        "PrivateTmp=yes",
        "PrivateDevices=yes",
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectKernelLogs=yes",
        "ProtectControlGroups=yes",
        "ProtectClock=yes",
        "ProtectHostname=yes",
        "RestrictNamespaces=yes",
        "RestrictRealtime=yes",
        "RestrictSUIDSGID=yes",
        "CapabilityBoundingSet=",
    ]


def _path(spec: UnitSpec) -> list[str]:
    if spec.path is None:
        return []
    return [
        "# The folders of the stdio MCP servers' programs (as this shell found them), then",
        "# systemd's default. Re-run `kioku service install` after changing [mcp].",
        _quoted(f"Environment=PATH={_escape(spec.path)}"),
    ]


def _protect_home(spec: UnitSpec) -> list[str]:
    """Home folders hidden, unless kioku or an MCP server needs something in them: then
    read-only, with the folders MCP servers are given (absolute-path arguments) writable."""
    needed = [spec.executable, *map(Path, (spec.home, *spec.folders, *_dirs(spec.path)))]
    lines = [
        "# /home, /root, /run/user: hidden, or read-only when kioku or an MCP server's program",
        "# or folder is there. Folders given to MCP servers as absolute-path arguments are",
        "# writable (`-`: one removed later does not stop kioku from starting).",
        "ProtectHome=read-only" if any(map(_under_home, needed)) else "ProtectHome=yes",
    ]
    if spec.folders:
        lines.append("ReadWritePaths=" + " ".join(_word(f"-{folder}") for folder in spec.folders))
    return lines


def _memory_deny_write_execute(spec: UnitSpec) -> list[str]:
    comment = [
        "# Only while no stdio MCP server is configured: child processes inherit it, and",
        "# JIT runtimes (Node's V8, Java, .NET) abort under it.",
    ]
    if spec.stdio_mcp:
        return [*comment, "# A stdio MCP server is configured: not set."]
    return [*comment, "MemoryDenyWriteExecute=yes"]


def _dirs(path: str | None) -> list[str]:
    return path.split(":") if path else []


def _escape(value: str) -> str:
    """A literal value in a unit: `%` would start a specifier."""
    return value.replace("%", "%%")


def _word(value: str) -> str:
    """One item of a space-separated unit setting, quoted when it holds a space."""
    value = _escape(value)
    return f'"{value}"' if any(c.isspace() for c in value) else value


def _quoted(line: str) -> str:
    key, value = line.split("=", 1)
    return f'{key}="{value}"' if any(c.isspace() for c in value) else line


def _under_home(path: Path) -> bool:
    return any(path.is_relative_to(tree) for tree in HOME_TREES)


def this_install(settings: Settings, *, system: bool) -> UnitSpec:
    """The spec for the running install: its executable, its KIOKU_HOME, its grace period."""
    executable = Path(sys.executable).parent / "kioku"
    explicit_home = os.environ.get("KIOKU_HOME")
    if system:
        home = str(settings.home) if explicit_home else str(SYSTEM_HOME)
    elif settings.home == Path(DEFAULT_HOME).expanduser().resolve():
        home = USER_HOME_SPEC
    else:
        home = str(settings.home)
    needs = mcp_needs(settings.mcp)
    return UnitSpec(
        executable,
        home,
        settings.gateway.grace_period,
        system,
        path=unit_path_value(needs.command_dirs),
        folders=needs.folders,
        stdio_mcp=needs.stdio,
    )


def unit_path(*, system: bool) -> Path:
    """Where systemd looks for kioku's unit: the system's folder, or this account's."""
    return SYSTEM_UNIT_PATH if system else user_unit_path()


def user_unit_path() -> Path:
    """This account's unit, where `systemctl --user` looks for it."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user" / "kioku.service"


def user_next_steps() -> list[str]:
    """What the person runs after the user unit is written."""
    user = os.environ.get("USER") or pwd.getpwuid(os.getuid()).pw_name
    return [
        "systemctl --user daemon-reload && systemctl --user enable --now kioku",
        f"loginctl enable-linger {user}   # keeps kioku running when you log out",
        "kioku doctor   # checks the whole setup",
    ]


def write_unit(path: Path, text: str) -> None:
    """Replace the unit atomically, readable by systemd (0644)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode(), mode=0o644)
