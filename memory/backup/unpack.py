"""Reading a backup member by member, trusting nothing the manifest does not vouch for.

One pass over the gzip stream: the manifest must come first; then every member must be a
regular file (or a folder) that the manifest names, once, with its size and sha256.
Links, devices, names outside the home and extra members are refused, and files the
manifest lists but the archive lacks are reported. Files are written only below the
folder given, each created new (0600, never through an existing link).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tarfile
import zlib
from pathlib import Path
from typing import IO

from memory.backup.errors import BackupError
from memory.backup.manifest import MANIFEST_MAX_BYTES, MANIFEST_NAME, Manifest, check_name, parse
from memory.backup.progress import Progress, no_progress

CHUNK = 1024 * 1024
DAMAGED = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile)


def read_manifest(archive: Path) -> Manifest:
    """The archive's manifest alone (its first member), checked."""
    with _opened(archive) as tar:
        return _manifest(tar, archive)[0]


def unpack(
    archive: Path,
    into: Path | None,
    only: set[str] | None = None,
    progress: Progress = no_progress,
) -> Manifest:
    """Check every member of `archive` against its manifest, writing the files (or those
    named in `only`) below `into`; `BackupError` at the first thing wrong. An `OSError`
    while writing (a full disk) propagates for the caller to explain."""
    with _opened(archive) as tar:
        manifest, first = _manifest(tar, archive)
        expected = manifest.by_name()
        total = sum(entry.size for entry in manifest.files)
        seen: set[str] = set()
        done = 0
        try:
            for member in tar:
                if member is first:  # iterating a TarFile starts over from its first member
                    continue
                name = _member_name(member)
                if member.isdir():
                    continue
                entry = expected.get(name)
                if entry is None:
                    raise BackupError(f"the archive holds {name}, which its manifest does not list")
                if name in seen:
                    raise BackupError(f"the archive holds {name} twice: it was changed")
                seen.add(name)
                reader = tar.extractfile(member)
                assert reader is not None  # a regular file
                keep = into is not None and (only is None or name in only)
                size, digest = _copy(reader, _private_path(into, name) if keep and into else None)
                if size != entry.size or digest != entry.sha256:
                    raise BackupError(
                        f"{name} in the archive does not match its manifest ({size} bytes, "
                        f"sha256 {digest[:12]}…; listed: {entry.size} bytes, "
                        f"{entry.sha256[:12]}…): the archive was changed or damaged"
                    )
                done += size
                progress("verify", done, total)
        except DAMAGED as exc:
            raise _damaged(archive, exc) from None
    missing = sorted(set(expected) - seen)
    if missing:
        raise BackupError(
            f"the archive lacks {len(missing)} file(s) its manifest lists "
            f"({', '.join(missing[:5])}): it is incomplete"
        )
    return manifest


class _opened:
    """The archive as a gzip tar stream; a clear error if it is none."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive

    def __enter__(self) -> tarfile.TarFile:
        try:
            self.tar = tarfile.open(self.archive, mode="r|gz")
        except FileNotFoundError:
            raise BackupError(f"{self.archive} does not exist") from None
        except IsADirectoryError:
            raise BackupError(f"{self.archive} is a folder, not a backup archive") from None
        except PermissionError:
            raise BackupError(f"{self.archive} cannot be read: permission denied") from None
        except DAMAGED as exc:
            raise _damaged(self.archive, exc) from None
        return self.tar

    def __exit__(self, *exc: object) -> None:
        self.tar.close()


def _manifest(tar: tarfile.TarFile, archive: Path) -> tuple[Manifest, tarfile.TarInfo]:
    try:
        first = tar.next()
        if first is None or first.name != MANIFEST_NAME or not first.isfile():
            raise BackupError(
                f"{archive} does not start with a kioku manifest: it is no kioku backup"
            )
        if first.size > MANIFEST_MAX_BYTES:
            raise BackupError(f"{archive}'s manifest is implausibly large: refused")
        reader = tar.extractfile(first)
        assert reader is not None
        raw = reader.read()
    except DAMAGED as exc:
        raise _damaged(archive, exc) from None
    return parse(raw), first


def _member_name(member: tarfile.TarInfo) -> str:
    if not (member.isfile() or member.isdir()):
        kind = (
            "a symbolic link"
            if member.issym()
            else "a hard link"
            if member.islnk()
            else "a device or pipe"
        )
        raise BackupError(f"the archive holds {member.name!r}, {kind}: refused")
    if member.isdir():
        return check_name(member.name.rstrip("/"), folder=True)
    return check_name(member.name)


def _copy(reader: IO[bytes], target: Path | None) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    writer = _create(target) if target is not None else None
    try:
        while chunk := reader.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
            if writer is not None:
                writer.write(chunk)
        if writer is not None:
            writer.flush()
            os.fsync(writer.fileno())
    finally:
        if writer is not None:
            writer.close()
    return size, digest.hexdigest()


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


def _damaged(archive: Path, exc: BaseException) -> BackupError:
    return BackupError(
        f"{archive} is truncated or damaged ({exc or type(exc).__name__}): "
        "it cannot be read to the end; use another backup"
    )
