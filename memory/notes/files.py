"""Blocking file work for notes: read, lock, back up and replace atomically.

Everything here but `locked_across_awaits` blocks and is meant to run in
`asyncio.to_thread`. A write replaces the file atomically (`plumbing.files.atomic_write`),
so a crash at any point leaves either the old file or the new one. The lock is an flock
on a hidden sibling file, so the daemon, the CLI and any other process serialise their
read-modify-write cycles (and the journal entry each one makes) on the same notes file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from inputs.limits import InputRefused
from inputs.text import decode_text
from memory.notes.format import (
    FILE_NAMES,
    TARGETS,
    Target,
    is_canonical,
    parse_entries,
    serialise_entries,
)
from plumbing.files import atomic_write, fsync_directory

LOCK_TIMEOUT = 30.0
MAX_FILE_BYTES = 1_048_576
"""A notes file read from disk: ten times the largest limit a setting allows (100,000 chars)."""


class NotesFileError(Exception):
    """A notes file cannot be read, locked or written; `str()` says which and what to do."""


@dataclass(frozen=True)
class RawNotes:
    """A notes file as found: its exact bytes (for backups) and the entries read from them."""

    path: Path
    data: bytes
    text: str
    entries: tuple[str, ...]

    @property
    def canonical(self) -> bool:
        return is_canonical(self.text)


def notes_path(directory: Path, target: Target) -> Path:
    return directory / FILE_NAMES[target]


def ensure_directory(directory: Path) -> None:
    """Create a person's folder, and `people/` above it, private to the owner (0700)."""
    try:
        directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise NotesFileError(f"cannot create {directory}: {exc.strerror}") from None


def read_notes(path: Path) -> RawNotes:
    """Read a notes file; a missing file is an empty one. One edited by hand into something
    that is no notes file (over `MAX_FILE_BYTES`, not UTF-8 text) is refused."""
    fix = f"save it as UTF-8 text or restore a {path.name}.bak.* backup, then retry"
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return RawNotes(path, b"", "", ())
    except OSError as exc:
        raise NotesFileError(f"{path} cannot be read: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise NotesFileError(
            f"{path} is over {MAX_FILE_BYTES:,} bytes, far more than notes hold; cut it down "
            f"or restore a {path.name}.bak.* backup, then retry"
        )
    try:
        text = decode_text(data, str(path), fix, allow_nul=True).removeprefix("\ufeff")
    except InputRefused as exc:
        raise NotesFileError(str(exc)) from None
    return RawNotes(path, data, text, tuple(parse_entries(text)))


@contextlib.asynccontextmanager
async def locked_across_awaits(directory: Path, targets: Iterable[Target]) -> AsyncIterator[None]:
    """Hold the cross-process locks of `targets` while the caller awaits (a write, then its
    journal entry), always taken in the same order (no deadlock).

    They are taken and released in worker threads, so they are not tied to one thread;
    a task cancelled while the locks are being taken releases them once they are held.
    """
    taking = asyncio.ensure_future(asyncio.to_thread(take_locks, directory, tuple(targets)))
    try:
        stack = await asyncio.shield(taking)
    except asyncio.CancelledError:
        taking.add_done_callback(_release_when_taken)
        raise
    try:
        yield
    finally:
        await asyncio.to_thread(stack.close)


def _release_when_taken(taking: asyncio.Future[contextlib.ExitStack]) -> None:
    if not taking.cancelled() and taking.exception() is None:
        taking.result().close()


def take_locks(directory: Path, targets: Iterable[Target]) -> contextlib.ExitStack:
    """Take the locks of `targets` in `TARGETS` order; closing the stack releases them.
    filelock is imported here, by writers only: reading notes (`kioku memory show`) takes no
    lock, and filelock's import costs about half a bare interpreter start."""
    from filelock import FileLock, Timeout

    wanted = set(targets)
    with contextlib.ExitStack() as stack:
        for target in TARGETS:
            if target in wanted:
                lock_path = directory / f".{FILE_NAMES[target]}.lock"
                lock = FileLock(lock_path, timeout=LOCK_TIMEOUT, mode=0o600, thread_local=False)
                try:
                    stack.enter_context(lock)
                except Timeout:
                    raise NotesFileError(
                        f"{notes_path(directory, target)} stayed locked by another process for "
                        f"{LOCK_TIMEOUT:.0f} s; retry, or look for a stuck kioku process"
                    ) from None
                except OSError as exc:
                    raise NotesFileError(f"cannot lock {lock_path}: {exc.strerror}") from None
        return stack.pop_all()


def write_entries(path: Path, entries: tuple[str, ...]) -> None:
    """Replace the notes file with the canonical text of `entries`, atomically."""
    try:
        atomic_write(path, serialise_entries(entries).encode("utf-8"))
    except OSError as exc:
        raise NotesFileError(f"cannot write {path}: {exc.strerror}") from None


def restore(raw: RawNotes, failure: str) -> None:
    """Put back the exact bytes read: undo the first write of a batch whose second one failed."""
    try:
        atomic_write(raw.path, raw.data)
    except OSError as exc:
        raise NotesFileError(
            f"{failure}; {raw.path} had already been rewritten and could not be put back "
            f"({exc.strerror}), so it holds the batch's new entries"
        ) from None


def backup(raw: RawNotes) -> Path:
    """Keep the exact bytes of a hand-edited file as `<name>.bak.<UTC time>` before a rewrite."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(1, 100):
        suffix = stamp if attempt == 1 else f"{stamp}-{attempt}"
        target = raw.path.with_name(f"{raw.path.name}.bak.{suffix}")
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            raise NotesFileError(f"cannot back up {raw.path}: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw.data)
                fh.flush()
                os.fsync(fh.fileno())
            fsync_directory(target.parent)
        except OSError as exc:
            raise NotesFileError(f"cannot back up {raw.path} to {target}: {exc.strerror}") from None
        return target
    raise NotesFileError(f"cannot back up {raw.path}: too many backups named {stamp}")
