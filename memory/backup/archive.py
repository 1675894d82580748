"""Writing a backup: the home as one private `.tar.gz`, its manifest first.

Every file is first copied (and hashed) into a private staging folder beside the
archive, state.db through `snapshot.copy_database`, so the archive holds exactly what
the manifest describes even while the daemon writes notes meanwhile. The archive is
created 0600 under a temporary name and takes its final name only once complete and
on disk: an interrupted backup (a full disk, a shutdown) leaves no archive that looks whole.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from memory.backup.cleanup import remove_tree
from memory.backup.contents import LeftOut, home_files
from memory.backup.errors import BackupCancelled, BackupError
from memory.backup.manifest import (
    DATABASE,
    MANIFEST_NAME,
    TOP_FOLDERS,
    FileEntry,
    Manifest,
    kioku_version,
)
from memory.backup.progress import Progress, Stopping, never_stop, no_progress
from memory.backup.rotation import archive_name
from memory.backup.snapshot import copy_database, count_rows
from plumbing.files import fsync_directory

CHUNK = 1024 * 1024
# gzip level 6: at 300k turns an archive of 0.22x state.db in 2.2 s, against level 1's
# 0.26x in 1.2 s (tests/bench/bench_backup.py builds such a home).
COMPRESSLEVEL = 6
NO_SPACE = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


@dataclass(frozen=True)
class Written:
    """A finished backup: where it is, what it holds, and what was left out (links, names
    a restore would refuse)."""

    path: Path
    manifest: Manifest
    skipped: list[LeftOut]


def write_backup(
    home: Path,
    folder: Path,
    *,
    with_secrets: bool = False,
    progress: Progress = no_progress,
    stopping: Stopping = never_stop,
    now: datetime | None = None,
) -> Written:
    """Back up `home` into a new archive in `folder` (created 0700 if missing)."""
    database = home / DATABASE
    if not database.is_file():
        raise BackupError(f"nothing to back up: {home} holds no state.db (has kioku run there?)")
    inside = [
        name for name in TOP_FOLDERS if folder.resolve().is_relative_to(home.resolve() / name)
    ]
    if inside:
        raise BackupError(
            f"{folder} is inside the home's {inside[0]}/ folder, which is backed up itself: "
            "pick a folder outside it (--to DIR)"
        )
    created = now or datetime.now(UTC)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=".kioku-backup-", suffix=".staging"))
    except OSError as exc:
        raise BackupError(f"cannot write into {folder}: {exc.strerror}") from None
    try:
        manifest, skipped = _stage(home, staging, with_secrets, created, progress, stopping)
        path = _pack(staging, manifest, folder, archive_name(created), progress, stopping)
    except OSError as exc:
        raise _written_error(exc, folder) from None
    finally:
        remove_tree(staging)
    return Written(path, manifest, skipped)


def _stage(
    home: Path,
    staging: Path,
    with_secrets: bool,
    created: datetime,
    progress: Progress,
    stopping: Stopping,
) -> tuple[Manifest, list[LeftOut]]:
    """Copy the home's files into `staging`; the manifest describing the copies."""
    version = copy_database(home / DATABASE, staging / DATABASE, progress, stopping)
    counts = count_rows(staging / DATABASE)
    entries = [_hashed(DATABASE, staging / DATABASE)]
    files, skipped = home_files(home, with_secrets)
    for done, file in enumerate(files, 1):
        if stopping():
            raise BackupCancelled("the backup was stopped before it was finished")
        entry = _copy(file.path, staging / file.name, file.name)
        if entry is not None:
            entries.append(entry)
        progress("files", done, len(files))
    manifest = Manifest(
        kioku_version=kioku_version(),
        schema_version=version,
        created_at=created.isoformat(),
        counts=counts,
        files=tuple(entries),
        with_secrets=with_secrets,
    )
    return manifest, skipped


def _copy(source: Path, target: Path, name: str) -> FileEntry | None:
    """Copy one file, hashing as it goes; None if it was deleted meanwhile."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    try:
        reader = source.open("rb")
    except FileNotFoundError:
        return None
    with reader, _private(target) as writer:
        while chunk := reader.read(CHUNK):
            digest.update(chunk)
            writer.write(chunk)
            size += len(chunk)
    return FileEntry(name, size, digest.hexdigest())


def _hashed(name: str, path: Path) -> FileEntry:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as reader:
        while chunk := reader.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return FileEntry(name, size, digest.hexdigest())


def _pack(
    staging: Path,
    manifest: Manifest,
    folder: Path,
    name: str,
    progress: Progress,
    stopping: Stopping,
) -> Path:
    """Write the archive under a temporary name, sync it, then give it its final name."""
    partial = folder / f".{name}.partial"
    total = sum(entry.size for entry in manifest.files)
    try:
        with _private(partial) as raw:
            with tarfile.open(fileobj=raw, mode="w:gz", compresslevel=COMPRESSLEVEL) as tar:
                _add(tar, MANIFEST_NAME, manifest.to_bytes())
                done = 0
                for entry in manifest.files:
                    with (staging / entry.name).open("rb") as reader:
                        tar.addfile(_info(entry.name, entry.size), _Stoppable(reader, stopping))
                    done += entry.size
                    progress("archive", done, total)
            raw.flush()
            os.fsync(raw.fileno())
        final = _link_free_name(partial, folder, name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    fsync_directory(folder)
    return final


def _link_free_name(partial: Path, folder: Path, name: str) -> Path:
    """Give the archive `name`, or `name` with -2, -3, ... if taken (never overwrites)."""
    stem = name.removesuffix(".tar.gz")
    for number in range(1, 1000):
        final = folder / (name if number == 1 else f"{stem}-{number}.tar.gz")
        try:
            os.link(partial, final)
        except FileExistsError:
            continue
        return final
    raise BackupError(f"{folder} already holds a thousand backups named {stem}*")


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    tar.addfile(_info(name, len(data)), io.BytesIO(data))


def _info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode = size, 0o600
    info.mtime = int(datetime.now(UTC).timestamp())
    return info


class _Stoppable:
    """A reader handed to tarfile that stops the copy when the caller asks."""

    def __init__(self, reader: IO[bytes], stopping: Stopping) -> None:
        self.reader = reader
        self.stopping = stopping

    def read(self, size: int = -1) -> bytes:
        if self.stopping():
            raise BackupCancelled("the backup was stopped before it was finished")
        return self.reader.read(size)


def _private(path: Path) -> IO[bytes]:
    """A new file at `path`, mode 0600 from its creation on (never readable by others)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    return os.fdopen(fd, "wb")


def _written_error(exc: OSError, folder: Path) -> BackupError:
    if exc.errno in NO_SPACE:
        return BackupError(
            f"the disk holding {folder} is full (or a file-size limit was hit): "
            "free some space there, or back up elsewhere with --to DIR; no backup was kept"
        )
    return BackupError(f"cannot write the backup into {folder}: {exc}; no backup was kept")
