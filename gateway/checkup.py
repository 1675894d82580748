"""The checks behind `kioku doctor`: the whole setup, and for each problem how to fix it.

Read-only: the database is opened only if it already exists, and a missing folder is
reported rather than created. The CLI prints the findings and picks the exit code.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

from adapters.platforms import PLATFORMS
from config.load import ConfigError, load_settings
from config.paths import kioku_home
from config.settings import Settings
from gateway import instance
from gateway.service_units import user_unit_path

PRIVATE_FILES = ("state.db", ".env", "config.toml", "gateway.sock", instance.LOCK_NAME)

Level = Literal["ok", "note", "problem"]


@dataclass(frozen=True)
class Finding:
    """One line of the report; a problem always comes with its fix."""

    level: Level
    topic: str
    text: str
    fix: str | None = None


async def examine() -> list[Finding]:
    """Every finding, in the order a person would fix them."""
    home = kioku_home()
    findings = _check_home(home)
    try:
        settings = load_settings()
    except ConfigError as exc:
        findings.append(Finding("problem", "config", str(exc), "edit the file named above"))
        settings = None
    if settings is not None:
        findings.append(Finding("ok", "config", f"valid ({home / 'config.toml'})"))
        findings.append(await _check_model(settings))
        findings += _check_platforms(settings)
    if home.is_dir():
        findings += _check_private_files(home)
        findings.append(await _check_database(home / "state.db"))
        findings.append(_check_daemon(home))
    findings += await asyncio.to_thread(_check_linger)
    return findings


def _check_home(home: Path) -> list[Finding]:
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


def _check_private_files(home: Path) -> list[Finding]:
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


async def _check_model(settings: Settings) -> Finding:
    from agent.providers.factory import NoProvider, build_provider

    provider = build_provider(settings.llm)
    try:
        if isinstance(provider, NoProvider):
            return Finding(
                "note",
                "model",
                "no model: slash commands only",
                "set llm.api_key (or ANTHROPIC_API_KEY), or llm.provider=openai with llm.base_url",
            )
        return Finding("ok", "model", f"{settings.llm.provider} {settings.llm.model}")
    finally:
        await provider.aclose()


def _check_platforms(settings: Settings) -> list[Finding]:
    """Which platforms will start, by the registry's own rule (the credential that turns each
    on), and which have some credentials but not that one."""
    findings = []
    for platform in PLATFORMS:
        if platform.credential is None:
            continue
        section = platform.section(settings)
        present = sorted(
            name
            for name in type(section).model_fields
            if _secret(name) and _set(getattr(section, name))
        )
        if platform.configured(settings):
            findings.append(Finding("ok", platform.name, f"credentials set ({', '.join(present)})"))
        elif present:
            findings.append(
                Finding(
                    "problem",
                    platform.name,
                    f"{', '.join(present)} set but not {platform.credential}: it will not start",
                    f"set {platform.name}.{platform.credential} (or remove the others)",
                )
            )
        else:
            findings.append(Finding("note", platform.name, "not configured (no credentials)"))
    return findings


def _secret(name: str) -> bool:
    return any(word in name for word in ("token", "secret", "key"))


def _set(value: object) -> bool:
    if isinstance(value, SecretStr):
        return bool(value.get_secret_value())
    return bool(value)


async def _check_database(path: Path) -> Finding:
    if not await asyncio.to_thread(path.exists):
        return Finding("note", "database", f"{path} does not exist yet (created on first start)")
    from memory.store.database import Store, unreadable

    reason = await asyncio.to_thread(unreadable, path)
    if reason is not None:
        return _corrupt(path, reason)
    try:
        store = await Store.open(path)
    except sqlite3.DatabaseError as exc:
        return _corrupt(path, str(exc))
    try:
        report = await store.check_integrity()
    except sqlite3.DatabaseError as exc:
        return _corrupt(path, str(exc))
    finally:
        await store.close()
    if not report.ok:
        return _corrupt(path, "; ".join(report.problems[:5]))
    return Finding(
        "ok",
        "database",
        f"integrity and full-text index ok (schema v{report.schema_version}; persons: "
        f"{report.persons}, sessions: {report.sessions}, messages: {report.messages}; "
        f"{report.size_bytes / 1e6:.1f} MB)",
    )


def _corrupt(path: Path, detail: str) -> Finding:
    return Finding(
        "problem",
        "database",
        f"{path} is damaged: {detail}",
        f"stop kioku, keep a copy (cp {path} {path}.broken), then run "
        f"`sqlite3 {path} '.recover' | sqlite3 {path.with_name('recovered.db')}` "
        "and move recovered.db into place, or restore a backup",
    )


def _check_daemon(home: Path) -> Finding:
    holder = instance.running(home)
    if holder is None:
        return Finding("note", "daemon", "not running (`kioku serve`, or start the service)")
    return Finding("ok", "daemon", f"running (pid {holder.pid})")


def _check_linger() -> list[Finding]:
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


def _mode(mode: int) -> str:
    return f"{stat.S_IMODE(mode):04o}"
