"""Catching up on what was said while kioku was away: what a pass may read, and one pass
at a time.

A platform that keeps history (Discord's channel messages, Slack's conversations) is
asked, on start and after each reconnect, for the messages after the last one kioku
saw in each chat it talks in. The gateway keeps those cursors (in state.db) and the
limits (`gateway.catch_up`); the adapter asks for them as a `CatchUpPlan`, reads the
platform with its own library, and hands what it found to the gateway as one `Missed`.
`CatchUpPasses` runs those passes in the background, one at a time, so live messages
are never held up behind one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

log = structlog.get_logger("kioku.adapters")


@dataclass(frozen=True)
class Cursor:
    """The newest message kioku has seen in one chat (or one thread of it): a pass reads
    what came after it. `message_id` is the platform's own (a Discord snowflake, a Slack
    `ts`), as the chat's `Inbound.message_id` carried it."""

    chat: str
    thread: str
    message_id: str
    is_direct: bool


@dataclass(frozen=True)
class CatchUpPlan:
    """What one pass may read: the chats (`cursors`: every direct chat kioku talks in, and
    every group chat or thread it was addressed in within `max_age`), at most
    `max_messages` per chat. Messages older than `max_age` seconds are still handed over
    (they are stored, not answered). `max_age` 0 means catch-up is off: nothing is read."""

    cursors: tuple[Cursor, ...]
    max_age: float
    max_messages: int

    @property
    def enabled(self) -> bool:
        return self.max_age > 0


CatchUpSource = Callable[[], Awaitable[CatchUpPlan]]
OFF = CatchUpPlan((), 0.0, 0)


async def no_catch_up() -> CatchUpPlan:
    """The plan of an adapter run without a gateway that keeps cursors: read nothing."""
    return OFF


class CatchUpPasses:
    """Runs an adapter's catch-up passes in one background task, one pass at a time.

    `request` starts a pass, or, while one runs, asks for one more after it (a reconnect
    during a pass may have missed more): requests never pile up beyond that. A pass that
    fails is logged and the next request tries again; `close` cancels the running one.
    """

    def __init__(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        self.name = name
        self._run = run
        self._task: asyncio.Task[None] | None = None
        self._again = False

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def request(self) -> None:
        if self.running:
            self._again = True
            return
        self._task = asyncio.create_task(self._passes(), name=f"{self.name}-catch-up")

    async def wait(self) -> None:
        """Until no pass runs and none is asked for: for whoever must see a pass through."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def close(self) -> None:
        task, self._task = self._task, None
        self._again = False
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _passes(self) -> None:
        while True:
            self._again = False
            try:
                await self._run()
            except Exception:
                log.exception("catch_up_failed", platform=self.name)
            if not self._again:
                return
