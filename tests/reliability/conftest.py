"""The daemon-in-a-subprocess rig of the end-to-end tests, shared by the fault suite."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.helpers.daemon import Daemon
from tests.helpers.gateway_rig import GatedAnthropic


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
