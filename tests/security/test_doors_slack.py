"""Slack's doors under the hostile corpus: `kioku serve` in Socket Mode on the fake's
websocket, and a second one in HTTP Events API mode. An envelope Slack never sends (too
deep, too big, not JSON, not UTF-8, of a shape slack-bolt or kioku would fail on) is
dropped with `slack_event_malformed` at WARNING; one of a type kioku does not read is
acknowledged and ignored; over HTTP a body over the size limit gets 413, one
not signed 401, one that is no event 400. Nothing is left unhandled, the next good event
is answered, and the history stored before is unchanged."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from adapters.slack.adapter import EVENTS_PATH
from adapters.slack.envelopes import MAX_EVENT_BYTES
from tests.fakes.slack import TEAM, FakeSlack, event_callback, signed_headers
from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.door_daemon import Door, door_daemon, free_port, is_utf8
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.hostile import DEEP, ITEMS, json_items

pytestmark = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")

OWNER = "U0OWNER"
SECRET = "signing-secret"
DROP = "slack_event_malformed"
WEBSOCKET_LIMIT = 4 * 1024 * 1024  # aiohttp's: a bigger frame closes the socket


def dm(**fields: Any) -> dict[str, Any]:
    """A DM event from the owner with `fields` replaced."""
    return FakeSlack().dm(OWNER, "hi") | fields


def body(event: Any = None, **fields: Any) -> bytes:
    """An Events API body for `event` (a DM by default) with `fields` replaced."""
    return json.dumps(event_callback(dm()) | {"event": event or dm()} | fields).encode()


def raw_event(raw: bytes) -> bytes:
    return body(event="EVENT").replace(b'"EVENT"', raw)


# Events API bodies Slack never sends: the same in a Socket Mode envelope and over HTTP.
HOSTILE_BODIES = {
    **{f"event-is-{name}": raw_event(item) for name, item in json_items()},
    "text-100000-deep": raw_event(
        json.dumps(dm(text="TEXT")).encode().replace(b'"TEXT"', b"[" * DEEP + b"]" * DEEP)
    ),
    "event-is-a-string": body(event="message"),
    "team-id-is-a-number": body(team_id=7),
    "authorizations-is-a-string": body(authorizations="bot"),
    "an-authorization-is-a-number": body(authorizations=[1]),
    "enterprise-is-a-list": body(enterprise=["E1"]),
    "event-channel-is-a-number": body(event=dm(channel=5)),
    "event-subtype-is-an-object": body(event=dm(subtype={"a": 1})),
    "event-user-is-an-object": body(event=dm(user={"id": OWNER})),
    "event-text-is-a-number": body(event=dm(text=42)),
    "event-files-is-a-string": body(event=dm(files="a.png")),
}


def envelope(payload: bytes, **fields: Any) -> bytes:
    """A Socket Mode events_api message carrying `payload` (raw bytes)."""
    head = {"envelope_id": "e-1", "type": "events_api", **fields}
    return json.dumps(head | {"payload": "PAYLOAD"}).encode().replace(b'"PAYLOAD"', payload)


def unread(raw: bytes) -> bool:
    """Whether `raw` decodes to a JSON object within the size limit, but one that is no
    event: slack-bolt takes it, no listener does, and kioku acknowledges and ignores it."""
    try:
        value = json.loads(raw.decode())
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and "event" not in value and len(raw) <= MAX_EVENT_BYTES


UNREAD = {name for name, raw in ITEMS.items() if unread(raw)}
# What slack-bolt reads and kioku acknowledges and ignores: such an object as the body, as
# a Socket Mode message's payload, or as the body's event (an event without a type).
IGNORED = {
    *UNREAD,
    *(f"{where}{name}" for name in UNREAD for where in ("payload-is-", "event-is-")),
    *(f"body-event-is-{name}" for name in UNREAD),
}

HOSTILE_ENVELOPES = {
    **{f"body-{name}": envelope(raw) for name, raw in HOSTILE_BODIES.items()},
    **{f"payload-is-{name}": envelope(item) for name, item in json_items()},
    "envelope-id-is-a-list": envelope(body(), envelope_id=["e-1"]),
    "type-is-a-number": envelope(body(), type=5),
}
SOCKET_FRAMES = {**ITEMS, **HOSTILE_ENVELOPES}


class Served(Door):
    """A daemon's Slack door: Socket Mode, or HTTP mode on `port`."""

    def __init__(self, daemon: Daemon, slack: FakeSlack, port: int | None = None) -> None:
        super().__init__(daemon)
        self.slack = slack
        self.port = port

    async def answers(self) -> None:
        text = self.good_text()
        event = self.slack.dm(OWNER, text)
        if self.port is None:
            await self.slack.push(event)
        else:
            assert await self.post(json.dumps(event_callback(event)).encode()) == 200
        echo = f"echo: {text}"
        await self.slack.wait_for(lambda: echo in [p.get("text") for p in self.slack.posted], WAIT)

    async def post(self, raw: bytes, *, signed: bool = True) -> int:
        headers = signed_headers(SECRET if signed else "not-the-secret", raw)
        url = f"http://127.0.0.1:{self.port}{EVENTS_PATH}"
        async with aiohttp.ClientSession() as http, http.post(url, data=raw, headers=headers) as r:
            return r.status

    def dropped(self) -> None:
        record = self.log.event(DROP)
        assert record["level"] == "warning" and record["problem"]

    def ignored(self) -> None:
        assert self.log.events(DROP) == []
        assert "Unhandled request" not in self.log.text()


@module_fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@module_fixture
async def slack() -> AsyncIterator[FakeSlack]:
    fake = await FakeSlack(users={OWNER: "Owner"}).start()
    yield fake
    await fake.close()


def slack_env(slack: FakeSlack, **settings: str) -> dict[str, str]:
    return {
        "KIOKU_OWNER__IDENTITIES": f'["slack:{TEAM}:{OWNER}"]',
        **slack.env(),
        **settings,
    }


@module_fixture
async def socket_mode(
    tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic, slack: FakeSlack
) -> AsyncIterator[Served]:
    # A short silence limit: the SDK notices a socket aiohttp closed within a ping.
    env = slack_env(slack, KIOKU_SLACK__APP_TOKEN="xapp-test", KIOKU_SLACK__SILENCE_LIMIT="1")
    async with door_daemon(tmp_path_factory.mktemp("socket"), api, **env) as daemon:
        served = Served(daemon, slack)
        await served.answers()
        yield served


@module_fixture
async def http_mode(
    tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic, slack: FakeSlack
) -> AsyncIterator[Served]:
    port = free_port()
    env = slack_env(
        slack, KIOKU_SLACK__SIGNING_SECRET=SECRET, KIOKU_SLACK__LISTEN=f"127.0.0.1:{port}"
    )
    async with door_daemon(tmp_path_factory.mktemp("http"), api, **env) as daemon:
        served = Served(daemon, slack, port)
        await served.answers()
        yield served


# -- Socket Mode ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", SOCKET_FRAMES)
async def test_a_hostile_socket_mode_message_is_dropped_and_the_next_event_answered(
    socket_mode: Served, name: str
) -> None:
    before = socket_mode.begin()
    frame = SOCKET_FRAMES[name]
    connections = socket_mode.slack.connections
    await socket_mode.slack.send_raw(frame)
    if len(frame) > WEBSOCKET_LIMIT or not is_utf8(frame):
        # aiohttp refuses the frame and closes the socket; the SDK connects again.
        await socket_mode.slack.wait_for(lambda: socket_mode.slack.connections > connections)
    await socket_mode.held(before)
    if name in IGNORED and name not in ITEMS:  # a bare object is no Socket Mode message
        socket_mode.ignored()
    else:
        socket_mode.dropped()


# Bodies slack-bolt reads but no listener takes.
UNREAD_BODIES = {
    "type-is-a-list": body(type=["event_callback"]),
    "event-type-is-a-list": body(event=dm(type=["message"])),
}


@pytest.mark.parametrize("name", UNREAD_BODIES)
async def test_a_body_of_a_type_kioku_does_not_read_is_acknowledged_without_a_warning(
    socket_mode: Served, name: str
) -> None:
    before = socket_mode.begin()
    envelope_id = f"e-unread-{name}"
    await socket_mode.slack.send_raw(envelope(UNREAD_BODIES[name], envelope_id=envelope_id))
    await socket_mode.slack.wait_for(lambda: envelope_id in socket_mode.slack.acks)
    await socket_mode.held(before)
    socket_mode.ignored()


# -- HTTP mode -----------------------------------------------------------------------------


def http_bodies() -> dict[str, tuple[bytes, set[int]]]:
    """Each body and what HTTP mode may answer: 413 over the size limit, 400 for a body
    that is not an event kioku reads, 200 for an event whose message kioku then drops, and
    for an object that is no event, acknowledged and ignored."""
    bodies = {name: (raw, {200} if name in IGNORED else {400}) for name, raw in ITEMS.items()}
    bodies |= {name: (raw, {400, 200}) for name, raw in HOSTILE_BODIES.items()}
    return {
        name: (raw, {413} if len(raw) > MAX_EVENT_BYTES else statuses)
        for name, (raw, statuses) in bodies.items()
    }


HTTP_BODIES = http_bodies()


@pytest.mark.parametrize("name", HTTP_BODIES)
async def test_a_hostile_signed_body_is_refused_and_the_next_event_answered(
    http_mode: Served, name: str
) -> None:
    before = http_mode.begin()
    raw, statuses = HTTP_BODIES[name]
    assert await http_mode.post(raw) in statuses
    await http_mode.held(before)
    if name in IGNORED:
        http_mode.ignored()
    else:
        http_mode.dropped()


@pytest.mark.parametrize("name", ["deep-arrays", "ten-mb-string"])
async def test_an_unsigned_body_is_refused_before_it_is_decoded(
    http_mode: Served, name: str
) -> None:
    before = http_mode.begin()
    raw = ITEMS[name]
    assert await http_mode.post(raw, signed=False) == (413 if len(raw) > MAX_EVENT_BYTES else 401)
    await http_mode.held(before)
    event = DROP if len(raw) > MAX_EVENT_BYTES else "slack_request_refused"
    assert http_mode.log.event(event)["level"] == "warning"
