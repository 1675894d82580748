"""An adapter for supervisor and daemon tests that can be told to fail to start or to crash."""

from __future__ import annotations

import asyncio

from adapters.base import Adapter, EventHandler, Outbound


class FlakyAdapter(Adapter):
    """Fails its first `fail_starts` starts, then serves until `crash()` is called.

    `attempts` receives the number of every start attempt as it finishes, and `stops`
    the number of every stop, so a test waits on them instead of sleeping.
    """

    name = "flaky"

    def __init__(
        self,
        deliver: EventHandler,
        *,
        name: str = "flaky",
        fail_starts: int = 0,
        hang_on_start: bool = False,
    ) -> None:
        super().__init__(deliver)
        self.name = name  # type: ignore[misc]
        self.fail_starts = fail_starts
        self.hang_on_start = hang_on_start
        self.started = 0
        self.stopped = 0
        self.sent: list[Outbound] = []
        self.attempts: asyncio.Queue[int] = asyncio.Queue()
        self.stops: asyncio.Queue[int] = asyncio.Queue()

    async def start(self) -> None:
        self.started += 1
        try:
            if self.hang_on_start:
                await asyncio.Event().wait()
            if self.started <= self.fail_starts:
                raise ConnectionError(f"start {self.started} refused")
        finally:
            self.attempts.put_nowait(self.started)

    async def stop(self) -> None:
        self.stopped += 1
        self.stops.put_nowait(self.stopped)

    async def send(self, message: Outbound) -> None:
        self.sent.append(message)

    def crash(self, reason: str = "connection lost") -> None:
        self.failed(ConnectionResetError(reason))
