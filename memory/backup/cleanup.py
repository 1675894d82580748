"""Removing a private working folder (a backup's staging, a restore's unpacked home, a
verify's scratch copy), however deep it is.

`shutil.rmtree` recurses, one Python frame per level (CPython 3.11), so a tree deeper
than the recursion limit stops it with `RecursionError` and leaves the folder behind.
This walks with a list instead, and by folder descriptors (`openat`, `unlinkat`), so
neither the recursion limit, nor PATH_MAX, nor the open-file limit stops it; links are
removed, never followed.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(root: Path) -> None:
    """Delete `root` and everything below it; best effort, as cleanup after a failure:
    an error (a file that cannot be deleted) leaves that part and is not raised."""
    with contextlib.suppress(OSError):
        _remove(root)


def _remove(root: Path) -> None:
    fd = os.open(root, FOLDER)
    # The folders descended into, each with its subfolders still to delete: one
    # descriptor is open at a time, and ".." leads back up.
    above: list[tuple[str, list[str]]] = []
    pending = _clear(fd)
    try:
        while True:
            if pending:
                name = pending.pop()
                child = os.open(name, FOLDER, dir_fd=fd)
                os.close(fd)
                fd = child
                above.append((name, pending))
                pending = _clear(fd)
                continue
            if not above:
                break
            name, pending = above.pop()
            parent = os.open("..", FOLDER, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(root)


def _clear(fd: int) -> list[str]:
    """Delete every non-folder in the folder open at `fd`; the names of its subfolders."""
    folders = []
    with os.scandir(fd) as listing:
        entries = list(listing)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            folders.append(entry.name)
        else:
            os.unlink(entry.name, dir_fd=fd)
    return folders
