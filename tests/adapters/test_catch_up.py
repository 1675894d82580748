"""Catch-up passes run one at a time, in the background, and a request during one asks
for exactly one more after it."""

from __future__ import annotations

import asyncio

from adapters.catch_up import OFF, CatchUpPasses, CatchUpPlan, Cursor, no_catch_up


async def test_a_request_during_a_pass_runs_one_more_pass_after_it() -> None:
    started: list[int] = []
    release = asyncio.Event()
    entered = asyncio.Event()

    async def run() -> None:
        started.append(len(started))
        entered.set()
        if len(started) == 1:
            await release.wait()

    passes = CatchUpPasses("test", run)
    passes.request()
    await entered.wait()
    passes.request()
    passes.request()
    assert passes.running and started == [0]
    release.set()
    await passes.wait()
    assert started == [0, 1]
    assert not passes.running


async def test_a_failing_pass_is_logged_and_the_next_request_runs_again() -> None:
    runs: list[str] = []

    async def run() -> None:
        runs.append("ran")
        raise RuntimeError("history refused")

    passes = CatchUpPasses("test", run)
    passes.request()
    await passes.wait()
    passes.request()
    await passes.wait()
    assert runs == ["ran", "ran"]


async def test_close_cancels_the_running_pass() -> None:
    cancelled = asyncio.Event()
    entered = asyncio.Event()

    async def run() -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    passes = CatchUpPasses("test", run)
    passes.request()
    await entered.wait()
    await passes.close()
    assert cancelled.is_set() and not passes.running


async def test_without_a_gateway_nothing_is_caught_up() -> None:
    plan = await no_catch_up()
    assert plan == OFF and not plan.enabled
    assert CatchUpPlan((Cursor("c", "", "1", True),), 86400.0, 50).enabled
