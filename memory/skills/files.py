"""Blocking file work for skills: find, read, lock, and change skill folders atomically.

Everything here blocks and is meant for `asyncio.to_thread`. Two rules hold for every
path: nothing read or written may lie outside its skill folder (no `..`, no absolute
paths, no symlinks leading out), and a reader never sees a half-made skill — a new
skill is assembled in a hidden temp folder and renamed into place, a deleted one is
renamed away before it is removed, and single files are replaced by temp + fsync + rename.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from filelock import FileLock, Timeout

from inputs.limits import InputRefused
from inputs.text import decode_text
from memory.skills.format import SKILL_FILE, Scope, SkillDoc, SkillError, check_name, parse_skill
from plumbing.files import atomic_write, fsync_directory

LOCK_FILE = ".lock"
LOCK_TIMEOUT = 30.0
MAX_FILES = 200
STAGED, REPLACED, DELETED = "new-", "old-", "deleted-"
"""Hidden sibling folders a change goes through: `.<name>.new-*`, `.<name>.old-*`, ..."""
PARSED_CACHE = 4096
_PARSED: dict[tuple[str, str, int, int, int, int], SkillDoc | str] = {}


@dataclass(frozen=True)
class Skill:
    """A valid skill found on disk, and which of the two places it came from."""

    doc: SkillDoc
    scope: Scope
    folder: Path

    @property
    def name(self) -> str:
        return self.doc.name


@dataclass(frozen=True)
class SkillProblem:
    """A folder that looks like a skill but cannot be used; `reason` says how to fix it."""

    scope: Scope
    folder: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.folder}: {self.reason}"


def scan_root(root: Path, scope: Scope, max_chars: int) -> tuple[list[Skill], list[SkillProblem]]:
    """Every skill folder directly under `root`, sorted by name; the unusable ones as problems."""
    skills: list[Skill] = []
    problems: list[SkillProblem] = []
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
        if any(entry.name.startswith(".") and f".{REPLACED}" in entry.name for entry in entries):
            with root_lock(root):  # a replacement was cut short: recover before reading
                entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [SkillProblem(scope, root, f"cannot be read: {exc.strerror}")]
    except SkillError as exc:
        problems.append(SkillProblem(scope, root, str(exc)))
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        try:
            skills.append(load_skill(root, entry.name, scope, max_chars))
        except SkillError as exc:
            problems.append(SkillProblem(scope, root / entry.name, str(exc)))
    return skills, problems


def load_skill(root: Path, name: str, scope: Scope, max_chars: int) -> Skill:
    """The skill `root/name`, validated; `SkillError` says why it cannot be used."""
    try:
        check_name(name)
    except SkillError as exc:
        raise SkillError(f"the folder name is not a valid skill name. {exc}") from None
    folder = root / name
    if folder.is_symlink() and not _inside(folder, root):
        raise SkillError("is a symlink leading outside the skills folder; it is ignored")
    path = folder / SKILL_FILE
    if not path.is_file():
        if any(folder.glob(f"*/{SKILL_FILE}")):
            raise SkillError(
                "has no SKILL.md but holds skill folders: kioku keeps skills one level deep; "
                "bring nested skills in with `kioku skills import`"
            )
        raise SkillError("has no SKILL.md")
    if path.is_symlink() and not _inside(path, folder):
        raise SkillError("SKILL.md is a symlink leading outside the skill folder; it is ignored")
    return Skill(_parsed(path, name, max_chars), scope, folder)


def _parsed(path: Path, name: str, max_chars: int) -> SkillDoc:
    """Parse SKILL.md, or reuse the result for the same file version (same inode, mtime, size).

    The index is built at every session start; parsing and safety-scanning every skill
    each time would cost milliseconds per skill, while an unchanged file costs one stat.
    Writes replace files (a new inode) and editors change the mtime, so edits are seen.
    """
    try:
        stat = path.stat()
    except OSError as exc:
        raise SkillError(f"SKILL.md cannot be read: {exc.strerror}") from None
    key = (str(path), name, max_chars, stat.st_ino, stat.st_mtime_ns, stat.st_size)
    cached = _PARSED.get(key)
    if cached is None:
        try:
            cached = parse_skill(read_text(path, max_chars * 4), name, max_chars)
        except SkillError as exc:
            cached = str(exc)
        if len(_PARSED) >= PARSED_CACHE:
            _PARSED.clear()
        _PARSED[key] = cached
    if isinstance(cached, str):
        raise SkillError(cached)
    return cached


def read_text(path: Path, max_bytes: int) -> str:
    """A UTF-8 file of at most `max_bytes`, or `SkillError` saying why not."""
    return as_text(read_bytes(path, max_bytes), path.name)


def as_text(data: bytes, name: str) -> str:
    """The UTF-8 text of the file `name` (a BOM dropped), or `SkillError` naming the line.
    A NUL is for `parse_skill` to refuse: supporting files may hold one."""
    try:
        return decode_text(data, name, allow_nul=True).removeprefix("\ufeff")
    except InputRefused as exc:
        raise SkillError(str(exc)) from None


def read_bytes(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise SkillError(f"{path.name} is {size:,} bytes, over the {max_bytes:,} byte limit")
        return path.read_bytes()
    except OSError as exc:
        raise SkillError(f"{path.name} cannot be read: {exc.strerror}") from None


def list_files(folder: Path) -> list[str]:
    """The skill's files as relative paths, SKILL.md first; hidden files and links out left out."""
    found: list[str] = []
    for directory, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for file in sorted(files):
            path = Path(directory, file)
            if not file.startswith(".") and _inside(path, folder):
                found.append(path.relative_to(folder).as_posix())
        if len(found) >= MAX_FILES:
            break
    found.sort(key=lambda rel: (rel != SKILL_FILE, rel))
    return found[:MAX_FILES]


def supporting_file(folder: Path, relative: PurePosixPath) -> Path:
    """The existing supporting file `relative` inside `folder`, refused if it leads outside."""
    path = folder.joinpath(*relative.parts)
    if not _inside(path, folder):
        raise SkillError(f"{relative} leads outside the skill folder (a symlink); refused.")
    if not path.is_file():
        raise SkillError(f"The skill has no file {relative}.")
    return path


def write_support(folder: Path, relative: PurePosixPath, data: bytes) -> None:
    """Create or replace a file inside the skill folder, never through a symlink."""
    path = _writable(folder, relative)
    for parent in reversed(path.parents):
        if parent != folder and folder in parent.parents and not parent.exists():
            parent.mkdir(mode=0o700)
    atomic_write(path, data)


def remove_support(folder: Path, relative: PurePosixPath) -> None:
    """Remove a file inside the skill folder, then any folders it leaves empty."""
    path = _writable(folder, relative)
    path.unlink()
    for parent in path.parents:
        if parent == folder or any(parent.iterdir()):
            break
        parent.rmdir()
    fsync_directory(folder)


def create_folder(root: Path, name: str, files: Mapping[PurePosixPath, bytes]) -> None:
    """Make `root/name` holding `files`, appearing all at once; refused if it exists."""
    target = root / name
    if target.exists() or target.is_symlink():
        raise SkillError(f"A skill folder {name!r} already exists.")
    staging = _stage(root, name, files)
    try:
        os.rename(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    fsync_directory(root)


def replace_folder(root: Path, name: str, files: Mapping[PurePosixPath, bytes]) -> None:
    """Swap `root/name` for a folder holding `files` (the old one is removed after the swap)."""
    staging = _stage(root, name, files)
    old = _move_aside(root, name, REPLACED)
    os.rename(staging, root / name)
    fsync_directory(root)
    if old is not None:
        shutil.rmtree(old)


def remove_folder(root: Path, name: str) -> None:
    """Remove `root/name`; a symlinked folder loses only its link, never the target's files."""
    old = _move_aside(root, name, DELETED)
    fsync_directory(root)
    if old is not None:
        shutil.rmtree(old)


def read_folder(folder: Path, max_bytes: int) -> dict[PurePosixPath, bytes]:
    """All files of a skill folder (as `list_files` sees them), for copying it elsewhere."""
    return {
        PurePosixPath(rel): read_bytes(folder.joinpath(*rel.split("/")), max_bytes)
        for rel in list_files(folder)
    }


def ensure_root(root: Path) -> None:
    """Create a skills folder (and its parents) private to the owner."""
    try:
        for parent in reversed([root, *root.parents]):
            if not parent.exists():
                parent.mkdir(mode=0o700)
    except OSError as exc:
        raise SkillError(f"cannot create {root}: {exc.strerror}") from None


@contextlib.contextmanager
def root_lock(root: Path) -> Iterator[None]:
    """Hold the cross-process lock of one skills folder (the daemon and the CLI both take it)."""
    ensure_root(root)
    try:
        lock = FileLock(root / LOCK_FILE, timeout=LOCK_TIMEOUT, mode=0o600)
        lock.acquire()
    except Timeout:
        raise SkillError(
            f"{root} stayed locked by another process for {LOCK_TIMEOUT:.0f} s; retry, or look "
            "for a stuck kioku process"
        ) from None
    try:
        _recover(root)
        yield
    finally:
        lock.release()


def _recover(root: Path) -> None:
    """Finish what a process killed mid-change left (only ever seen under the lock).

    A half-staged new skill is dropped, a deleted one's remains are removed, and a skill
    moved aside for a replacement that never landed is put back.
    """
    for entry in os.scandir(root):
        if not entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        stem, _, kind = entry.name[1:].rpartition(".")
        if kind.startswith(REPLACED) and (Path(entry.path) / stem).is_dir():
            if not (root / stem).exists():
                os.rename(Path(entry.path) / stem, root / stem)
            shutil.rmtree(entry.path)
        elif kind.startswith((STAGED, DELETED, REPLACED)):
            shutil.rmtree(entry.path)


def _stage(root: Path, name: str, files: Mapping[PurePosixPath, bytes]) -> Path:
    ensure_root(root)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{name}.{STAGED}"))
    try:
        for relative, data in files.items():
            write_support(staging, relative, data)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging


def _move_aside(root: Path, name: str, kind: str) -> Path | None:
    """Rename `root/name` to a hidden sibling (readers stop seeing it at once); unlink a link."""
    target = root / name
    if target.is_symlink():
        target.unlink()
        return None
    if not target.exists():
        return None
    aside = Path(tempfile.mkdtemp(dir=root, prefix=f".{name}.{kind}"))
    os.rename(target, aside / name)
    return aside


def _writable(folder: Path, relative: PurePosixPath) -> Path:
    """`folder/relative` when no part of it below `folder` is a symlink (or `folder` itself)."""
    path = folder.joinpath(*relative.parts)
    for part in [folder, *reversed(path.parents[: len(relative.parts) - 1]), path]:
        if part.is_symlink():
            raise SkillError(f"{relative} goes through a symlink; kioku does not write via links.")
    return path


def _inside(path: Path, folder: Path) -> bool:
    """True when `path`, links followed, is `folder` or lies within it (links followed too)."""
    try:
        real = path.resolve()
        base = folder.resolve()
    except (OSError, RuntimeError):
        return False
    return real == base or base in real.parents
