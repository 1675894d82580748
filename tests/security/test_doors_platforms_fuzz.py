"""The platform doors' readers under hypothesis, at the depths the real parsers break at.

Each strategy takes a well-formed event and damages it: nesting a few thousand levels
deep (past Python's recursion limit) at a random place, or a value of any JSON type where
a field should be. Whatever comes out, the reader's refusal is its own (dropped, logged)
and what it lets through is something the platform library handles without an error:
python-telegram-bot builds every update `read_answer` keeps, discord.py's failures on a
frame are all among the ones `BoundedGateway` drops, and slack-bolt dispatches every
envelope `read_envelope` lets through without logging an error.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient
from telegram import Update

from adapters.discord.frames import FRAME_ERRORS, check_frame
from adapters.discord.inbound import to_inbound as discord_inbound
from adapters.slack.envelopes import read_envelope
from adapters.slack.files import SlackFiles
from adapters.slack.inbound import to_inbound as slack_inbound
from adapters.telegram.inbound import to_inbound as telegram_inbound
from adapters.telegram.updates import UpdatesMalformed, read_answer
from config.platform_settings import DiscordSettings
from tests.fakes.discord import BOT_USER, FakeDiscord
from tests.fakes.slack import BOT_USER as SLACK_BOT
from tests.fakes.slack import FakeSlack, event_callback
from tests.security.test_fuzz_platforms import messages_from

FUZZ = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JUNK = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)
MARK = "\x00kioku-nested\x00"


@st.composite
def nested(draw: st.DrawFn) -> str:
    """JSON nested 1 to 3,000 levels deep (Python's limit is 1,000), closed or not."""
    depth = draw(st.integers(1, 3000))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a": ', "}")]))
    leaf = draw(st.sampled_from(["1", '"x"', "null", "[]", "{}"]))
    return opener * depth + leaf + (closer * depth if draw(st.booleans()) else "")


def places(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into `data` (keys and indexes) where a value sits."""
    yield path
    if isinstance(data, dict | list):
        for key, value in data.items() if isinstance(data, dict) else enumerate(data):
            yield from places(value, (*path, key))


@st.composite
def damaged(draw: st.DrawFn, data: Any) -> str:
    """`data` as JSON text with one to three values replaced: by anything JSON holds, or by
    a deep nesting spliced in as text (no encoder could write it)."""
    data = json.loads(json.dumps(data))
    deep = None
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(places(data))[1:]))
        holder = data
        for key in path[:-1]:
            holder = holder[key]
        if deep is None and draw(st.booleans()):
            deep = draw(nested())
            holder[path[-1]] = MARK
        else:
            holder[path[-1]] = draw(JUNK)
    text = json.dumps(data)
    return text.replace(json.dumps(MARK), deep, 1) if deep is not None else text


# -- Telegram -----------------------------------------------------------------------------

SENDER = {"id": 5, "is_bot": False, "first_name": "A", "last_name": "B", "username": "a"}
TELEGRAM = {
    "update_id": 7,
    "message": {
        "message_id": 2, "date": 1_700_000_000, "message_thread_id": 3, "is_topic_message": True,
        "chat": {"id": -100, "type": "supergroup", "title": "g", "is_forum": True},
        "from": SENDER,
        "text": "@kioku_bot hi", "entities": [{"type": "mention", "offset": 0, "length": 10}],
        "reply_to_message": {"message_id": 1, "date": 1_699_999_999, "text": "earlier",
                             "chat": {"id": -100, "type": "supergroup"},
                             "from": {"id": 999, "is_bot": True, "first_name": "K"}},
    },
}  # fmt: skip


def good_update(update_id: int) -> str:
    return json.dumps({**TELEGRAM, "update_id": update_id})


@FUZZ
@given(damaged(TELEGRAM))
def test_a_getupdates_answer_keeps_the_updates_kioku_can_read_and_drops_the_rest(
    update: str,
) -> None:
    answer = f'{{"ok": true, "result": [{good_update(6)}, {update}, {good_update(8)}]}}'
    try:
        kept = read_answer(answer.encode())["result"]
    except UpdatesMalformed:
        return  # the damage reached the answer's own shape
    ids = [item["update_id"] for item in kept]
    assert ids[0] == 6 and ids[-1] == 8 and len(ids) in (2, 3)
    for item in kept:
        inbound = telegram_inbound(Update.de_json(item), 999, "kioku_bot")
        assert inbound is None or all(isinstance(v, str) for v in (inbound.text, inbound.chat))


# -- Discord ------------------------------------------------------------------------------


def discord_message() -> dict[str, Any]:
    """A guild message that mentions kioku, replies to it and carries a file."""
    fake = FakeDiscord()
    earlier = fake.message("earlier", author=BOT_USER)
    return fake.mention("hi", reply_to=earlier, attachments=[fake.attachment("a.png", "image/png")])


@FUZZ
@given(damaged(discord_message()))
def test_whatever_discord_py_raises_on_a_damaged_message_create_is_a_drop(data: str) -> None:
    try:
        check_frame(data)
        received, me = messages_from(json.loads(data))
    except FRAME_ERRORS:
        return  # what BoundedGateway drops with discord_frame_malformed
    for message in received:  # on_message, outside BoundedGateway: it must not raise
        inbound = discord_inbound(message, me, DiscordSettings())
        assert inbound is None or all(isinstance(v, str) for v in (inbound.text, inbound.chat))


# -- Slack --------------------------------------------------------------------------------


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record.getMessage()[:200])


@pytest.fixture(scope="module")
def bolt() -> Iterator[tuple[asyncio.AbstractEventLoop, AsyncApp, FakeSlack]]:
    """slack-bolt with kioku's listeners, on a loop of its own, against the fake Slack."""
    loop = asyncio.new_event_loop()
    fake = loop.run_until_complete(FakeSlack().start())
    client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
    app = AsyncApp(client=client, signing_secret="", request_verification_enabled=False)

    async def on_event(body: dict[str, Any], event: dict[str, Any]) -> None:
        slack_inbound(body, event, SLACK_BOT, SlackFiles("xoxb-test", fake.base_url))

    app.event("message")(on_event)
    app.event("app_mention")(on_event)
    yield loop, app, fake
    loop.run_until_complete(fake.close())
    loop.close()


FILE = {"id": "F1", "name": "a.png", "mimetype": "image/png", "size": 1}
ENVELOPE = {
    "envelope_id": "e-1",
    "type": "events_api",
    "payload": event_callback(
        FakeSlack().mention("U0ALICE", "hi", thread_ts="1.000100", files=[FILE], user_team="T0")
    ),
}


@FUZZ
@given(damaged(ENVELOPE))
def test_an_envelope_read_envelope_lets_through_is_dispatched_by_bolt_without_an_error(
    bolt: tuple[asyncio.AbstractEventLoop, AsyncApp, FakeSlack], raw: str
) -> None:
    loop, app, _ = bolt
    envelope = read_envelope(raw, socket_mode=True)
    if envelope is None or not isinstance(envelope.get("payload"), dict):
        return
    errors = _Errors()
    logging.getLogger().addHandler(errors)
    try:
        request = AsyncBoltRequest(mode="socket_mode", body=envelope["payload"])
        loop.run_until_complete(app.async_dispatch(request))
    finally:
        logging.getLogger().removeHandler(errors)
    assert errors.seen == []
