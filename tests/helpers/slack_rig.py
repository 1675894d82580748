"""A Slack adapter behind a real gateway, talking to the fake Slack, with Alice as a known
person: in Socket Mode, or in HTTP mode for the tests that post signed requests to its
events URL as Slack does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from adapters.slack.adapter import EVENTS_PATH, SlackAdapter
from tests.fakes.slack import TEAM, FakeSlack
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

SECRET = "signing-secret"
ALICE = "U0ALICE"


@asynccontextmanager
async def slack(
    home: Path, fake: FakeSlack, **options: float
) -> AsyncIterator[tuple[GatewayRig, SlackAdapter]]:
    """A running Socket Mode adapter; `ping_interval` and `give_up_after` may be set."""
    async with gateway_rig(home) as rig:
        await rig.person("alice", f"slack:{TEAM}:{ALICE}")
        adapter = SlackAdapter(
            rig.gateway.handle,
            bot_token="xoxb-test",
            app_token="xapp-test",
            base_url=fake.base_url,
            ping_interval=options.get("ping_interval", 0.2),
            give_up_after=options.get("give_up_after", 300.0),
        )
        rig.adapters["slack"] = adapter  # type: ignore[assignment]
        await adapter.start()
        try:
            yield rig, adapter
        finally:
            await adapter.stop()


@asynccontextmanager
async def http_slack(home: Path, fake: FakeSlack) -> AsyncIterator[str]:
    """The events URL of a running HTTP-mode adapter."""
    async with gateway_rig(home) as rig:
        await rig.person("alice", f"slack:{TEAM}:{ALICE}")
        adapter = SlackAdapter(
            rig.gateway.handle,
            bot_token="xoxb-test",
            signing_secret=SECRET,
            listen="127.0.0.1:0",
            base_url=fake.base_url,
        )
        rig.adapters["slack"] = adapter  # type: ignore[assignment]
        await adapter.start()
        try:
            yield f"http://127.0.0.1:{adapter.port}{EVENTS_PATH}"
        finally:
            await adapter.stop()
