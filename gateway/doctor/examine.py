"""The checks behind `kioku doctor`, in the order a person would fix what they find.

Read-only: the database is opened only if it already exists (and never migrated), and a
missing folder is reported rather than created (`database.repair_database` is the one
writer, for `kioku doctor --repair`). The CLI prints the findings and picks the exit code.
"""

from __future__ import annotations

import asyncio

from config.load import ConfigError, load_settings
from config.paths import kioku_home
from gateway import instance
from gateway.doctor.backups import check_backups
from gateway.doctor.credentials import check_model, check_platforms
from gateway.doctor.database import check_database
from gateway.doctor.finding import Finding
from gateway.doctor.home import check_home, check_private_files
from gateway.doctor.matrix import check_matrix
from gateway.doctor.providers import check_providers
from gateway.doctor.running import check_daemon, check_linger
from gateway.doctor.voice import check_voice
from gateway.doctor.web_links import check_web_links


async def examine(online: bool = False) -> list[Finding]:
    """Every finding, in the order a person would fix them; `online` also contacts the
    model endpoint, the platforms and the MCP servers (gateway/doctor/online/)."""
    home = kioku_home()
    findings = check_home(home)
    try:
        settings = load_settings()
    except ConfigError as exc:
        findings.append(Finding("problem", "config", str(exc), "edit the file named above"))
        settings = None
    if settings is not None:
        findings.append(Finding("ok", "config", f"valid ({home / 'config.toml'})"))
        findings.append(await check_model(settings))
        findings += check_platforms(settings)
        findings += await asyncio.to_thread(check_matrix, settings, home)
        if online:
            from gateway.doctor.online.findings import check_online

            findings += await check_online(settings)
        findings += await asyncio.to_thread(check_voice, settings)
        findings += check_web_links(settings)
        findings += await check_providers(settings)
        if settings.backup.every_seconds is not None:
            findings.append(await asyncio.to_thread(check_backups, settings))
    if home.is_dir():
        findings += check_private_files(home)
        findings += await check_database(home / "state.db")
        findings.append(check_daemon(home))
    findings += await asyncio.to_thread(check_linger)
    return findings


def online_by_default() -> bool:
    """Online only while no daemon runs: a running daemon already holds these connections
    (and a second Slack Socket Mode connection could take one of its events)."""
    return instance.running(kioku_home()) is None


def offline_note(asked: bool | None) -> Finding:
    """The report's last line when nothing was contacted, saying why (`asked`: the
    --online/--offline given, None for neither)."""
    skipped = (
        "the daemon is running, so nothing was contacted"
        if asked is None
        else "nothing was contacted (--offline)"
    )
    return Finding("note", "online", f"{skipped}; `kioku doctor --online` checks the services")
