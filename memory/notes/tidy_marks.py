"""When a notes file was last tidied, and whether it is due again.

The mark lives beside the file (`people/<person>/.MEMORY.md.tidied`, a line of JSON), so
it survives restarts, goes with the person's folder into backups and out with `forget`,
and needs no table. It holds when the tidy ran and a digest of the entries it left: a
file a tidy has already seen exactly so is never sent to the model again, however full
it is, so a file that cannot be shortened costs one model call, not one per session.

A file is due when it holds `tidy_at` of its cap, or when `tidy_every` has passed since
its last tidy (or since the first look, for a file never tidied: its clock starts then).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memory.notes.format import FILE_NAMES, NotesState, Target, serialise_entries
from plumbing.files import atomic_write

Reason = Literal["full", "old"]


@dataclass(frozen=True)
class TidyMark:
    """`at`: unix seconds of the last tidy (or of the first look); `digest`: of the entries it
    left ("" when no tidy has run yet)."""

    at: float
    digest: str = ""


def digest(entries: tuple[str, ...]) -> str:
    return hashlib.sha256(serialise_entries(entries).encode("utf-8")).hexdigest()


def mark_path(directory: Path, target: Target) -> Path:
    return directory / f".{FILE_NAMES[target]}.tidied"


def read_mark(directory: Path, target: Target) -> TidyMark | None:
    """The file's mark; None if there is none or it is unreadable (a new clock is started)."""
    try:
        data = json.loads(mark_path(directory, target).read_text(encoding="utf-8"))
        return TidyMark(float(data["at"]), str(data.get("digest", "")))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def write_mark(directory: Path, target: Target, mark: TidyMark) -> None:
    """Replace the mark atomically (raises OSError; the caller logs it: a lost mark only
    means the file is looked at again)."""
    text = json.dumps({"at": mark.at, "digest": mark.digest}) + "\n"
    atomic_write(mark_path(directory, target), text.encode("utf-8"))


def due(
    state: NotesState, mark: TidyMark | None, tidy_at: float, every: float | None, now: float
) -> Reason | None:
    """Why `state` should be tidied now, or None. `every` None: no tidy by age."""
    if not state.entries or (mark is not None and mark.digest == digest(state.entries)):
        return None
    if state.chars >= tidy_at * state.limit:
        return "full"
    if every is not None and mark is not None and now - mark.at >= every:
        return "old"
    return None


def look(
    directory: Path, state: NotesState, tidy_at: float, every: float | None, now: float
) -> Reason | None:
    """`due`, with the file's mark read from disk; a file with entries and no mark gets one
    now, which starts its `tidy_every` clock (blocking: run it in a thread)."""
    mark = read_mark(directory, state.target)
    if mark is None and state.entries:
        write_mark(directory, state.target, TidyMark(now))
    return due(state, mark, tidy_at, every, now)
