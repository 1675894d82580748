"""Owned background tasks: each named, kept until it ends, cancelled and awaited on exit.

`asyncio.TaskGroup` fits work that ends by itself; kioku's background work mostly runs
until shutdown (a timer, a sweep, a reload someone asked for) and one failure must not
cancel its neighbours. So a part that starts such tasks keeps them in one `Tasks`: a
task's reference is held until it is done (the loop keeps only weak ones), an error it
ends with is logged with its name, and leaving the `async with` (or `cancel()`) cancels
what still runs and waits for it to unwind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import structlog

log = structlog.get_logger("kioku.tasks")


class Tasks:
    """The background tasks of one part (the daemon, the gateway)."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run `work` as a task named `name`, owned until it ends."""
        return self.adopt(asyncio.create_task(work, name=name))

    def adopt(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        """Own a task another part created (systemd's watchdog)."""
        self._running.add(task)
        task.add_done_callback(self._ended)
        return task

    def __len__(self) -> int:
        return len(self._running)

    async def wait(self) -> None:
        """Until every task running now has ended (tests wait on this, not on time)."""
        await asyncio.gather(*list(self._running), return_exceptions=True)

    async def cancel(self) -> None:
        """Cancel every task still running and wait until each has unwound."""
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def __aenter__(self) -> Tasks:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.cancel()

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task_failed", task=task.get_name(), error=repr(task.exception()))
