"""Slack's slash-command door under hypothesis: a `slash_commands` envelope damaged at one
to three places (any JSON value where a field should be, or nesting past Python's
recursion limit) is either refused by `read_envelope` (dropped, logged) or dispatched by
slack-bolt to kioku's command listener without an error, and becomes an `Inbound` whose
text is a command the gateway reads. bolt acknowledges before the listener goes on, so
each example waits for the listener's delivery."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import Inbound
from adapters.slack.commands import ANY_COMMAND, SlackCommands
from adapters.slack.envelopes import read_envelope
from gateway.commands.parsing import parse
from tests.fakes.slack import BOT_USER, FakeSlack
from tests.security.test_doors_platforms_fuzz import FUZZ, _Errors, damaged

Bolt = tuple[asyncio.AbstractEventLoop, AsyncApp, asyncio.Queue[Inbound]]
WITHIN = 5.0


@pytest.fixture(scope="module")
def bolt() -> Iterator[Bolt]:
    """slack-bolt with kioku's command listener, on a loop of its own, against the fake."""
    loop = asyncio.new_event_loop()
    fake = loop.run_until_complete(FakeSlack().start())
    client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
    app = AsyncApp(client=client, signing_secret="", request_verification_enabled=False)
    delivered: asyncio.Queue[Inbound] = asyncio.Queue()

    async def deliver(inbound: Inbound) -> None:
        delivered.put_nowait(inbound)

    async def name(user: str) -> str | None:
        return None

    app.command(ANY_COMMAND)(SlackCommands(client, deliver, name, BOT_USER).on_command)
    yield loop, app, delivered
    loop.run_until_complete(fake.close())
    loop.close()


def envelope() -> dict[str, Any]:
    command = FakeSlack().slash_command("U0ALICE", "/remember", "tea, <@U0BOB> & cake")
    return {"envelope_id": "e-1", "type": "slash_commands", "payload": command}


@FUZZ
@given(damaged(envelope()))
def test_a_command_read_envelope_lets_through_reaches_the_gateway_without_an_error(
    bolt: Bolt, raw: str
) -> None:
    loop, app, delivered = bolt
    message = read_envelope(raw, socket_mode=True)
    if message is None or not isinstance(message.get("payload"), dict):
        return
    errors = _Errors()
    logging.getLogger().addHandler(errors)
    try:
        request = AsyncBoltRequest(mode="socket_mode", body=message["payload"])
        loop.run_until_complete(app.async_dispatch(request))
        if "command" in message["payload"]:
            inbound = loop.run_until_complete(asyncio.wait_for(delivered.get(), WITHIN))
            assert parse(inbound.text) is not None
    finally:
        logging.getLogger().removeHandler(errors)
    assert errors.seen == []
