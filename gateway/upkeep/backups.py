"""The daemon's scheduled backups (`backup.every`), kept to the newest `backup.keep`.

The next backup is due `every` after the newest archive in the folder, whoever made it,
so a restart neither skips one nor makes an extra one. The work runs in a thread; on
shutdown it is told to stop and its unfinished archive is removed. A failure is
logged and tried again after `RETRY_S` (or `every`, if sooner), not in a loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from config.loggers import get_logger
from config.settings import BackupSettings
from memory.backup.archive import Written, write_backup
from memory.backup.errors import BackupCancelled, BackupError
from memory.backup.rotation import backups_folder, newest, prune

log = get_logger("kioku.backup")
RETRY_S = 600.0


class ScheduledBackups:
    """`run()` is the daemon's owned task; it ends only by cancellation."""

    def __init__(self, home: Path, settings: BackupSettings) -> None:
        assert settings.every_seconds is not None
        self.home = home
        self.every = settings.every_seconds
        self.keep = settings.keep
        self.folder = backups_folder(home, settings.dir)

    async def run(self) -> None:
        while True:
            try:
                await asyncio.sleep(await asyncio.to_thread(self.due_in))
                await self.once()
            except (BackupError, OSError) as exc:
                log.error("backup_failed", folder=str(self.folder), error=str(exc))
                await asyncio.sleep(min(RETRY_S, self.every))

    async def once(self) -> Written:
        """One backup, then the oldest beyond `keep` deleted; logged."""
        started = time.monotonic()
        written = await self.back_up()
        removed = await asyncio.to_thread(prune, self.folder, self.keep)
        log.info(
            "backup_made",
            path=str(written.path),
            turns=written.manifest.counts.turns,
            removed=len(removed),
            seconds=round(time.monotonic() - started, 2),
        )
        return written

    def due_in(self) -> float:
        """Seconds until the next backup: `every` after the newest, now if there is none."""
        last = newest(self.folder)
        if last is None:
            return 0.0
        age = (datetime.now(UTC) - last.created).total_seconds()
        return max(0.0, self.every - age)

    async def back_up(self) -> Written:
        """One backup in a thread; cancelled, it tells the thread to stop and waits for it."""
        stop = threading.Event()
        work = asyncio.ensure_future(
            asyncio.to_thread(write_backup, self.home, self.folder, stopping=stop.is_set)
        )
        try:
            written = await asyncio.shield(work)
        except asyncio.CancelledError:
            stop.set()
            try:
                await work
            except BackupCancelled:
                log.info("backup_stopped", reason="shutdown")
            except BackupError as exc:
                log.error("backup_failed", folder=str(self.folder), error=str(exc))
            raise
        return written
