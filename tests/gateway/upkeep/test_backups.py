"""The daemon's scheduled backups: when the next is due, what is kept, stopping cleanly."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from config.settings import BackupSettings
from gateway.upkeep.backups import ScheduledBackups
from memory.backup.rotation import archive_name, archives
from tests.helpers.backup_archives import make_home


def scheduled(home: Path, every: str = "1h", keep: int = 2) -> ScheduledBackups:
    return ScheduledBackups(home, BackupSettings(every=every, keep=keep, dir=home / "b"))


def test_the_first_backup_is_due_at_once_when_there_is_none(tmp_path: Path) -> None:
    assert scheduled(tmp_path).due_in() == 0.0


def test_after_a_restart_the_next_is_due_every_after_the_newest(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    made = datetime.now(UTC) - timedelta(minutes=20)
    (folder / archive_name(made)).write_bytes(b"x")
    assert 39 * 60 < scheduled(tmp_path).due_in() <= 40 * 60


def test_an_overdue_backup_is_due_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / archive_name(datetime.now(UTC) - timedelta(days=2))).write_bytes(b"x")
    assert scheduled(tmp_path, every="1d").due_in() == 0.0


async def test_one_round_backs_up_and_prunes_to_keep(tmp_path: Path) -> None:
    home = await asyncio.to_thread(make_home, tmp_path / "home")
    folder = home / "b"
    folder.mkdir()
    for days in (3, 2):
        (folder / archive_name(datetime.now(UTC) - timedelta(days=days))).write_bytes(b"old")
    with capture_logs() as logs:
        written = await scheduled(home, every="1d").once()
    kept = archives(folder)
    assert [a.path for a in kept][-1] == written.path and len(kept) == 2
    assert kept[0].path.read_bytes() == b"old"
    [made] = [entry for entry in logs if entry["event"] == "backup_made"]
    assert made["removed"] == 1 and made["turns"] == 20


async def test_a_failed_backup_is_logged_and_the_task_goes_on(tmp_path: Path) -> None:
    """No state.db: the round fails, is logged, and the task waits to retry (not dies)."""
    tmp_path.joinpath("home").mkdir()
    with capture_logs() as logs:
        task = asyncio.create_task(scheduled(tmp_path / "home").run(), name="scheduled-backups")
        async with asyncio.timeout(30):
            while not logs:  # noqa: ASYNC110 - the log list has no event to await
                await asyncio.sleep(0.01)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    [failed] = logs
    assert failed["event"] == "backup_failed" and "holds no state.db" in failed["error"]


async def test_cancelled_mid_backup_it_leaves_no_partial_archive(tmp_path: Path) -> None:
    home = await asyncio.to_thread(make_home, tmp_path / "home")
    backups = scheduled(home)
    task = asyncio.create_task(backups.back_up())
    await asyncio.sleep(0)  # the thread has started
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    leftovers = list((home / "b").iterdir()) if (home / "b").exists() else []
    assert all(a.name.startswith("kioku-backup-") for a in leftovers)
    assert not [p for p in leftovers if p.name.startswith(".")]
