"""`verify_backup`: whole, untouched, sound — or a clear reason why not."""

from __future__ import annotations

import io
import json
import sqlite3
import tarfile
from pathlib import Path

import pytest

from memory.backup.database_check import CLOCK_STEPS, check_database
from memory.backup.errors import BackupError
from memory.backup.unpack import read_manifest, unpack
from memory.backup.verify import verify_backup
from memory.store.schema import SCHEMA_VERSION
from tests.helpers.backup_archives import file_member, listed, manifest_of, members, write
from tests.memory.backup.bad_archives import BAD


def test_a_good_backup_verifies_and_gives_its_manifest(archive: Path) -> None:
    manifest = verify_backup(archive)
    assert manifest.counts.turns == 20


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_archive_fails_with_what_is_wrong(archive: Path, tmp_path: Path, kind: str) -> None:
    make, says = BAD[kind]
    bad = make(archive, tmp_path / "bad.tar.gz")
    with pytest.raises(BackupError, match=says):
        verify_backup(bad)


def test_a_file_that_is_no_archive_at_all_fails(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_text("not an archive")
    with pytest.raises(BackupError, match="truncated or damaged"):
        verify_backup(junk)


def test_a_missing_file_fails(tmp_path: Path) -> None:
    with pytest.raises(BackupError, match="does not exist"):
        verify_backup(tmp_path / "nope.tar.gz")


def test_verify_leaves_no_scratch_copy(archive: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    verify_backup(archive, scratch=scratch)
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("form", ["USTAR_FORMAT", "GNU_FORMAT", "PAX_FORMAT"])
def test_a_backup_rewritten_in_each_tar_format_with_long_and_japanese_names_verifies(
    archive: Path, tmp_path: Path, form: str
) -> None:
    """kioku's own tar reader reads what tarfile (and GNU tar) write: ustar's name prefix,
    GNU long names, pax paths in UTF-8."""
    found = members(archive)
    names = ["people/alice/" + "n" * 90 + "/note.md"]
    if form != "USTAR_FORMAT":  # ustar holds ASCII names only
        names.append("people/alice/メモ/日記.md")
    manifest = manifest_of(found)
    for name in names:
        manifest = listed(manifest, name, name.encode())
        found.append(file_member(name, name.encode()))
    rewritten = tmp_path / "rewritten.tar.gz"
    with tarfile.open(rewritten, "w:gz", format=getattr(tarfile, form)) as tar:
        for number, member in enumerate(found):
            data = json.dumps(manifest).encode() if number == 0 else member.data or b""
            member.info.size = len(data)
            tar.addfile(member.info, io.BytesIO(data))
    assert verify_backup(rewritten).files[-1].name == names[-1]


def test_a_check_of_state_db_past_its_time_budget_is_refused(archive: Path, tmp_path: Path) -> None:
    """The clock is read every `CLOCK_STEPS` SQLite steps: rows enough for a few reads."""
    unpack(archive, tmp_path, only={"state.db"})
    db = sqlite3.connect(tmp_path / "state.db")
    db.execute("CREATE TABLE filler(x)")
    db.executemany("INSERT INTO filler VALUES (?)", [(n,) for n in range(CLOCK_STEPS * 5)])
    db.commit()
    db.close()
    manifest = read_manifest(archive)
    with pytest.raises(BackupError, match=r"took over 0 s, far longer than a database"):
        check_database(tmp_path / "state.db", manifest.schema_version, manifest.counts, 0.0)


def test_a_backup_of_a_newer_schema_verifies_on_its_counted_tables(
    archive: Path, tmp_path: Path
) -> None:
    """A newer kioku's layout is unknown here; restore refuses it, verify still checks it."""
    found = members(archive)
    [db] = [m for m in found if m.info.name == "state.db"]
    copy = tmp_path / "newer.db"
    copy.write_bytes(db.data or b"")
    connection = sqlite3.connect(copy)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    db.data = copy.read_bytes()
    manifest = manifest_of(found) | {"schema_version": SCHEMA_VERSION + 1}
    manifest["files"] = [e for e in manifest["files"] if e["name"] != "state.db"]
    newer = write(tmp_path / "newer.tar.gz", found, listed(manifest, "state.db", db.data))
    assert verify_backup(newer).schema_version == SCHEMA_VERSION + 1
