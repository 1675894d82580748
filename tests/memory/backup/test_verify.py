"""`verify_backup`: whole, untouched, sound — or a clear reason why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.backup.errors import BackupError
from memory.backup.verify import verify_backup
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
