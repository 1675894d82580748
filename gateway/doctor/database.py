"""`kioku doctor` for state.db: damage, a schema version changed by hand, rows whose parent is
gone, dropped tables, a full-text index out of step; and `--repair`, the doctor's one writer.

Read-only but for `repair_database`: the database is opened only if it already exists, and
never migrated.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from config.paths import kioku_home
from gateway import instance
from gateway.doctor.finding import Finding

if TYPE_CHECKING:
    from memory.store.health import Dangling, Health, Repair

REPAIR = "stop kioku, then `kioku doctor --repair`"


async def check_database(path: Path) -> list[Finding]:
    """What `memory.store.health` finds in state.db, each with its fix; ok when nothing."""
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
    findings += _index_findings(health)
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


def _index_findings(health: Health) -> list[Finding]:
    findings = []
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


def _corrupt(path: Path, detail: str) -> Finding:
    return Finding(
        "problem",
        "database",
        f"{path} is damaged: {detail}",
        f"stop kioku, keep a copy (cp {path} {path}.broken), then run "
        f"`sqlite3 {path} '.recover' | sqlite3 {path.with_name('recovered.db')}` "
        "and move recovered.db into place, or restore a backup",
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
