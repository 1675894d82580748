"""`remove_tree`: a working folder goes, however deep, and never through a link."""

from __future__ import annotations

import os
from pathlib import Path

from memory.backup.cleanup import remove_tree

FOLDER = os.O_RDONLY | os.O_DIRECTORY


def test_a_tree_deeper_than_the_recursion_limit_and_path_max_is_removed(tmp_path: Path) -> None:
    """3,000 levels: `shutil.rmtree` dies of RecursionError; the path is past PATH_MAX."""
    root = tmp_path / "staging"
    root.mkdir()
    fd = os.open(root, FOLDER)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", FOLDER, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("state.db", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    os.close(fd)
    remove_tree(root)
    assert list(tmp_path.iterdir()) == []  # else pytest's own clean-up (rmtree) would fail


def test_links_are_removed_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "kept").mkdir(parents=True)
    (outside / "kept" / "file").write_text("kept\n")
    root = tmp_path / "staging"
    (root / "people").mkdir(parents=True)
    (root / "people" / "folder-link").symlink_to(outside / "kept")
    (root / "people" / "file-link").symlink_to(outside / "kept" / "file")
    remove_tree(root)
    assert not root.exists()
    assert (outside / "kept" / "file").read_text() == "kept\n"


def test_a_missing_folder_is_no_error(tmp_path: Path) -> None:
    remove_tree(tmp_path / "never-made")
