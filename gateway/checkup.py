"""The checks behind `kioku doctor`: the whole setup, and for each problem how to fix it.

Read-only: the database is opened only if it already exists (and never migrated), and a
missing folder is reported rather than created. `repair_database` is the one writer, for
`kioku doctor --repair`. The CLI prints the findings and picks the exit code.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import SecretStr

from adapters.platforms import PLATFORMS
from config.load import ConfigError, load_settings
from config.paths import kioku_home
from config.settings import Settings
from gateway import instance
from gateway.service_units import user_unit_path

if TYPE_CHECKING:
    from memory.store.health import Dangling, Health, Repair

PRIVATE_FILES = ("state.db", ".env", "config.toml", "gateway.sock", instance.LOCK_NAME)

Level = Literal["ok", "note", "warning", "problem"]
REPAIR = "stop kioku, then `kioku doctor --repair`"


@dataclass(frozen=True)
class Finding:
    """One line of the report; a problem always comes with its fix."""

    level: Level
    topic: str
    text: str
    fix: str | None = None


async def examine(online: bool = False) -> list[Finding]:
    """Every finding, in the order a person would fix them; `online` also contacts the
    model endpoint, the platforms and the MCP servers (gateway/checkup_online.py)."""
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
        if online:
            from gateway.checkup_online import check_online

            findings += await check_online(settings)
        findings += await asyncio.to_thread(_check_voice, settings)
        from gateway.checkup_web import check_web_links

        findings += check_web_links(settings)
        from gateway.checkup_providers import check_providers

        findings += await check_providers(settings)
        if settings.backup.every_seconds is not None:
            findings.append(await asyncio.to_thread(_check_backups, settings))
    if home.is_dir():
        findings += _check_private_files(home)
        findings += await _check_database(home / "state.db")
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


def _check_voice(settings: Settings) -> list[Finding]:
    """Whether voice notes are transcribed (and, for a command, whether its program is
    there), and whether ffmpeg is there to convert what the transcriber does not take."""
    stt = settings.stt
    findings = []
    if stt.provider == "off":
        findings.append(
            Finding("note", "voice", "transcription off (stt.provider): people are asked to type")
        )
    elif stt.provider == "openai" and stt.api_key is None and _hosted(stt.base_url):
        findings.append(
            Finding(
                "problem",
                "voice",
                f"transcription at {stt.base_url} without stt.api_key: it will be refused",
                "set stt.api_key (KIOKU_STT__API_KEY)",
            )
        )
    elif stt.provider == "openai":
        findings.append(Finding("ok", "voice", f"transcribed by {stt.model} at {stt.base_url}"))
    elif not stt.command:
        findings.append(
            Finding(
                "problem",
                "voice",
                "stt.provider is command but stt.command is empty",
                'set stt.command, e.g. ["whisper-cli", "-nt", "-f", "{file}"]',
            )
        )
    elif shutil.which(stt.command[0]) is None:
        findings.append(
            Finding(
                "problem",
                "voice",
                f"stt.command's program {stt.command[0]!r} is not found",
                "install it, or give its full path in stt.command",
            )
        )
    else:
        findings.append(Finding("ok", "voice", f"transcribed by the command {stt.command[0]}"))
    found = shutil.which(stt.ffmpeg)
    if found is not None:
        findings.append(Finding("ok", "ffmpeg", f"present ({found})"))
    else:
        findings.append(
            Finding(
                "note",
                "ffmpeg",
                f"{stt.ffmpeg!r} (stt.ffmpeg) not found: audio outside stt.formats "
                f"({', '.join(stt.formats)}) cannot be transcribed",
                "install ffmpeg (apt install ffmpeg), or set stt.ffmpeg to its path",
            )
        )
    return findings


def _hosted(url: str) -> bool:
    """A public transcription service (which wants a key), not a server of one's own."""
    return any(host in url for host in ("api.openai.com", "api.groq.com"))


def _secret(name: str) -> bool:
    return any(word in name for word in ("token", "secret", "key"))


def _set(value: object) -> bool:
    if isinstance(value, SecretStr):
        return bool(value.get_secret_value())
    return bool(value)


async def _check_database(path: Path) -> list[Finding]:
    if not await asyncio.to_thread(path.exists):
        return [Finding("note", "database", f"{path} does not exist yet (created on first start)")]
    from memory.store.database import unreadable
    from memory.store.errors import StoreError
    from memory.store.health import diagnose

    reason = await asyncio.to_thread(unreadable, path)
    if reason is not None:
        return [_corrupt(path, reason)]
    try:
        health = await diagnose(path)
    except StoreError as exc:
        return [_corrupt(path, str(exc))]
    if health.damage:
        return [_corrupt(path, "; ".join(health.damage[:5]))]
    findings = _version_findings(path, health)
    findings += [_dangling_finding(found) for found in health.dangling]
    if health.missing:
        findings.append(_missing_finding(health.missing))
    if health.index:
        findings.append(
            Finding(
                "problem",
                "database",
                "the full-text index is out of step with the turns (FTS5's integrity-check: "
                f"{health.index}): search misses turns, or finds deleted ones",
                f"{REPAIR} rebuilds it from the turns",
            )
        )
    if health.stale_bodies:
        findings.append(
            Finding(
                "problem",
                "database",
                f"{health.stale_bodies} turn(s) keep an indexed text (turns.body) that is not "
                "their content's (content changed by hand): search finds their old words",
                f"{REPAIR} recomputes it",
            )
        )
    if health.ok:
        findings.append(
            Finding(
                "ok",
                "database",
                f"integrity and full-text index ok (schema v{health.layout}; persons: "
                f"{health.persons}, sessions: {health.sessions}, messages: {health.turns}; "
                f"{health.size_bytes / 1e6:.1f} MB)",
            )
        )
    return findings


def _version_findings(path: Path, health: Health) -> list[Finding]:
    from memory.store.migrations import SCHEMA_VERSION

    version, layout = health.user_version, health.layout
    by_hand = f"with kioku stopped, `sqlite3 {path} 'PRAGMA user_version = {layout}'`"
    if version > SCHEMA_VERSION and health.unknown:
        return [
            Finding(
                "problem",
                "database",
                f"schema version {version} is newer than this kioku ({SCHEMA_VERSION}), and "
                f"it holds tables this kioku does not know ({', '.join(health.unknown[:5])})",
                "upgrade kioku to the version that wrote it (if you made those tables "
                f"yourself and only the number is wrong: {by_hand})",
            )
        ]
    if version != layout:
        return [
            Finding(
                "problem",
                "database",
                f"its user_version says schema v{version}, but its tables are those of "
                f"v{layout} (the number was changed by hand): kioku will not open it",
                f"{REPAIR} sets it to {layout}; or {by_hand}",
            )
        ]
    if layout < SCHEMA_VERSION:
        return [
            Finding(
                "note",
                "database",
                f"schema v{layout}: the next `kioku serve` upgrades it to v{SCHEMA_VERSION}",
            )
        ]
    return []


def _dangling_finding(found: Dangling) -> Finding:
    names = ", ".join(found.missing)
    if found.parent == "sessions":
        return Finding(
            "problem",
            "database",
            f"{found.rows} row(s) of {found.table} belong to a session that is gone "
            f"(session {names}; deleted by hand?): kioku can show them nowhere",
            f"{REPAIR} deletes them",
        )
    if found.parent == "persons":
        return Finding(
            "problem",
            "database",
            f"{found.rows} row(s) of {found.table} name a person missing from persons "
            f"({names}; deleted by hand?)",
            f"{REPAIR} creates the person again (no name), so nothing naming them is lost; "
            "to forget someone, use `kioku people forget`",
        )
    return Finding(
        "problem",
        "database",
        f"{found.rows} row(s) of {found.table} name a row of {found.parent} that is gone "
        f"({found.column} = {names})",
        "restore state.db from a backup",
    )


def _missing_finding(missing: list[str]) -> Finding:
    tables = [name for name in missing if name.startswith("table ")]
    return Finding(
        "problem",
        "database",
        f"kioku's {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} gone "
        "(dropped by hand?)",
        "restore state.db from a backup (a table is gone)"
        if tables
        else f"{REPAIR} creates them again",
    )


async def repair_database() -> Repair:
    """`kioku doctor --repair`: put right what `memory.store.health` can in state.db, holding
    the daemon's lock meanwhile; `instance.AlreadyRunning` while the daemon runs."""
    from memory.store.database import unreadable
    from memory.store.health import Repair, repair

    home = kioku_home()
    path = home / "state.db"
    if not await asyncio.to_thread(path.exists):
        return Repair(left=[f"{path} does not exist: there is nothing to repair"])
    reason = await asyncio.to_thread(unreadable, path)
    if reason is not None:
        return Repair(
            left=[f"{path} is no database SQLite can read ({reason}): nothing was changed"]
        )
    lock = instance.acquire(home)
    try:
        return await repair(path)
    finally:
        lock.release()


def _corrupt(path: Path, detail: str) -> Finding:
    return Finding(
        "problem",
        "database",
        f"{path} is damaged: {detail}",
        f"stop kioku, keep a copy (cp {path} {path}.broken), then run "
        f"`sqlite3 {path} '.recover' | sqlite3 {path.with_name('recovered.db')}` "
        "and move recovered.db into place, or restore a backup",
    )


def _check_backups(settings: Settings) -> Finding:
    """With scheduled backups on, the newest one's age: a problem past twice `every`."""
    from memory.backup.rotation import backups_folder, newest

    folder = backups_folder(settings.home, settings.backup.dir)
    every = settings.backup.every
    fix = f"run `kioku backup`, and look for backup_failed in the daemon's log (every {every})"
    try:
        last = newest(folder)
    except OSError as exc:
        return Finding("problem", "backup", f"cannot read {folder}: {exc.strerror}", fix)
    if last is None:
        return Finding("problem", "backup", f"no backup in {folder} yet", fix)
    age = (datetime.now(UTC) - last.created).total_seconds()
    text = f"newest {last.path.name}, {_age(age)} old (every {every})"
    assert settings.backup.every_seconds is not None
    if age > 2 * settings.backup.every_seconds:
        return Finding("problem", "backup", text, fix)
    return Finding("ok", "backup", text)


def _age(seconds: float) -> str:
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{max(seconds, 0):.0f}s"


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
