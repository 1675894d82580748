"""What an adapter delivers, queued for the test to take, for adapter tests run without
a gateway."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from adapters.base import Inbound

WITHIN = 5.0


class Inbox:
    """The adapter's `deliver`: each inbound queued in the order it came."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Inbound] = asyncio.Queue()

    async def deliver(self, inbound: Inbound) -> None:
        self.queue.put_nowait(inbound)

    async def next(self) -> Inbound:
        return await asyncio.wait_for(self.queue.get(), WITHIN)


@contextmanager
def loopback_unproxied() -> Iterator[None]:
    """NO_PROXY for 127.0.0.1 in a module-scoped fixture, which runs outside the per-test
    `home` fixture that sets it, so the SDKs reach the fakes directly."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        yield


async def ignore(inbound: Inbound) -> None:
    """The `deliver` of an adapter that is only sending: anything delivered fails the test."""
    raise AssertionError(f"nothing is sent to the bot here: {inbound}")
