"""Telegram's doors under the hostile corpus: `kioku serve` polling the fake Bot API, and
a second one serving the webhook. A getUpdates answer or a webhook body that is not
what Telegram sends (too deep, too big, not JSON, the wrong shape, a kind kioku does not
read) is dropped with a log line at WARNING at most; nothing is left unhandled, the next
good update is answered, and the history stored before is unchanged."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from adapters.telegram.updates import MAX_UPDATE_BYTES, SECRET_HEADER
from tests.fakes.telegram import FakeTelegram, Fault
from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.door_daemon import Door, door_daemon, free_port
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.hostile import DEEP, ITEMS, json_items
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

pytestmark = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")

HOOK = "/telegram/hook"
SECRET = "s3cret-token"
OWNER = {"id": OWNER_CHAT, "type": "private", "first_name": "Owner"}
CHAT = b'"chat": {"id": %d, "type": "private"}' % OWNER_CHAT
SENDER = b'"from": {"id": %d, "is_bot": false, "first_name": "Owner"}' % OWNER_CHAT
SENT = 1700000000


def dm(*fields: bytes, sender: bytes = SENDER, chat: bytes = CHAT, date: int = SENT) -> bytes:
    """`"message": ` and a DM's JSON from the owner with `fields` (raw bytes) in it."""
    return b'"message": {"message_id": 7, "date": %d, %s}' % (
        date,
        b", ".join((chat, sender, *fields)),
    )


# Updates Telegram never sends, each as the JSON that follows `"update_id": N, `.
HOSTILE_UPDATES = {
    **{f"message-is-{name}": b'"message": ' + item for name, item in json_items()},
    "entities-100000-deep": dm(b'"text": "hi"', b'"entities": ' + b"[" * DEEP + b"]" * DEEP),
    "text-of-10-mb": dm(b'"text": "' + b"x" * 10 * 1024 * 1024 + b'"'),
    "text-is-a-number": dm(b'"text": 42'),
    "text-is-a-list": dm(b'"text": ["hi"]'),
    "entities-is-a-string": dm(b'"text": "hi"', b'"entities": "mention"'),
    "entity-offset-is-a-string": dm(
        b'"text": "@kioku_bot hi"',
        b'"entities": [{"type": "mention", "offset": "0", "length": 10}]',
    ),
    "sender-id-is-an-object": dm(
        b'"text": "hi"', sender=b'"from": {"id": {"x": 1}, "is_bot": false, "first_name": "O"}'
    ),
    "first-name-is-a-list": dm(
        b'"text": "hi"',
        sender=b'"from": {"id": %d, "is_bot": false, "first_name": ["O"]}' % OWNER_CHAT,
    ),
    "chat-is-a-string": dm(b'"text": "hi"', chat=b'"chat": "private"'),
    "date-past-the-calendar": dm(b'"text": "hi"').replace(b"1700000000", b"1e300"),
    # An edit is read as a message is: refused the same way.
    "edited-message-is-a-list": b'"edited_message": ["not", "a", "message"]',
    "edited-text-is-a-number": dm(b'"text": 42').replace(b'"message"', b'"edited_message"', 1),
    "replied-text-is-a-number": dm(
        b'"text": "hi"', b'"reply_to_message": {"message_id": 1, "date": 1, %s, "text": 5}' % CHAT
    ),
}
UNKNOWN_KINDS = {
    "channel-post": dm(b'"text": "posted"').replace(b'"message"', b'"channel_post"', 1),
    "an-unknown-kind": b'"mystery_update": {"what": [1, 2, {"deeper": true}]}',
    "an-empty-key": b'"": null',
}
# Odd but well-formed texts: answered like any other, with lone surrogates made U+FFFD.
ODD_TEXTS = {
    "lone-surrogates": (b'"\\ud800 and \\udfff"', "\ufffd and \ufffd"),
    "nul-and-controls": (b'"a\\u0000b\\u0007c\\u001bd"', None),
    "bom-and-crlf": (b'"\\ufeffwith\\r\\na BOM"', None),
    "brackets-100000-deep-as-text": (b'"' + b"[" * DEEP + b'"', None),
}
# The webhook reads each update as polling does: a few of the hostile ones show it.
POSTED = ("entities-100000-deep", "text-of-10-mb", "text-is-a-number", "chat-is-a-string")


def webhook_bodies() -> dict[str, tuple[bytes, set[int]]]:
    """Each body and what the webhook may answer: 413 over the size limit, 400 for a body
    that is not an update it reads, 200 for one whose message kioku then drops."""
    bodies = {name: (body, {400}) for name, body in ITEMS.items()}
    for name in POSTED:
        bodies[f"update-{name}"] = (b'{"update_id": 5, ' + HOSTILE_UPDATES[name] + b"}", {200, 400})
    return {
        name: (body, {413} if len(body) > MAX_UPDATE_BYTES else statuses)
        for name, (body, statuses) in bodies.items()
    }


WEBHOOK_BODIES = webhook_bodies()


class Served(Door):
    """A daemon's Telegram door: polling, or the webhook on `port`."""

    def __init__(self, daemon: Daemon, tg: FakeTelegram, port: int | None = None) -> None:
        super().__init__(daemon)
        self.tg = tg
        self.port = port

    async def answers(self) -> None:
        """A good DM (POSTed to the webhook if there is one, else polled) gets its echo."""
        text = self.good_text()
        if self.port is None:
            await self.tg.dm(OWNER_CHAT, text)
        else:
            message = self.tg.message(OWNER, OWNER_CHAT, text)
            update = {"update_id": next(self.numbers), "message": message}
            assert await self.post(json.dumps(update).encode()) == 200
        while not any(call.text == f"echo: {text}" for call in self.tg.sent()):
            await self.tg.wait_for("sendMessage", count=len(self.tg.sent()) + 1, within=WAIT)

    async def post(self, body: bytes, secret: str = SECRET) -> int:
        headers = {SECRET_HEADER: secret, "Content-Type": "application/json"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"http://127.0.0.1:{self.port}{HOOK}", data=body, headers=headers) as answer,
        ):
            return answer.status


@module_fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@module_fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


@module_fixture
async def polling(
    tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic, tg: FakeTelegram
) -> AsyncIterator[Served]:
    async with door_daemon(tmp_path_factory.mktemp("polling"), api, **telegram_env(tg)) as daemon:
        served = Served(daemon, tg)
        await served.answers()
        yield served


@module_fixture
async def webhook(
    tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic, tg: FakeTelegram
) -> AsyncIterator[Served]:
    port = free_port()
    settings = {
        **telegram_env(tg),
        "KIOKU_TELEGRAM__WEBHOOK_URL": f"https://kioku.example{HOOK}",
        "KIOKU_TELEGRAM__WEBHOOK_LISTEN": f"127.0.0.1:{port}",
        "KIOKU_TELEGRAM__WEBHOOK_SECRET": SECRET,
    }
    async with door_daemon(tmp_path_factory.mktemp("webhook"), api, **settings) as daemon:
        served = Served(daemon, tg, port)
        await served.answers()
        yield served


def warned(record: dict[str, Any]) -> None:
    assert record["level"] == "warning" and record["problem"]


# -- polling ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ITEMS)
async def test_a_garbled_getupdates_answer_is_dropped_and_the_next_update_answered(
    polling: Served, name: str
) -> None:
    before = polling.begin()
    await polling.tg.answer_raw(ITEMS[name])
    await polling.held(before)
    warned(polling.log.event("telegram_updates_malformed"))


async def test_a_failed_poll_with_a_10_mb_error_is_logged_in_one_short_line(
    polling: Served,
) -> None:
    before = polling.begin()
    polls = len(polling.tg.sent("getUpdates"))
    polling.tg.fail("getUpdates", Fault("error", 502, "Bad Gateway " + "x" * 10 * 1024 * 1024))
    await polling.tg.wait_for("getUpdates", count=polls + 1, within=WAIT)  # the one failed
    await polling.held(before)
    assert len(polling.log.event("telegram_poll_failed")["error"]) <= 200
    assert max(map(len, polling.log.text().splitlines())) < 10_000


@pytest.mark.parametrize("name", [*HOSTILE_UPDATES, *UNKNOWN_KINDS])
async def test_an_update_kioku_cannot_use_is_logged_by_its_id_and_the_next_one_answered(
    polling: Served, name: str
) -> None:
    """A hostile update is dropped at WARNING; one of a kind kioku does not read, at INFO."""
    before = polling.begin()
    hostile = name in HOSTILE_UPDATES
    update_id = await polling.tg.push_raw((HOSTILE_UPDATES if hostile else UNKNOWN_KINDS)[name])
    await polling.held(before)
    record = polling.log.event(
        "telegram_update_malformed" if hostile else "telegram_update_ignored"
    )
    assert record["update_id"] == update_id
    assert record["level"] == ("warning" if hostile else "info")


@pytest.mark.parametrize("name", ODD_TEXTS)
async def test_a_message_with_odd_text_is_answered_like_any_other(
    polling: Served, name: str
) -> None:
    before = polling.begin()
    text, echoed = ODD_TEXTS[name]
    # Sent now: a message dated before kioku started is one it missed, and this one's
    # answer is the point.
    await polling.tg.push_raw(dm(b'"text": ' + text, date=int(time.time())))
    await polling.held(before)
    if echoed is not None:
        assert f"echo: {echoed}" in [call.text for call in polling.tg.sent()]


# -- the webhook ------------------------------------------------------------------------


@pytest.mark.parametrize("name", WEBHOOK_BODIES)
async def test_a_hostile_webhook_body_is_refused_and_the_next_update_answered(
    webhook: Served, name: str
) -> None:
    before = webhook.begin()
    body, statuses = WEBHOOK_BODIES[name]
    assert await webhook.post(body) in statuses
    await webhook.held(before)
    warned(webhook.log.event("telegram_update_malformed"))


async def test_a_webhook_body_without_the_secret_is_refused_unread(webhook: Served) -> None:
    before = webhook.begin()
    assert await webhook.post(ITEMS["deep-arrays"], secret="wrong") == 403
    await webhook.held(before)
    assert webhook.log.event("telegram_webhook_refused")["level"] == "warning"
