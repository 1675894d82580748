"""`kioku doctor` for the running kioku: whether the daemon runs, and whether an installed
user service keeps running after logout (linger)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from gateway import instance
from gateway.doctor.finding import Finding
from gateway.service.units import user_unit_path


def check_daemon(home: Path) -> Finding:
    """Running (with its pid, from the home's lock) or not."""
    holder = instance.running(home)
    if holder is None:
        return Finding("note", "daemon", "not running (`kioku serve`, or start the service)")
    return Finding("ok", "daemon", f"running (pid {holder.pid})")


def check_linger() -> list[Finding]:
    """A user unit stops at logout unless linger is enabled for the account."""
    unit = user_unit_path()
    try:
        installed = unit.exists()
    except OSError as exc:
        return [Finding("note", "linger", f"cannot look for the user unit {unit}: {exc}")]
    if not installed or shutil.which("loginctl") is None:
        return []
    user = os.environ.get("USER") or str(os.getuid())
    try:
        result = subprocess.run(
            ["loginctl", "show-user", user, "-p", "Linger"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [Finding("note", "linger", f"could not ask loginctl: {exc}")]
    if result.returncode != 0:
        reason = result.stderr.strip() or f"exit {result.returncode}"
        return [Finding("note", "linger", f"could not ask loginctl: {reason}")]
    if result.stdout.strip() == "Linger=yes":
        return [Finding("ok", "linger", f"enabled for {user}: kioku runs while you are away")]
    return [
        Finding(
            "problem",
            "linger",
            f"not enabled for {user}: the user service stops when you log out",
            f"loginctl enable-linger {user}",
        )
    ]
