"""Which files of a home go into its backup, besides state.db.

The `people/` tree (notes, skills, media), the shared `skills/`, `groups/` (the groups'
media) and config.toml; `.env` (the secrets) only when asked. The socket, the lock,
state.db's WAL and shared-memory files and the backups folder stay out: the database
arrives as a consistent copy instead, the rest means nothing elsewhere.
Links are left out too: a restore writes regular files only. So is anything a restore
would refuse (a name too deep or too long, one that is not UTF-8): a backup never holds
what cannot come back. The tree is walked with a list, not by recursion, so no depth of
folders stops a backup.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memory.backup.manifest import SECRETS, TOP_FOLDERS, name_problem

LINK = "a link, not a regular file"


@dataclass(frozen=True)
class HomeFile:
    """A file to copy: its name in the archive (POSIX, relative to the home) and path."""

    name: str
    path: Path


@dataclass(frozen=True)
class LeftOut:
    """Something in the home that the backup does not hold, and why."""

    name: str
    why: str


def home_files(home: Path, with_secrets: bool) -> tuple[list[HomeFile], list[LeftOut]]:
    """The regular files to back up, and what was left out."""
    files = [HomeFile(name, home / name) for name in ("config.toml", SECRETS)]
    files = [f for f in files if f.path.is_file() and not f.path.is_symlink()]
    if not with_secrets:
        files = [f for f in files if f.name != SECRETS]
    left: list[LeftOut] = []
    pending = list(reversed(TOP_FOLDERS))
    while pending:
        folder = pending.pop()
        if (home / folder).is_symlink():
            left.append(LeftOut(folder, LINK))
            continue
        try:
            with os.scandir(home / folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:  # no such folder (yet), or it is a file
            continue
        subfolders = []
        for entry in entries:
            name = f"{folder}/{entry.name}"
            is_folder = entry.is_dir(follow_symlinks=False)
            problem = name_problem(name, folder=is_folder)
            if entry.is_symlink():
                left.append(LeftOut(name, LINK))
            elif problem is not None:
                left.append(LeftOut(name, problem))
            elif is_folder:
                subfolders.append(name)
            elif entry.is_file(follow_symlinks=False):
                files.append(HomeFile(name, Path(entry.path)))
            else:
                left.append(LeftOut(name, "not a regular file (a socket, a pipe or a device)"))
        pending.extend(reversed(subfolders))
    return files, left
