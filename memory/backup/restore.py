"""`kioku restore`: a backup becomes the home, or nothing of the home changes.

The archive is unpacked and checked in full (every hash, state.db's integrity) into a
private folder beside the home; only then does that folder take the home's name, by
rename. A current home is first renamed aside to `<home>.before-restore-<time>`, never
deleted. Any failure before the renames (a damaged archive, a full disk) removes the
unpacked folder and leaves the home as it was. An older backup is restored as it is;
the store upgrades it on the next start. A newer one is refused: this kioku cannot read it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memory.backup.archive import NO_SPACE
from memory.backup.cleanup import remove_tree
from memory.backup.database_check import check_database
from memory.backup.errors import BackupError
from memory.backup.manifest import DATABASE, TOP_FILES, TOP_FOLDERS, Manifest
from memory.backup.progress import Progress, no_progress
from memory.backup.rotation import STAMP
from memory.backup.unpack import read_manifest, unpack
from memory.store.schema import SCHEMA_VERSION
from plumbing.files import fsync_directory


@dataclass(frozen=True)
class Restored:
    """The home restored, the folder the previous home was moved to (if any), and the
    backup's manifest."""

    home: Path
    moved_aside: Path | None
    manifest: Manifest


def restore_backup(
    archive: Path,
    home: Path,
    *,
    replace: bool = False,
    guard: Callable[[], None] = lambda: None,
    progress: Progress = no_progress,
    now: datetime | None = None,
) -> Restored:
    """Make `home` the backup in `archive`. A home that exists and holds anything is
    replaced only with `replace`. `guard` runs just before the renames and may raise to
    stop them (the daemon started meanwhile)."""
    check_home(home)
    manifest = read_manifest(archive)
    if manifest.schema_version > SCHEMA_VERSION:
        raise BackupError(
            f"{archive} holds a schema v{manifest.schema_version} database, newer than this "
            f"kioku knows (v{SCHEMA_VERSION}; the backup is of kioku {manifest.kioku_version}): "
            "upgrade kioku, then restore it"
        )
    occupied = _occupied(home, replace)
    try:
        home.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=home.parent, prefix=f".{home.name}.restoring-"))
    except OSError as exc:
        raise BackupError(
            f"cannot write beside {home}: {exc.strerror}; nothing was changed"
        ) from None
    try:
        try:
            unpack(archive, staging, progress=progress)
        except OSError as exc:
            raise _unpack_error(exc, home) from None
        check_database(staging / DATABASE, manifest.schema_version, manifest.counts)
        guard()
        aside = _swap(staging, home, occupied, now or datetime.now(UTC))
    except BaseException:
        remove_tree(staging)
        raise
    return Restored(home, aside, manifest)


def check_home(home: Path) -> None:
    """`BackupError` unless `home` is a folder or can be made one: it, or the nearest of its
    parents that exists, must be a folder (not a file, not a link to one)."""
    for path in (home, *home.parents):
        if path.is_symlink() or path.exists():
            if not path.is_dir():
                raise BackupError(
                    f"{path} is not a folder: restore into a folder (--home DIR), "
                    "an empty or new one"
                )
            return


def _occupied(home: Path, replace: bool) -> bool:
    """Whether `home` exists with something in it; `BackupError` if it may not be replaced."""
    if not home.exists():
        return False
    if not home.is_dir() or home.is_symlink():
        raise BackupError(f"{home} is not a folder: restore into a folder (--home DIR)")
    entries = {entry.name for entry in home.iterdir()}
    if not entries:
        return False
    if not replace:
        raise BackupError(
            f"{home} is not empty: restore into an empty or new folder (--home DIR), or "
            f"pass --yes to replace it (it is moved aside to {home}.before-restore-<time>)"
        )
    if not entries & {*TOP_FILES, *TOP_FOLDERS}:
        raise BackupError(
            f"{home} does not look like a kioku home (no state.db, config.toml, people/ or "
            "skills/): refusing to move it aside; pick the home with --home DIR"
        )
    return True


def _swap(staging: Path, home: Path, occupied: bool, now: datetime) -> Path | None:
    """Rename the unpacked folder into place; the current home, if any, aside first."""
    aside = None
    if occupied:
        aside = home.with_name(f"{home.name}.before-restore-{now.strftime(STAMP)}")
        if aside.exists():
            raise BackupError(f"{aside} already exists: move it away, then restore again")
        os.rename(home, aside)
    elif home.exists():
        home.rmdir()
    try:
        os.rename(staging, home)
    except OSError:
        if aside is not None:
            os.rename(aside, home)
        raise
    fsync_directory(home.parent)
    return aside


def _unpack_error(exc: OSError, home: Path) -> BackupError:
    if exc.errno in NO_SPACE:
        return BackupError(
            f"the disk holding {home.parent} is full (or a file-size limit was hit) while "
            f"unpacking ({exc.strerror}): free some space there and restore again; "
            f"{home} was not changed"
        )
    return BackupError(f"cannot unpack beside {home}: {exc}; {home} was not changed")
