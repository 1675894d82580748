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

from config.paths import DEFAULT_HOME
from config.settings import Settings
from memory.files import atomic_write

SYSTEM_USER = "kioku"
SYSTEM_HOME = Path("/var/lib/kioku")
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
    """The facts a unit depends on."""

    executable: Path
    home: str
    grace_period: float
    system: bool


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
        "UMask=0077",
    ]
    lines += _system_service(spec) if spec.system else []
    lines += [
        "NoNewPrivileges=yes",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
        "LockPersonality=yes",
        "MemoryDenyWriteExecute=yes",
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
    "#   sudo useradd --system --home-dir /var/lib/kioku --shell /usr/sbin/nologin kioku",
    "#   sudo install -m 0600 /dev/null /etc/kioku/env   # secrets: KIOKU_LLM__API_KEY=...",
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
        "ProtectHome=read-only" if _under_home(spec.executable) else "ProtectHome=yes",
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
    return UnitSpec(executable, home, settings.gateway.grace_period, system)


def unit_path(*, system: bool) -> Path:
    """Where systemd looks for kioku's unit: the system's folder, or this account's."""
    return SYSTEM_UNIT_PATH if system else user_unit_path()


def user_unit_path() -> Path:
    """This account's unit, where `systemctl --user` looks for it."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user" / "kioku.service"


def next_steps(spec: UnitSpec) -> list[str]:
    """What the person runs after the unit is written."""
    if not spec.system:
        user = os.environ.get("USER") or pwd.getpwuid(os.getuid()).pw_name
        return [
            "systemctl --user daemon-reload && systemctl --user enable --now kioku",
            f"loginctl enable-linger {user}   # keeps kioku running when you log out",
            "kioku doctor   # checks the whole setup",
        ]
    steps = []
    if not _user_exists(SYSTEM_USER):
        steps.append(
            f"useradd --system --home-dir {SYSTEM_HOME} --shell /usr/sbin/nologin {SYSTEM_USER}"
        )
    if spec.home != str(SYSTEM_HOME):
        steps.append(f"chown -R {SYSTEM_USER}:{SYSTEM_USER} {spec.home}")
    steps += [
        "install -d -m 0700 /etc/kioku && install -m 0600 /dev/null /etc/kioku/env"
        "   # then put secrets in it (KIOKU_LLM__API_KEY=...)",
        "systemctl daemon-reload && systemctl enable --now kioku",
        f"sudo -u {SYSTEM_USER} KIOKU_HOME={spec.home} {spec.executable} doctor",
    ]
    return steps


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def write_unit(path: Path, text: str) -> None:
    """Replace the unit atomically, readable by systemd (0644)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode(), mode=0o644)
