"""Reading a backup member by member, trusting nothing the manifest does not vouch for.

One pass over the archive (memory.backup.gzip_stream, memory.backup.tar_stream: kioku's
own bounded readers, whatever the interpreter's `tarfile`): the manifest must come
first; then every member must be a regular file (or a folder) that the manifest names,
once, with its size and sha256. Links, devices, sparse files, names outside the home
or too deep, and extra members are refused, and files the manifest lists but the
archive lacks are reported. A member's size is checked against the manifest before a
byte of it is written, and the manifest's total against the free space, so an archive
can never write more than it declares, nor more than there is room for. Files are
written only below the folder given, each created new (0600, never through an existing
link).
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from pathlib import Path
from typing import IO

from memory.backup.errors import BackupError
from memory.backup.gzip_stream import CHUNK, GzipStream
from memory.backup.manifest import MANIFEST_MAX_BYTES, MANIFEST_NAME, Manifest, check_name, parse
from memory.backup.progress import Progress, no_progress
from memory.backup.tar_stream import FILE, FOLDER, Member, TarStream


def read_manifest(archive: Path) -> Manifest:
    """The archive's manifest alone (its first member), checked."""
    with _opened(archive) as tar:
        return _manifest(tar, archive)


def unpack(
    archive: Path,
    into: Path | None,
    only: set[str] | None = None,
    progress: Progress = no_progress,
) -> Manifest:
    """Check every member of `archive` against its manifest, writing the files (or those
    named in `only`) below `into`; `BackupError` at the first thing wrong. An `OSError`
    while writing (a full disk; ENOSPC before anything is written when the files listed
    need more than is free) propagates for the caller to explain."""
    with _opened(archive) as tar:
        manifest = _manifest(tar, archive)
        expected = manifest.by_name()
        if into is not None:
            _check_room(manifest, into, only)
        total = sum(entry.size for entry in manifest.files)
        seen: set[str] = set()
        done = 0
        while (member := tar.next()) is not None:
            name = _member_name(member)
            if member.kind == FOLDER:
                continue
            entry = expected.get(name)
            if entry is None:
                raise BackupError(f"the archive holds {name}, which its manifest does not list")
            if name in seen:
                raise BackupError(f"the archive holds {name} twice: it was changed")
            seen.add(name)
            if member.size != entry.size:
                raise BackupError(
                    f"{name} in the archive does not match its manifest ({member.size} "
                    f"bytes; listed: {entry.size}): the archive was changed or damaged"
                )
            keep = into is not None and (only is None or name in only)
            digest = _copy(tar, _private_path(into, name) if keep and into else None)
            if digest != entry.sha256:
                raise BackupError(
                    f"{name} in the archive does not match its manifest (sha256 {digest[:12]}…; "
                    f"listed: {entry.sha256[:12]}…): the archive was changed or damaged"
                )
            done += entry.size
            progress("verify", done, total)
    missing = sorted(set(expected) - seen)
    if missing:
        raise BackupError(
            f"the archive lacks {len(missing)} file(s) its manifest lists "
            f"({', '.join(missing[:5])}): it is incomplete"
        )
    return manifest


class _opened:
    """The archive as a stream of tar members; a clear error if it cannot be opened."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive

    def __enter__(self) -> TarStream:
        try:
            self.raw = self.archive.open("rb")
        except FileNotFoundError:
            raise BackupError(f"{self.archive} does not exist") from None
        except IsADirectoryError:
            raise BackupError(f"{self.archive} is a folder, not a backup archive") from None
        except PermissionError:
            raise BackupError(f"{self.archive} cannot be read: permission denied") from None
        return TarStream(GzipStream(self.raw, self.archive))

    def __exit__(self, *exc: object) -> None:
        self.raw.close()


def _manifest(tar: TarStream, archive: Path) -> Manifest:
    first = tar.next()
    if first is None or first.name != MANIFEST_NAME or first.kind != FILE:
        raise BackupError(f"{archive} does not start with a kioku manifest: it is no kioku backup")
    if first.size > MANIFEST_MAX_BYTES:
        raise BackupError(
            f"{archive}'s manifest is {first.size} bytes, implausibly large (at most "
            f"{MANIFEST_MAX_BYTES}): refused"
        )
    return parse(tar.read(first.size))


def _check_room(manifest: Manifest, into: Path, only: set[str] | None) -> None:
    """ENOSPC, before anything is written, when the files to write need more than is free."""
    need = sum(e.size for e in manifest.files if only is None or e.name in only)
    free = shutil.disk_usage(into).free
    if need > free:
        raise OSError(
            errno.ENOSPC,
            f"the archive's files take {need:,} bytes, {free:,} are free in {into}",
        )


def _member_name(member: Member) -> str:
    if member.kind == FOLDER:
        return check_name(member.name.rstrip("/"), folder=True)
    if member.kind != FILE:
        raise BackupError(f"the archive holds {member.name[:200]!r}, {member.kind}: refused")
    return check_name(member.name)


def _copy(tar: TarStream, target: Path | None) -> str:
    """The sha256 of the current member's data, written to `target` if given."""
    digest = hashlib.sha256()
    writer = _create(target) if target is not None else None
    try:
        while chunk := tar.read(CHUNK):
            digest.update(chunk)
            if writer is not None:
                writer.write(chunk)
        if writer is not None:
            writer.flush()
            os.fsync(writer.fileno())
    finally:
        if writer is not None:
            writer.close()
    return digest.hexdigest()


def _private_path(root: Path, name: str) -> Path:
    """`root / name`, its missing folders created 0700 (`mkdir(parents=True)` would
    give the parents the umask's mode)."""
    folder = root
    for part in name.split("/")[:-1]:
        folder = folder / part
        if not folder.is_dir():
            folder.mkdir(mode=0o700)
    return root / name


def _create(target: Path) -> IO[bytes]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.fdopen(os.open(target, flags, 0o600), "wb")
