"""`kioku doctor` for the home folder: it exists, belongs to this account, and only it reads
the memory. Read-only: a missing folder is reported, never created."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gateway import instance
from gateway.doctor.finding import Finding

PRIVATE_FILES = ("state.db", ".env", "config.toml", "gateway.sock", instance.LOCK_NAME)


def check_home(home: Path) -> list[Finding]:
    """The folder itself: there, a folder, this account's, closed to others."""
    try:
        info = home.stat()
    except FileNotFoundError:
        return [Finding("note", "home", f"{home} does not exist yet (created on first start)")]
    if not stat.S_ISDIR(info.st_mode):
        return [Finding("problem", "home", f"{home} is not a folder", "set KIOKU_HOME to a folder")]
    findings = [Finding("ok", "home", str(home))]
    if info.st_uid != os.geteuid():
        findings.append(
            Finding(
                "problem",
                "home",
                f"{home} belongs to uid {info.st_uid}, not to this account ({os.geteuid()})",
                f"chown -R {os.geteuid()} {home}  (or run kioku as its owner)",
            )
        )
    if info.st_mode & 0o077:
        findings.append(
            Finding(
                "problem",
                "permissions",
                f"{home} is mode {_mode(info.st_mode)}: others can read the memory",
                f"chmod 700 {home}",
            )
        )
    return findings


def check_private_files(home: Path) -> list[Finding]:
    """The database, secrets, socket and lock inside it: each private (0600)."""
    findings = []
    for name in PRIVATE_FILES:
        path = home / name
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            continue
        if mode & 0o077:
            findings.append(
                Finding(
                    "problem",
                    "permissions",
                    f"{path} is mode {_mode(mode)}: it should be private (0600)",
                    f"chmod 600 {path}",
                )
            )
    return findings or [Finding("ok", "permissions", "home, database and socket are private")]


def _mode(mode: int) -> str:
    return f"{stat.S_IMODE(mode):04o}"
