"""An in-process adapter for gateway tests: it records what it is sent, and can refuse."""

from __future__ import annotations

import asyncio

from adapters.base import Adapter, Address, Delta, EventHandler, Outbound


class SendRefused(RuntimeError):
    """What a platform's send raises when delivery fails for good."""


class RecordingAdapter(Adapter):
    """`replies` holds every Outbound in order; `next_reply()` waits for the next one."""

    def __init__(self, deliver: EventHandler, name: str = "telegram", streams: bool = False):
        super().__init__(deliver)
        self.name = name
        self.streams = streams
        self.replies: list[Outbound] = []
        self.deltas: list[Delta] = []
        self.working_on: list[Address] = []
        self.refuse_sends = False
        self._arrived: asyncio.Queue[Outbound] = asyncio.Queue()

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def send(self, message: Outbound) -> None:
        if self.refuse_sends:
            raise SendRefused("the platform refused the message")
        self.replies.append(message)
        self._arrived.put_nowait(message)

    async def stream(self, delta: Delta) -> None:
        self.deltas.append(delta)

    async def working(self, address: Address) -> None:
        self.working_on.append(address)

    # A bound for a reply that comes, not a measure of speed: on a loaded 2-core machine a
    # turn over hostile notes files took over 5 s.
    async def next_reply(self, within: float = 20.0) -> Outbound:
        return await asyncio.wait_for(self._arrived.get(), within)

    async def next_text(self, within: float = 20.0) -> str:
        return (await self.next_reply(within)).text

    def pending(self) -> int:
        """Replies sent but not yet taken by `next_reply`."""
        return self._arrived.qsize()
