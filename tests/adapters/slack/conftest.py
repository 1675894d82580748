"""The fake Slack the adapter tests talk to; a module that needs known users or DMs
defines its own `fake`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.slack import FakeSlack


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = await FakeSlack().start()
    yield server
    await server.close()
