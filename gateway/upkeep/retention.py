"""The daily retention sweep: the daemon's part of `history.keep_days`.

The first sweep runs as the daemon starts, beside everything else (a home server
restarts at odd hours; a sweep only at a fixed time could be skipped for weeks), then
once a day. The keep
days are read at every sweep, so a SIGHUP that changes `history.keep_days` applies to
the next one; a person's own choice lives in state.db and applies at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import UTC, datetime

import structlog

from memory.history.retention import Swept, sweep
from memory.store.database import Store
from memory.store.errors import StoreError

log = structlog.get_logger("kioku.retention")

DAY = 86_400.0


class RetentionSweeper:
    """Owns the sweep task: `start()` (or entering) creates it, `stop()` (or leaving)
    cancels and awaits it."""

    def __init__(
        self,
        store: Store,
        keep_days: Callable[[], int | None],
        *,
        every: float = DAY,
    ) -> None:
        self._store = store
        self._keep_days = keep_days
        self._every = every
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="history-retention")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def __aenter__(self) -> RetentionSweeper:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def sweep_once(self) -> Swept | None:
        """One sweep, logged by its counts; None (and an error logged) if it failed, so
        tomorrow's sweep tries again."""
        default = self._keep_days()
        try:
            swept = await sweep(self._store, default, datetime.now(UTC))
        except (StoreError, OSError) as exc:
            log.error("history_sweep_failed", error=str(exc), kind=type(exc).__name__)
            return None
        log.info("history_swept", sessions=swept.sessions, turns=swept.turns, keep_days=default)
        return swept

    async def _run(self) -> None:
        while True:
            await self.sweep_once()
            await asyncio.sleep(self._every)
