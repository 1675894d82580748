"""The fake Discord the gateway-backed adapter tests talk to, its heartbeat quick so a
dropped or silent socket shows soon; a module that needs another defines its own `fake`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.discord import FakeDiscord


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(heartbeat_interval_ms=200) as server:
        yield server
