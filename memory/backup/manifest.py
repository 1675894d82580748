"""The manifest: the first member of every backup, saying what it holds and what made it.

Restore trusts nothing in an archive that the manifest does not name with its size and
sha256, and refuses a name that could land outside the home (`../x`, `/etc/x`), so a
tampered or hand-made archive cannot write anywhere it should not. The manifest is read
within limits (its size, its nesting) and so is every name (its depth and length): a
hand-made archive meets a clear refusal, never a parser's recursion or the file system's
"name too long" halfway through a restore.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from importlib import metadata
from pathlib import PurePosixPath
from typing import Any

from inputs.limits import InputRefused, loads
from memory.backup.errors import BackupError

MANIFEST_NAME = "manifest.json"
FORMAT = 1
# The manifest of a home with a million files stays far below this.
MANIFEST_MAX_BYTES = 64 * 1024 * 1024
# A manifest nests three levels (the object, its files, each entry).
MANIFEST_MAX_DEPTH = 8
# Folders a name may nest (people/<person>/skills/<skill>/ is four): deeper trees are left
# out of a backup and refused in an archive, so no restore builds one that a recursive
# walk or removal cannot handle.
MAX_DEPTH = 32
# A name's length in UTF-8 bytes, and each of its parts' (the file system's NAME_MAX);
# with the home's own path it stays far below PATH_MAX (4,096).
MAX_NAME_BYTES = 1024
MAX_PART_BYTES = 255
DATABASE = "state.db"
SECRETS = ".env"
# What a home's backup may hold: these files, and the files under these folders.
TOP_FILES = (DATABASE, "config.toml", SECRETS)
TOP_FOLDERS = ("people", "skills", "groups")


@dataclass(frozen=True)
class FileEntry:
    """One member: its path inside the home (POSIX, relative), size and sha256 (hex)."""

    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Counts:
    """What state.db held when it was copied."""

    persons: int
    sessions: int
    turns: int


@dataclass(frozen=True)
class Manifest:
    """What a backup says about itself."""

    kioku_version: str
    schema_version: int
    created_at: str  # ISO 8601, UTC
    counts: Counts
    files: tuple[FileEntry, ...]
    with_secrets: bool

    def to_bytes(self) -> bytes:
        data = {"format": FORMAT, **asdict(self)}
        return json.dumps(data, indent=1, ensure_ascii=False).encode() + b"\n"

    def by_name(self) -> dict[str, FileEntry]:
        return {entry.name: entry for entry in self.files}


def kioku_version() -> str:
    """The installed kioku's version (the package metadata)."""
    try:
        return metadata.version("kioku")
    except metadata.PackageNotFoundError:
        return "unknown"


def check_name(name: str, folder: bool = False) -> str:
    """`name` if it is a path this kioku keeps inside a home (`folder`: a folder's);
    else `BackupError`."""
    problem = name_problem(name, folder)
    if problem is not None:
        raise BackupError(f"the archive holds {name[:200]!r}, {problem}: refused")
    return name


def name_problem(name: str, folder: bool = False) -> str | None:
    """Why `name` cannot be a file (`folder`: a folder) of a home in a backup, or None:
    the same rule for what a backup leaves out and what a restore refuses."""
    try:
        size = len(name.encode())
    except UnicodeEncodeError:
        return "a name that is not UTF-8"
    if size > MAX_NAME_BYTES:
        return f"a name of {size} bytes (at most {MAX_NAME_BYTES})"
    path = PurePosixPath(name)
    parts = path.parts
    if (
        not parts
        or path.is_absolute()
        or "\\" in name
        or "\0" in name
        or str(path) != name
        or any(part in ("", ".", "..") for part in parts)
    ):
        return "a name that could point outside the home"
    if len(parts) > MAX_DEPTH:
        return f"{len(parts) - 1} folders deep (at most {MAX_DEPTH - 1})"
    if any(len(part.encode()) > MAX_PART_BYTES for part in parts):
        return f"a part of its name over {MAX_PART_BYTES} bytes"
    top = TOP_FOLDERS if folder else TOP_FILES
    if not (name in top or (len(parts) > 1 and parts[0] in TOP_FOLDERS)):
        return "which is no part of a kioku home"
    return None


def parse(raw: bytes) -> Manifest:
    """The manifest in `raw`, checked; `BackupError` saying what is wrong with it."""
    try:
        data = loads(raw, what="the archive's manifest", max_depth=MANIFEST_MAX_DEPTH)
        if data.pop("format") != FORMAT:
            raise BackupError(
                f"the archive's manifest is in format {data.get('format')!r}, which this "
                f"kioku does not read (it reads format {FORMAT}): upgrade kioku"
            )
        files = tuple(FileEntry(**entry) for entry in data.pop("files"))
        manifest = Manifest(counts=Counts(**data.pop("counts")), files=files, **data)
        _check_types(manifest)
        datetime.fromisoformat(manifest.created_at)
    except BackupError:
        raise
    except InputRefused as exc:
        raise BackupError(f"{exc}: this is no kioku backup, or it was changed") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise BackupError(
            f"the archive's manifest is damaged ({type(exc).__name__}: {exc}): "
            "this is no kioku backup, or it was changed"
        ) from None
    names = [check_name(entry.name) for entry in manifest.files]
    if len(set(names)) != len(names):
        raise BackupError("the archive's manifest names a file twice: it was changed")
    if DATABASE not in names:
        raise BackupError("the archive's manifest names no state.db: this is no kioku backup")
    if SECRETS in names and not manifest.with_secrets:
        raise BackupError(
            "the archive's manifest says it was made without secrets, yet it lists .env: "
            "it was changed"
        )
    return manifest


def _check_types(manifest: Manifest) -> None:
    expected: dict[str, Any] = {
        "kioku_version": str,
        "schema_version": int,
        "created_at": str,
        "with_secrets": bool,
    }
    for field, kind in expected.items():
        value = getattr(manifest, field)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"{field} is not a {kind.__name__}")
    for count in asdict(manifest.counts).values():
        if not _natural(count):
            raise TypeError("a count is not a number")
    for entry in manifest.files:
        if not (
            isinstance(entry.name, str)
            and _natural(entry.size)
            and isinstance(entry.sha256, str)
            and len(entry.sha256) == 64
        ):
            raise TypeError(f"the entry for {entry.name!r} is malformed")


def _natural(value: object) -> bool:
    """A count or a size: an int of at least 0 (JSON's `true` is no number here)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
