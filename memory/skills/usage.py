"""How each skill is used: views, last use, who created and last changed it, and when.

The numbers live in a small sidecar, `.usage.json`, beside the skill folders of each
place (a person's `skills/` or the shared one), never inside a skill's own files, so a
skill folder stays exactly what a person would write and can be copied anywhere. The
sidecar is changed only under the place's lock (see `skills_files.root_lock`).
A shared skill's record counts views from everyone but names no viewer.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import structlog

from inputs.limits import loads
from inputs.text import lone_surrogate
from plumbing.files import atomic_write

USAGE_FILE = ".usage.json"

log = structlog.get_logger("kioku.skills")


@dataclass(frozen=True)
class SkillUsage:
    views: int = 0
    last_used: str | None = None
    created_at: str | None = None
    created_by: str | None = None
    updated_at: str | None = None
    updated_by: str | None = None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_usage(root: Path) -> dict[str, SkillUsage]:
    """Every skill's record in `root`; an unreadable sidecar counts as empty (and is logged)."""
    path = root / USAGE_FILE
    try:
        raw = loads(path.read_bytes(), what=str(path))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, not JSON, too deep
        log.warning("skills_usage_unreadable", path=str(path), error=str(exc))
        return {}
    records = raw.get("skills") if isinstance(raw, dict) else None
    if not isinstance(records, dict):
        return {}
    usage: dict[str, SkillUsage] = {}
    fields = SkillUsage.__dataclass_fields__
    for name, record in records.items():
        if isinstance(record, dict) and not lone_surrogate(name):
            text = {k: v for k, v in record.items() if isinstance(v, str) and not lone_surrogate(v)}
            kept = {k: v for k, v in text.items() if k in fields and k != "views"}
            views = record.get("views")
            usage[name] = SkillUsage(views=views if type(views) is int else 0, **kept)
    return usage


def record_view(root: Path, name: str) -> None:
    """Count one use of `name` (call under the place's lock)."""
    usage = read_usage(root)
    record = usage.get(name, SkillUsage())
    usage[name] = replace(record, views=record.views + 1, last_used=now())
    _write(root, usage)


def record_write(root: Path, name: str, by: str, created: bool) -> None:
    """Note who changed `name` and when; `created` starts a fresh record (call under the lock)."""
    usage = read_usage(root)
    stamp = now()
    if created:
        usage[name] = SkillUsage(created_at=stamp, created_by=by, updated_at=stamp, updated_by=by)
    else:
        usage[name] = replace(usage.get(name, SkillUsage()), updated_at=stamp, updated_by=by)
    _write(root, usage)


def forget(root: Path, name: str) -> None:
    """Drop the record of a deleted skill (call under the lock)."""
    usage = read_usage(root)
    if usage.pop(name, None) is not None:
        _write(root, usage)


def _write(root: Path, usage: dict[str, SkillUsage]) -> None:
    data = {"skills": {name: asdict(record) for name, record in sorted(usage.items())}}
    atomic_write(root / USAGE_FILE, json.dumps(data, indent=1, ensure_ascii=False).encode())
