"""The backups folder: names by time, the newest, and only kioku's archives pruned."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memory.backup.rotation import archive_name, backups_folder, newest, prune


def fill(folder: Path, hours: list[int]) -> list[str]:
    folder.mkdir(exist_ok=True)
    names = [archive_name(datetime(2026, 12, 1, hour, tzinfo=UTC)) for hour in hours]
    for name in names:
        (folder / name).write_bytes(b"x")
    return names


def test_prune_keeps_the_newest_and_leaves_other_files_alone(tmp_path: Path) -> None:
    names = fill(tmp_path, [3, 1, 4, 2])
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "kioku-backup-old.tar.gz").write_text("not one of kioku's names")
    removed = prune(tmp_path, keep=2)
    assert sorted(p.name for p in removed) == sorted([names[1], names[3]])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [names[0], names[2], "notes.txt", "kioku-backup-old.tar.gz"]
    )


def test_the_newest_is_read_from_the_name_and_a_same_second_suffix_counts(tmp_path: Path) -> None:
    [name] = fill(tmp_path, [5])
    second = tmp_path / name.replace(".tar.gz", "-2.tar.gz")
    second.write_bytes(b"x")
    found = newest(tmp_path)
    assert found is not None
    assert found.path == second and found.created == datetime(2026, 12, 1, 5, tzinfo=UTC)


def test_a_missing_folder_holds_no_backup(tmp_path: Path) -> None:
    assert newest(tmp_path / "nope") is None
    assert prune(tmp_path / "nope", keep=1) == []


def test_the_folder_is_backup_dir_else_backups_in_the_home(tmp_path: Path) -> None:
    assert backups_folder(tmp_path, None) == tmp_path / "backups"
    assert backups_folder(tmp_path, tmp_path / "elsewhere") == tmp_path / "elsewhere"
