"""The daemon-in-a-subprocess rig of the end-to-end tests, shared by the fault suite."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.store import Store
from tests.helpers.gateway_rig import GatedAnthropic
from tests.test_daemon_e2e import Daemon


@pytest.fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@pytest.fixture
async def daemons() -> AsyncIterator[list[Daemon]]:
    """Every daemon a test starts; any still running at the end is killed."""
    started: list[Daemon] = []
    yield started
    for daemon in started:
        if daemon.process is not None and daemon.process.returncode is None:
            daemon.process.kill()
            await daemon.process.wait()
        daemon.notify.close()


async def integrity_problems(home: Path) -> list[str]:
    """What the store's own integrity and FTS checks find wrong (empty when sound)."""
    async with await Store.open(home / "state.db") as store:
        report = await store.check_integrity()
    return [] if report.ok else list(report.problems)
