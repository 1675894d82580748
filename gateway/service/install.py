"""What `kioku service install` decides apart from printing: what the unit will lack, whether
the `kioku` user can read kioku's code, what to run next, and starting the service.

The CLI (gateway/cli/service.py) and the setup wizard print these and choose exit codes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from config.settings import Settings
from gateway.service.mcp_needs import mcp_needs
from gateway.service.recipe import (
    blocked_for_others,
    code_paths,
    first_blocked,
    shell_only_secrets,
)
from gateway.service.units import UnitSpec


def unit_warnings(
    settings: Settings, spec: UnitSpec, environ: Mapping[str, str] = os.environ
) -> list[str]:
    """What the unit will lack: MCP programs not found, folders the `kioku` user cannot
    reach, settings that exist only in this shell."""
    needs = mcp_needs(settings.mcp)
    warnings = [
        f"MCP command `{command}` is not on this shell's PATH, so the unit's PATH will not"
        " have it either: install it, or give its absolute path in [mcp]."
        for command in needs.unresolved
    ]
    if spec.system:
        for path in map(Path, (*needs.folders, *needs.command_dirs)):
            blocked = blocked_for_others(path)
            if blocked:
                warnings.append(
                    f"the `kioku` user cannot reach {path}, which an MCP server uses:"
                    f" {blocked[0]} is mode {blocked[1]:04o}. Open it to that user (for"
                    f" instance `setfacl -m u:kioku:rx {blocked[0]}`) or move the folder."
                )
    home = Path(spec.home.replace("%h", str(Path.home())))
    names = shell_only_secrets(environ, [home / ".env", settings.home / ".env"])
    if names:
        warnings.append(
            f"this shell sets {', '.join(names)}, which the service will not see:"
            f" put them in {home / '.env'} (mode 0600; a provider's key as"
            " KIOKU_LLM__API_KEY=…)."
        )
    return warnings


def unreadable_code(spec: UnitSpec) -> str | None:
    """Why the `kioku` user could not run this install's code (a folder on the way closed
    to others), or None when it can."""
    blocked = first_blocked(code_paths(spec.executable))
    if blocked is None:
        return None
    return (
        f"The `kioku` user cannot read kioku's code at {blocked[0]}: {blocked[1]} is mode"
        f" {blocked[2]:04o}. Install kioku where every user can read it (e.g. /opt/kioku,"
        " see deploy/kioku.service) and run that install's `kioku service install --system`."
    )


def system_after(spec: UnitSpec, *, sudo: bool) -> list[str]:
    """What the person runs once the system service is installed."""
    admin = f"sudo -u kioku KIOKU_HOME={spec.home} {spec.executable}"
    return [
        f"{admin} doctor   # checks the service's setup",
        f"{admin} pairing …   # every admin command, on the service's home",
        f"{'sudo ' if sudo else ''}journalctl -u kioku -f   # its log",
    ]


def start_service(*, system: bool) -> str | None:
    """`systemctl daemon-reload`, then enable and start kioku (the user's manager unless
    `system`); None when it runs, else the command that failed and why."""
    systemctl = ["systemctl"] if system else ["systemctl", "--user"]
    for command in ([*systemctl, "daemon-reload"], [*systemctl, "enable", "--now", "kioku"]):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"{' '.join(command)}: {done.stderr.strip() or done.returncode}"
    return None
