"""Owned background tasks: named, kept until they end, cancelled and awaited on leaving,
and a failure logged by name without touching its neighbours."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from plumbing.tasks import Tasks


async def test_leaving_cancels_what_still_runs_and_waits_until_it_unwound() -> None:
    unwound = asyncio.Event()
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            unwound.set()

    async with Tasks() as tasks:
        task = tasks.spawn(forever(), "forever")
        await started.wait()
        assert task.get_name() == "forever"
    assert task.cancelled() and unwound.is_set()
    assert len(tasks) == 0


async def test_a_task_that_fails_is_logged_by_name_and_its_neighbours_go_on() -> None:
    release = asyncio.Event()

    async def fails() -> None:
        raise ValueError("broken")

    async def neighbour() -> str:
        await release.wait()
        return "done"

    async with Tasks() as tasks:
        with capture_logs() as logs:
            failing = tasks.spawn(fails(), "fails")
            other = tasks.spawn(neighbour(), "neighbour")
            await asyncio.wait([failing])  # its done callbacks ran in order: ours first
        release.set()
        await tasks.wait()
    assert other.result() == "done"
    (failed,) = [entry for entry in logs if entry["event"] == "task_failed"]
    assert failed["task"] == "fails" and "broken" in failed["error"]


async def test_a_task_started_elsewhere_is_adopted_and_cancelled_too() -> None:
    elsewhere = asyncio.create_task(asyncio.Event().wait(), name="systemd-watchdog")
    async with Tasks() as tasks:
        tasks.adopt(elsewhere)
        assert len(tasks) == 1
    assert elsewhere.cancelled()
