"""A Slack adapter alone against the fake Slack, handing its events to a recorder instead
of a gateway, with the catch-up plans a test gives it: for the tests of what the adapter
hands over (`Inbound`, `Missed`, `Changed`), not of what the gateway makes of it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from adapters.base import Changed, Event, Inbound, Missed
from adapters.catch_up import OFF, CatchUpPlan, Cursor
from adapters.slack.adapter import SlackAdapter
from tests.fakes.slack import FakeSlack

E = TypeVar("E", Inbound, Missed, Changed)
MAX_MESSAGES = 50
DAY = 86_400.0


def plan(*cursors: Cursor, max_messages: int = MAX_MESSAGES) -> CatchUpPlan:
    """A plan reading after each cursor, catch-up on (a day's `max_age`)."""
    return CatchUpPlan(cursors, DAY, max_messages)


class Recorder:
    """The adapter's `deliver`: keeps each event, in order, and wakes whoever waits."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.plans: list[CatchUpPlan] = []  # what each pass was given, in order
        self.plan: CatchUpPlan = OFF  # what the next pass is given
        self._changed = asyncio.Condition()

    async def __call__(self, event: Event) -> None:
        async with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    async def catch_up(self) -> CatchUpPlan:
        """The adapter's catch-up source."""
        async with self._changed:
            self.plans.append(self.plan)
            self._changed.notify_all()
        return self.plan

    def of(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]

    async def wait(self, kind: type[E], count: int = 1, within: float = 10.0) -> list[E]:
        """Once at least `count` events of `kind` were delivered: all of them."""
        await self.wait_until(lambda: len(self.of(kind)) >= count, within)
        return self.of(kind)

    async def wait_until(self, predicate: Callable[[], bool], within: float = 10.0) -> None:
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(predicate)


@asynccontextmanager
async def recorded_slack(
    fake: FakeSlack, recorder: Recorder, *, http: bool = False
) -> AsyncIterator[SlackAdapter]:
    """A running adapter (Socket Mode, or HTTP mode on a free port) delivering to `recorder`."""
    tokens = {"signing_secret": "signing-secret", "listen": "127.0.0.1:0"}
    adapter = SlackAdapter(
        recorder,
        bot_token=fake.bot_token,
        base_url=fake.base_url,
        ping_interval=0.2,
        catch_up=recorder.catch_up,
        **(tokens if http else {"app_token": "xapp-test"}),  # type: ignore[arg-type]
    )
    await adapter.start()
    try:
        yield adapter
    finally:
        await adapter.stop()
