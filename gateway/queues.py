"""Per-conversation FIFO lines: one job at a time per conversation, a bounded number at once.

Each conversation with work gets a worker task that runs its jobs in arrival order and
ends when the line is empty. Workers take a slot before each job, so at most
`max_parallel` conversations are served at once; the rest wait in line. A job's error
is logged and the line goes on; `stop` cancels the job in flight and drops the rest.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog

log = structlog.get_logger("kioku.gateway")

Job = Callable[[], Awaitable[None]]


@dataclass
class _Line:
    key: str
    waiting: deque[tuple[str, Job]] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    running: str | None = None


@dataclass(frozen=True)
class LineState:
    key: str
    queued: int
    busy: bool


class Slots:
    """A counting limit that can be resized while taken (SIGHUP changes it live)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.taken = 0
        self._changed = asyncio.Condition()

    async def acquire(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self.taken < self.limit)
            self.taken += 1

    async def release(self) -> None:
        async with self._changed:
            self.taken -= 1
            self._changed.notify_all()

    async def resize(self, limit: int) -> None:
        async with self._changed:
            self.limit = limit
            self._changed.notify_all()


class ConversationQueues:
    """Owns one FIFO line (and its worker task) per conversation with work waiting, and
    the slots that bound how many conversations are served at once."""

    def __init__(self, max_parallel: int, max_queued: int) -> None:
        self.max_queued = max_queued
        self.slots = Slots(max_parallel)
        self._lines: dict[str, _Line] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()

    def submit(self, key: str, job: Job, name: str, *, force: bool = False) -> bool:
        """Queue `job` behind the conversation's others; False if the line is full.

        `force` skips the length check, for the gateway's own jobs (closing a session).
        """
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = _Line(key)
        if not force and len(line.waiting) >= self.max_queued:
            return False
        line.waiting.append((name, job))
        if line.worker is None:
            line.worker = asyncio.create_task(self._work(line), name=f"conversation-{key}")
            self._idle.clear()
        return True

    async def resize(self, max_parallel: int, max_queued: int) -> None:
        self.max_queued = max_queued
        await self.slots.resize(max_parallel)

    def stop(self, key: str) -> tuple[bool, int]:
        """Cancel the conversation's job in flight and drop its waiting ones.

        Returns (a job was cancelled, how many waiting jobs were dropped). The line is
        detached at once, so a message sent right after starts a fresh line; that line
        waits for the cancelled job to finish storing what it had.
        """
        line = self._lines.pop(key, None)
        if line is None:
            return False, 0
        dropped = len(line.waiting)
        line.waiting.clear()
        cancelled = line.running is not None
        if line.worker is not None and not line.worker.done():
            line.worker.cancel()
            self._stopping.add(line.worker)
            line.worker.add_done_callback(self._stopping.discard)
        self._update_idle()
        return cancelled, dropped

    def state(self, key: str) -> LineState:
        line = self._lines.get(key)
        if line is None:
            return LineState(key, 0, False)
        return LineState(key, len(line.waiting), line.running is not None)

    def states(self) -> list[LineState]:
        return [self.state(key) for key in list(self._lines)]

    @property
    def in_flight(self) -> int:
        return sum(1 for line in self._lines.values() if line.running is not None)

    async def drain(self, grace: float) -> bool:
        """Let every accepted job run for up to `grace` seconds; cancel what is left.

        Returns True if everything finished in time.
        """
        try:
            await asyncio.wait_for(self._idle.wait(), grace)
        except TimeoutError:
            await self.close()
            return False
        await self._wait_stopping()
        return True

    async def close(self) -> None:
        """Cancel every worker and wait for them to unwind."""
        workers = [line.worker for line in self._lines.values() if line.worker is not None]
        for line in self._lines.values():
            line.waiting.clear()
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        await self._wait_stopping()

    async def _wait_stopping(self) -> None:
        if self._stopping:
            await asyncio.gather(*list(self._stopping), return_exceptions=True)

    async def _work(self, line: _Line) -> None:
        name = f"conversation-{line.key}"
        previous = [t for t in self._stopping if t.get_name() == name and not t.done()]
        try:
            if previous:
                await asyncio.wait(previous)
            while line.waiting:
                name, job = line.waiting.popleft()
                await self.slots.acquire()
                line.running = name
                try:
                    await job()
                except Exception:
                    log.exception("job_failed", conversation=line.key, job=name)
                finally:
                    line.running = None
                    await asyncio.shield(self.slots.release())
        finally:
            line.worker = None
            if self._lines.get(line.key) is line and not line.waiting:
                del self._lines[line.key]
            self._update_idle()

    def _update_idle(self) -> None:
        if not any(line.worker is not None for line in self._lines.values()):
            self._idle.set()
