"""`DecodeSlots`: no more images decode at once than there are slots; the rest wait."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from agent.media.decoding import DecodeSlots

WAIT = 10.0


class Decodes:
    """Work that says when it starts and holds its slot until released."""

    def __init__(self, count: int) -> None:
        self.started = [threading.Event() for _ in range(count)]
        self.release = threading.Event()

    def __call__(self, number: int) -> int:
        self.started[number].set()
        self.release.wait(WAIT)
        return number

    async def until_started(self, number: int) -> bool:
        return await asyncio.to_thread(self.started[number].wait, WAIT)


@pytest.fixture
def slots(request: pytest.FixtureRequest) -> Iterator[DecodeSlots]:
    pool = DecodeSlots(request.param)
    yield pool
    pool.close()


@pytest.mark.parametrize("slots", [1], indirect=True)
async def test_with_one_slot_the_second_decode_waits_for_the_first(slots: DecodeSlots) -> None:
    work = Decodes(2)
    first = asyncio.ensure_future(slots.run(work, 0))
    second = asyncio.ensure_future(slots.run(work, 1))
    assert await work.until_started(0)

    assert not work.started[1].is_set()
    work.release.set()
    assert await asyncio.gather(first, second) == [0, 1]


@pytest.mark.parametrize("slots", [2], indirect=True)
async def test_with_two_slots_two_decodes_run_at_once(slots: DecodeSlots) -> None:
    work = Decodes(2)
    both = asyncio.gather(slots.run(work, 0), slots.run(work, 1))

    assert await work.until_started(0) and await work.until_started(1)
    work.release.set()
    assert await both == [0, 1]
