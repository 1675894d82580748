"""Kept files on disk: where each owner's lie, writing one safely, removing them.

Everything here blocks and is meant for `asyncio.to_thread`. A file is written
private (0600, in folders 0700) to a temp file that is fsynced and renamed, so a
crash leaves either no file or the whole one; never executable, whatever its name.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from config.loggers import get_logger
from memory.access.people import InvalidPersonId, person_dir
from memory.media.names import group_folder, safe_name
from memory.media.records import GROUP_OWNER, NewMedia, StoredMedia
from plumbing.files import atomic_write

log = get_logger("kioku.media")
FOLDER = "media"
GROUPS = "groups"
PRIVATE_FOLDER = 0o700
TOKEN_BYTES = 4


class OutsideHome(ValueError):
    """A media row whose path leads out of its owner's place in `$KIOKU_HOME` (edited by
    hand, or a symlink): kioku neither serves nor removes what it points at."""


def owner_folder(home: Path, owner: str) -> Path:
    """`people/<person>/media` or `groups/<folder>/media` (not created here)."""
    if owner.startswith(GROUP_OWNER):
        return home / GROUPS / group_folder(owner) / FOLDER
    return person_dir(home, owner) / FOLDER


def write_file(home: Path, owner: str, name: str, mime: str, data: bytes, now: datetime) -> str:
    """Keep `data` in the owner's media folder; returns its path relative to `home`."""
    folder = owner_folder(home, owner)
    _private_folders(home, folder)
    stamp = now.strftime("%Y%m%d-%H%M%S")
    safe = safe_name(name, mime)
    while (target := folder / f"{stamp}-{secrets.token_hex(TOKEN_BYTES)}-{safe}").exists():
        continue
    atomic_write(target, data)
    return target.relative_to(home).as_posix()


def write_files(home: Path, owner: str, files: Sequence[NewMedia], now: datetime) -> list[str]:
    """Keep each of `files` (`write_file`); if one fails, those already written go too."""
    written: list[str] = []
    try:
        for item in files:
            written.append(write_file(home, owner, item.name, item.mime, item.data, now))
    except BaseException:
        unlink_written(home, written)
        raise
    return written


def unlink_written(home: Path, paths: list[str]) -> None:
    """Take back files just written, whose rows could not be stored."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            (home / path).unlink()


def media_path(home: Path, item: StoredMedia) -> Path:
    """The kept file of `item`, resolved; `OutsideHome` if that is not inside the owner's
    media folder under `home` (a path edited by hand, a symlink planted)."""
    try:
        root = owner_folder(home, item.owner).resolve()
    except InvalidPersonId as exc:
        raise OutsideHome(
            f"media {item.id} has the owner {item.owner!r}, which names no folder: {exc}"
        ) from None
    path = (home / item.path).resolve()
    if not path.is_relative_to(root) or path == root:
        raise OutsideHome(
            f"media {item.id} names {item.path!r}, which is not inside {root}: "
            "it is neither served nor removed"
        )
    return path


def remove_files(home: Path, items: list[StoredMedia]) -> int:
    """Delete the files of rows already deleted; returns how many were removed. A file
    already gone is fine; any other failure is logged and the rest still go."""
    removed = 0
    for item in items:
        try:
            media_path(home, item).unlink()
            removed += 1
        except FileNotFoundError:
            continue
        except (OSError, OutsideHome) as exc:
            log.error("media_file_not_removed", media=item.id, path=item.path, error=str(exc))
    return removed


def _private_folders(home: Path, folder: Path) -> None:
    """Create `folder` and the folders between it and `home`, each 0700."""
    missing = []
    for parent in (folder, *folder.parents):
        if parent == home or parent.exists():
            break
        missing.append(parent)
    for parent in reversed(missing):
        with contextlib.suppress(FileExistsError):
            parent.mkdir(mode=PRIVATE_FOLDER)
    if not missing and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is not a folder, so no media can be kept in it")
