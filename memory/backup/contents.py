"""Which files of a home go into its backup, besides state.db.

The `people/` tree (notes, skills, media), the shared `skills/`, `groups/` (the groups'
media) and config.toml; `.env` (the secrets) only when asked. The socket, the lock,
state.db's WAL and shared-memory files and the backups folder stay out: the database
arrives as a consistent copy instead, the rest means nothing elsewhere.
Links are left out too: a restore writes regular files only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memory.backup.manifest import SECRETS, TOP_FOLDERS


@dataclass(frozen=True)
class HomeFile:
    """A file to copy: its name in the archive (POSIX, relative to the home) and path."""

    name: str
    path: Path


def home_files(home: Path, with_secrets: bool) -> tuple[list[HomeFile], list[str]]:
    """The regular files to back up, and the names of the links skipped."""
    files = [HomeFile(name, home / name) for name in ("config.toml", SECRETS)]
    files = [f for f in files if f.path.is_file() and not f.path.is_symlink()]
    if not with_secrets:
        files = [f for f in files if f.name != SECRETS]
    skipped: list[str] = []
    for folder in TOP_FOLDERS:
        root = home / folder
        if root.is_symlink():
            skipped.append(folder)
            continue
        for directory, subdirs, names in os.walk(root):
            here = Path(directory)
            for sub in [d for d in subdirs if (here / d).is_symlink()]:
                skipped.append((here / sub).relative_to(home).as_posix())
            for name in sorted(names):
                path = here / name
                relative = path.relative_to(home).as_posix()
                if path.is_symlink() or not path.is_file():
                    skipped.append(relative)
                else:
                    files.append(HomeFile(relative, path))
    return files, skipped
