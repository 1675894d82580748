"""Per-conversation lines: FIFO within one, parallel across, bounded, stoppable, drainable."""

from __future__ import annotations

import asyncio

from gateway.queues import ConversationQueues


class Jobs:
    """Jobs that record when they start and finish, each held until its gate opens."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}
        self.started: dict[str, asyncio.Event] = {}

    def job(self, name: str):
        self.gates[name] = asyncio.Event()
        self.started[name] = asyncio.Event()

        async def run() -> None:
            self.log.append(f"start {name}")
            self.started[name].set()
            await self.gates[name].wait()
            self.log.append(f"end {name}")

        return run

    async def wait_started(self, name: str) -> None:
        await asyncio.wait_for(self.started[name].wait(), 30)


async def test_jobs_of_one_conversation_run_one_at_a_time_in_order() -> None:
    queues, jobs = ConversationQueues(4, 10), Jobs()
    for name in ("a1", "a2", "a3"):
        queues.submit("a", jobs.job(name), name)
    await jobs.wait_started("a1")
    assert queues.state("a").queued == 2 and queues.state("a").busy
    jobs.gates["a1"].set()
    await jobs.wait_started("a2")
    jobs.gates["a2"].set()
    jobs.gates["a3"].set()
    assert await queues.drain(30)
    assert jobs.log == ["start a1", "end a1", "start a2", "end a2", "start a3", "end a3"]


async def test_conversations_run_in_parallel() -> None:
    queues, jobs = ConversationQueues(4, 10), Jobs()
    queues.submit("a", jobs.job("a1"), "a1")
    queues.submit("b", jobs.job("b1"), "b1")
    await jobs.wait_started("a1")
    await jobs.wait_started("b1")
    assert queues.in_flight == 2
    jobs.gates["b1"].set()
    jobs.gates["a1"].set()
    assert await queues.drain(30)


async def test_parallel_conversations_are_bounded() -> None:
    queues, jobs = ConversationQueues(2, 10), Jobs()
    for key in ("a", "b", "c"):
        queues.submit(key, jobs.job(key), key)
    await jobs.wait_started("a")
    await jobs.wait_started("b")
    await asyncio.sleep(0)
    assert not jobs.started["c"].is_set()
    assert queues.slots.taken == 2
    jobs.gates["a"].set()
    await jobs.wait_started("c")
    jobs.gates["b"].set()
    jobs.gates["c"].set()
    assert await queues.drain(30)


async def test_a_full_line_refuses_more() -> None:
    queues, jobs = ConversationQueues(1, 2), Jobs()
    assert queues.submit("a", jobs.job("a1"), "a1")
    await jobs.wait_started("a1")
    assert queues.submit("a", jobs.job("a2"), "a2")
    assert queues.submit("a", jobs.job("a3"), "a3")
    assert not queues.submit("a", jobs.job("a4"), "a4")
    assert queues.submit("a", jobs.job("close"), "close", force=True)
    await queues.close()


async def test_a_failing_job_does_not_stop_its_line() -> None:
    queues, jobs = ConversationQueues(1, 5), Jobs()

    async def broken() -> None:
        raise RuntimeError("boom")

    queues.submit("a", broken, "broken")
    queues.submit("a", jobs.job("a2"), "a2")
    jobs.gates["a2"].set()
    assert await queues.drain(30)
    assert jobs.log == ["start a2", "end a2"]


async def test_stop_cancels_the_job_in_flight_and_drops_the_waiting() -> None:
    queues, jobs = ConversationQueues(2, 5), Jobs()
    queues.submit("a", jobs.job("a1"), "a1")
    queues.submit("a", jobs.job("a2"), "a2")
    await jobs.wait_started("a1")
    assert queues.stop("a") == (True, 1)
    queues.submit("a", jobs.job("a3"), "a3")
    jobs.gates["a3"].set()
    assert await queues.drain(30)
    assert jobs.log == ["start a1", "start a3", "end a3"]
    assert queues.slots.taken == 0


async def test_drain_cancels_what_outlasts_the_grace() -> None:
    queues, jobs = ConversationQueues(2, 5), Jobs()
    queues.submit("a", jobs.job("a1"), "a1")
    await jobs.wait_started("a1")
    assert not await queues.drain(0.05)
    assert jobs.log == ["start a1"]
    assert queues.in_flight == 0


async def test_resize_lets_waiting_conversations_in() -> None:
    queues, jobs = ConversationQueues(1, 5), Jobs()
    queues.submit("a", jobs.job("a"), "a")
    queues.submit("b", jobs.job("b"), "b")
    await jobs.wait_started("a")
    await queues.resize(2, 5)
    await jobs.wait_started("b")
    jobs.gates["a"].set()
    jobs.gates["b"].set()
    assert await queues.drain(30)
