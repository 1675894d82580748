"""`kioku backup verify`: is this archive whole, untouched, and its database sound?"""

from __future__ import annotations

import tempfile
from pathlib import Path

from memory.backup.cleanup import remove_tree
from memory.backup.database_check import check_database
from memory.backup.errors import BackupError
from memory.backup.manifest import DATABASE, Manifest
from memory.backup.progress import Progress, no_progress
from memory.backup.unpack import unpack


def verify_backup(
    archive: Path, scratch: Path | None = None, progress: Progress = no_progress
) -> Manifest:
    """Check the manifest, every member's size and hash, that nothing is missing or extra,
    and state.db's integrity (copied into a private folder under `scratch`, default the
    system's temp folder, then deleted). `BackupError` says the first problem found."""
    try:
        work = Path(tempfile.mkdtemp(prefix="kioku-verify-", dir=scratch))
    except OSError as exc:
        raise BackupError(
            f"cannot make a scratch folder in {scratch or tempfile.gettempdir()} "
            f"({exc.strerror}): set TMPDIR to a folder you can write to"
        ) from None
    try:
        try:
            manifest = unpack(archive, work, only={DATABASE}, progress=progress)
        except OSError as exc:
            raise BackupError(
                f"cannot check the database: writing its copy into {work.parent} failed "
                f"({exc.strerror}); free some space there or set TMPDIR to a roomier folder"
            ) from None
        check_database(work / DATABASE, manifest.schema_version, manifest.counts)
    finally:
        remove_tree(work)
    return manifest
