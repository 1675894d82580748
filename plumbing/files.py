"""Files that survive a crash: atomic replacement and folder fsync.

Notes, skills, skill proposals and usage counts, the service's unit file, the
setup wizard's config.toml and .env and the settings' validation note are all
written the same way: a temp file in the same folder is fsynced and renamed over the
old file, then the folder is fsynced so the rename itself is on disk. A crash at any
point leaves either the old file or the new one, never a mix. Everything here blocks
(in the daemon it runs in `asyncio.to_thread`); it sits below every layer so that all
of them write files this one way.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

PRIVATE = 0o600


def atomic_write(path: Path, data: bytes, mode: int = PRIVATE) -> None:
    """Replace `path` with `data` (permissions `mode`): temp file, fsync, rename, fsync folder."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make the folder's entries (a rename, a new or removed file) durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
