"""The backups folder: where backups go, how they are named, which is newest, which go.

An archive's name carries its UTC creation time (`kioku-backup-20261204T013000Z.tar.gz`),
so names sort by age and the age survives a copy that changes the file's mtime. Only
files named so are ever counted or deleted; anything else in the folder is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

PREFIX = "kioku-backup-"
STAMP = "%Y%m%dT%H%M%SZ"
NAME = re.compile(rf"{PREFIX}(?P<stamp>\d{{8}}T\d{{6}}Z)(?:-(?P<n>\d+))?\.tar\.gz")


@dataclass(frozen=True)
class Archive:
    """One backup in the folder and when it was made."""

    path: Path
    created: datetime


def backups_folder(home: Path, configured: Path | None) -> Path:
    """`backup.dir` if set, else `<home>/backups`."""
    return configured.expanduser() if configured is not None else home / "backups"


def archive_name(created: datetime) -> str:
    return f"{PREFIX}{created.astimezone(UTC).strftime(STAMP)}.tar.gz"


def archives(folder: Path) -> list[Archive]:
    """The backups in `folder`, oldest first (none if it does not exist)."""
    try:
        names = [entry for entry in folder.iterdir() if entry.is_file()]
    except FileNotFoundError:
        return []
    found = []
    for path in names:
        match = NAME.fullmatch(path.name)
        if match:
            created = datetime.strptime(match["stamp"], STAMP).replace(tzinfo=UTC)
            found.append((created, int(match["n"] or 1), path))
    return [Archive(path, created) for created, _, path in sorted(found)]


def newest(folder: Path) -> Archive | None:
    found = archives(folder)
    return found[-1] if found else None


def prune(folder: Path, keep: int) -> list[Path]:
    """Delete all but the newest `keep` (at least 1) backups; the paths deleted."""
    old = archives(folder)[: -max(keep, 1)]
    for archive in old:
        archive.path.unlink(missing_ok=True)
    return [archive.path for archive in old]
