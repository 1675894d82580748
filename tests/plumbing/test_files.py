"""Atomic replacement: the new bytes or the old ones, with the permissions asked for."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from plumbing.files import atomic_write, fsync_directory


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_write_replaces_the_file_private_to_the_owner(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_bytes(b"old")
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert mode_of(target) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"]


def test_atomic_write_gives_the_mode_asked_for(tmp_path: Path) -> None:
    target = tmp_path / "kioku.service"
    atomic_write(target, b"[Unit]\n", mode=0o644)
    assert mode_of(target) == 0o644


def test_a_failed_rename_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.mkdir()
    with pytest.raises(IsADirectoryError):
        atomic_write(target, b"new")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"]
    assert target.is_dir()


def test_fsync_directory_refuses_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        fsync_directory(tmp_path / "absent")
