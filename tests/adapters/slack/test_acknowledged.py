"""Slack is told "received" only for what kioku can no longer lose: slack-bolt acknowledges
an envelope once the adapter's listener has handed its message to the gateway and the
gateway has returned (stored it), never before (real slack-bolt against the fake Slack)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adapters.base import Event, Inbound
from tests.fakes.slack import FakeSlack
from tests.helpers.slack_events import Recorder, recorded_slack
from tests.helpers.slack_rig import ALICE


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = await FakeSlack(users={ALICE: "Alice"}).start()
    yield server
    await server.close()


class Holding(Recorder):
    """A gateway that takes its time storing a message: until `stored` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.storing = asyncio.Event()
        self.stored = asyncio.Event()

    async def __call__(self, event: Event) -> None:
        if isinstance(event, Inbound):
            self.storing.set()
            await self.stored.wait()
        await super().__call__(event)


async def test_a_message_is_acknowledged_only_once_the_gateway_has_stored_it(
    fake: FakeSlack,
) -> None:
    gateway = Holding()
    async with recorded_slack(fake, gateway):
        held = await fake.push(fake.dm(ALICE, "keep me"))
        await gateway.storing.wait()
        # Acknowledged in the socket's order: an envelope pushed later and handled at once.
        later = await fake.push(fake.dm(ALICE, "joined", subtype="channel_join"))
        await fake.wait_for(lambda: later in fake.acks)
        assert held not in fake.acks
        gateway.stored.set()
        await fake.wait_for(lambda: held in fake.acks)
