"""A home full of data, and a backup of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.backup.archive import write_backup
from tests.helpers.backup_archives import make_home


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return make_home(tmp_path / "source")


@pytest.fixture
def archive(source: Path, tmp_path: Path) -> Path:
    return write_backup(source, tmp_path / "backups").path
