"""`restore_backup`: the backup becomes the home, or nothing of the home changes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.backup.errors import BackupError
from memory.backup.restore import restore_backup
from memory.backup.snapshot import count_rows
from memory.store.schema import SCHEMA_VERSION
from tests.helpers.backup_archives import NOTE, file_member, listed, manifest_of, members, write
from tests.helpers.integrity import integrity_problems
from tests.helpers.paths import ROOT
from tests.memory.backup.bad_archives import BAD


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` with its bytes: what "untouched" is compared against."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def current(tmp_path: Path) -> Path:
    """A home in use, different from the backup's."""
    home = tmp_path / "current"
    (home / "people" / "carol").mkdir(parents=True)
    (home / "people" / "carol" / "USER.md").write_text("Carol's note\n")
    (home / "state.db").write_bytes(b"the current database")
    return home


def test_it_restores_into_a_missing_home_privately(archive: Path, tmp_path: Path) -> None:
    home = tmp_path / "new" / "home"
    restored = restore_backup(archive, home)
    assert restored.moved_aside is None
    assert (home / "people" / "alice" / "USER.md").read_text() == NOTE + "\n"
    assert (home / "config.toml").is_file() and not (home / ".env").exists()
    for path in [home, *home.rglob("*")]:
        expected = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.stat().st_mode) == expected, path
    db = sqlite3.connect(home / "state.db")
    assert db.execute("SELECT count(*) FROM turns").fetchone() == (20,)
    assert [p.name for p in home.parent.iterdir()] == ["home"]


def test_it_restores_into_an_empty_home(archive: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    restore_backup(archive, home)
    assert (home / "state.db").is_file()


def test_a_home_in_use_is_refused_without_replace(
    archive: Path, current: Path, tmp_path: Path
) -> None:
    before = snapshot(current)
    with pytest.raises(BackupError, match="pass --yes to replace it"):
        restore_backup(archive, current)
    assert snapshot(current) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["backups", "current", "source"])


def test_with_replace_the_home_in_use_is_moved_aside(archive: Path, current: Path) -> None:
    before = snapshot(current)
    moment = datetime(2026, 12, 4, 2, 0, tzinfo=UTC)
    restored = restore_backup(archive, current, replace=True, now=moment)
    assert restored.moved_aside == current.with_name("current.before-restore-20261204T020000Z")
    assert snapshot(restored.moved_aside) == before
    assert (current / "people" / "alice" / "USER.md").is_file()
    assert not (current / "people" / "carol").exists()


def test_a_folder_that_is_no_kioku_home_is_not_moved_aside(archive: Path, tmp_path: Path) -> None:
    folder = tmp_path / "documents"
    folder.mkdir()
    (folder / "taxes.pdf").write_bytes(b"%PDF")
    with pytest.raises(BackupError, match="does not look like a kioku home"):
        restore_backup(archive, folder, replace=True)
    assert snapshot(folder) == {"taxes.pdf": b"%PDF"}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_archive_changes_nothing_of_the_home(
    archive: Path, current: Path, tmp_path: Path, kind: str
) -> None:
    make, says = BAD[kind]
    bad = make(archive, tmp_path / "bad.tar.gz")
    before = snapshot(current)
    with pytest.raises(BackupError, match=says):
        restore_backup(bad, current, replace=True)
    assert snapshot(current) == before
    assert not [p for p in tmp_path.iterdir() if "restor" in p.name]


def test_a_newer_schema_is_refused(archive: Path, current: Path, tmp_path: Path) -> None:
    found = members(archive)
    manifest = manifest_of(found) | {"schema_version": SCHEMA_VERSION + 1}
    newer = write(tmp_path / "newer.tar.gz", found, manifest)
    with pytest.raises(BackupError, match=f"schema v{SCHEMA_VERSION + 1} database, newer"):
        restore_backup(newer, current, replace=True)
    assert (current / "state.db").read_bytes() == b"the current database"


def test_an_older_schema_is_restored_and_upgraded_on_the_next_open(
    tmp_path: Path, archive: Path
) -> None:
    """A v6 state.db comes back as v6; the store upgrades it when it next opens it."""
    copy = tmp_path / "v6.db"
    shutil.copyfile(ROOT / "tests" / "data" / "state-v6.db", copy)
    old, counts = copy.read_bytes(), asdict(count_rows(copy))
    found = [m for m in members(archive) if m.info.name != "state.db"]
    manifest = manifest_of(found)
    manifest["files"] = [e for e in manifest["files"] if e["name"] != "state.db"]
    manifest = listed(manifest | {"schema_version": 6, "counts": counts}, "state.db", old)
    older = write(tmp_path / "older.tar.gz", [*found, file_member("state.db", old)], manifest)
    home = tmp_path / "home"
    restore_backup(older, home)
    assert sqlite3.connect(home / "state.db").execute("PRAGMA user_version").fetchone() == (6,)
    assert asyncio.run(integrity_problems(home)) == []
    version = sqlite3.connect(home / "state.db").execute("PRAGMA user_version").fetchone()
    assert version == (SCHEMA_VERSION,)


FULL_DISK = """
import resource, signal, sys
from pathlib import Path
from memory.backup.errors import BackupError
from memory.backup.restore import restore_backup
from memory.backup.snapshot import count_rows
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
try:
    restore_backup(Path(sys.argv[1]), Path(sys.argv[2]), replace=True)
except BackupError as exc:
    print(exc)
    sys.exit(1)
"""


def test_a_full_disk_while_unpacking_changes_nothing_of_the_home(
    archive: Path, current: Path, tmp_path: Path
) -> None:
    """The file-size limit (8 KiB, below the database's size) stands in for a full disk."""
    before = snapshot(current)
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(archive), str(current)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "is full" in done.stdout and "was not changed" in done.stdout
    assert snapshot(current) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backups", "current", "source"]


def test_the_guard_stops_the_swap_and_nothing_changes(archive: Path, current: Path) -> None:
    before = snapshot(current)

    def daemon_started() -> None:
        raise BackupError("kioku is already running")

    with pytest.raises(BackupError, match="already running"):
        restore_backup(archive, current, replace=True, guard=daemon_started)
    assert snapshot(current) == before


def test_the_manifest_is_kept_out_of_the_home(archive: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    restore_backup(archive, home)
    assert not (home / "manifest.json").exists()
    assert json.loads(members(archive)[0].data or b"{}")["format"] == 1
    assert os.listdir(home)
