"""Writing a backup: what goes in, how it is named and protected, and what stops it."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import subprocess
import sys
import tarfile
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.backup import snapshot
from memory.backup.archive import write_backup
from memory.backup.contents import LINK, LeftOut
from memory.backup.errors import BackupCancelled, BackupError
from memory.backup.manifest import parse
from memory.store.schema import SCHEMA_VERSION
from tests.helpers.backup_archives import members


def test_the_manifest_comes_first_and_lists_every_other_member_with_its_hash(
    archive: Path,
) -> None:
    found = members(archive)
    assert found[0].info.name == "manifest.json"
    manifest = parse(found[0].data or b"")
    listed = {entry.name: entry for entry in manifest.files}
    assert sorted(listed) == sorted(m.info.name for m in found[1:])
    for member in found[1:]:
        entry = listed[member.info.name]
        assert entry.size == len(member.data or b"")
        assert entry.sha256 == hashlib.sha256(member.data or b"").hexdigest()


def test_the_manifest_gives_version_schema_time_and_counts(archive: Path) -> None:
    manifest = parse(members(archive)[0].data or b"")
    assert manifest.schema_version == SCHEMA_VERSION
    assert manifest.kioku_version == "0.1.0"
    assert datetime.fromisoformat(manifest.created_at).tzinfo is not None
    # alice, bob and the owner; one DM session each for alice and bob, ten turns each.
    assert (manifest.counts.persons, manifest.counts.sessions, manifest.counts.turns) == (
        3,
        2,
        20,
    )


def test_it_holds_the_database_notes_skills_and_config_but_not_the_secrets(
    archive: Path,
) -> None:
    names = {m.info.name for m in members(archive)}
    assert names == {
        "manifest.json",
        "state.db",
        "config.toml",
        "people/alice/USER.md",
        "people/alice/skills/brew/SKILL.md",
    }


def test_with_secrets_it_holds_the_env_file(source: Path, tmp_path: Path) -> None:
    written = write_backup(source, tmp_path / "b", with_secrets=True)
    assert ".env" in {m.info.name for m in members(written.path)}
    assert written.manifest.with_secrets


def test_the_archive_is_private_even_under_a_permissive_umask(source: Path, tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        written = write_backup(source, tmp_path / "b")
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(written.path.parent.stat().st_mode) == 0o700


def test_it_is_named_by_its_utc_time_and_never_overwrites_another(
    source: Path, tmp_path: Path
) -> None:
    moment = datetime(2026, 12, 4, 1, 30, tzinfo=UTC)
    first = write_backup(source, tmp_path / "b", now=moment).path
    second = write_backup(source, tmp_path / "b", now=moment).path
    assert first.name == "kioku-backup-20261204T013000Z.tar.gz"
    assert second.name == "kioku-backup-20261204T013000Z-2.tar.gz"
    assert {p.name for p in (tmp_path / "b").iterdir()} == {first.name, second.name}


def test_links_in_the_notes_tree_are_left_out_and_named(source: Path, tmp_path: Path) -> None:
    (source / "people" / "alice" / "passwd").symlink_to("/etc/passwd")
    written = write_backup(source, tmp_path / "b")
    assert written.skipped == [LeftOut("people/alice/passwd", LINK)]
    assert "people/alice/passwd" not in {m.info.name for m in members(written.path)}


def test_a_home_without_a_database_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BackupError, match=r"holds no state\.db"):
        write_backup(tmp_path / "empty", tmp_path / "b")


def test_a_folder_inside_the_notes_tree_is_refused(source: Path) -> None:
    with pytest.raises(BackupError, match=r"inside the home's people/ folder"):
        write_backup(source, source / "people" / "alice" / "b")
    assert not (source / "people" / "alice" / "b").exists()


def test_the_copy_never_starts_over_while_another_connection_keeps_committing(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copied a page per step with commits landing between the steps: without the read
    transaction the copy holds, the backup API starts over after a commit (and under a
    steady stream of them, never finishes)."""
    db = sqlite3.connect(source / "state.db", isolation_level=None)
    db.execute("CREATE TABLE filler(x)")
    db.executemany("INSERT INTO filler VALUES (randomblob(500))", [()] * 4000)
    db.close()
    monkeypatch.setattr(snapshot, "PAGES_PER_STEP", 1)
    stop, started = threading.Event(), threading.Event()
    copied: list[int] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "state.db":
            copied.append(done)
            started.wait()

    def writer() -> None:
        db = sqlite3.connect(source / "state.db", isolation_level=None)
        db.execute("PRAGMA synchronous = OFF")
        while not stop.is_set():
            db.execute("INSERT INTO persons(id, created_at) VALUES (lower(hex(randomblob(8))), 0)")
            started.set()
        db.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        written = write_backup(source, tmp_path / "b", progress=progress)
    finally:
        stop.set()
        thread.join()
    assert len(copied) > 100 and copied == sorted(copied)
    with tarfile.open(written.path) as tar:
        tar.extract("state.db", tmp_path / "x", filter="data")
    db = sqlite3.connect(tmp_path / "x" / "state.db")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_backup_asked_to_stop_leaves_nothing_behind(source: Path, tmp_path: Path) -> None:
    with pytest.raises(BackupCancelled):
        write_backup(source, tmp_path / "b", stopping=lambda: True)
    assert list((tmp_path / "b").iterdir()) == []


FULL_DISK = """
import resource, signal, sys
from pathlib import Path
from memory.backup import snapshot
from memory.backup.archive import write_backup
from memory.backup.contents import LINK, LeftOut
from memory.backup.errors import BackupError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
try:
    write_backup(Path(sys.argv[1]), Path(sys.argv[2]))
except BackupError as exc:
    print(exc)
    sys.exit(1)
"""


@pytest.mark.parametrize("limit", [8 * 1024, 120 * 1024])
def test_a_full_disk_is_a_clear_error_and_leaves_no_archive(
    source: Path, tmp_path: Path, limit: int
) -> None:
    """The file-size limit stands in for a full disk: the copy of state.db (8 KiB) or the
    archive itself (120 KiB: the copy fits, the compressed stream does not) hits it."""
    folder = tmp_path / "b"
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(source), str(folder), str(limit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "full" in done.stdout and "no backup was kept" in done.stdout
    assert list(folder.iterdir()) == []
