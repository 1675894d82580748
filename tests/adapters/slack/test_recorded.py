"""Every recorded Slack payload (tests/fixtures/recorded/slack/, see its PROVENANCE.md)
sent raw through the fake Slack into a running `kioku serve`, in Socket Mode and in HTTP
mode: each is answered exactly once, where a person expects the answer, or ignored, and
in both cases the log holds no `*_malformed` line, no "Unhandled request" and no ERROR.

One daemon per mode serves the whole module; after each payload a good direct message
is sent and answered, so what the payload caused has been logged by then."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode

import pytest
import pytest_asyncio

from adapters.slack.adapter import EVENTS_PATH
from tests.fakes.slack import (
    RECORDED,
    TEAM,
    FakeSlack,
    envelope,
    event_callback,
    recorded,
)
from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.door_daemon import Door, door_daemon, free_port
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.media import media

pytestmark = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")

PERSON = "U0ALICE"  # the sender the recorded payloads were re-pointed to: the owner here
SECRET = "signing-secret"
PHOTO = media("receipt.jpg")  # the bytes served for a recorded file
# ...but for a text snippet, its own text: its `preview`, the 12 bytes its `size` declares.
SERVED = {"file_share_text_im": b"hug a kitten"}


@dataclass(frozen=True)
class Expected:
    """What a person expects of one recorded payload. `kind`: how it travels (a whole
    Socket Mode message, a body, an HTTP-only body, an interactive body, or an event
    alone, which the fake wraps in its recorded body); `answer`: the channel and thread
    (None: in place) the one answer goes to, or None when kioku ignores it."""

    kind: Literal["socket", "body", "http", "interactive", "event"]
    answer: tuple[str, str | None] | None = None
    downloads: tuple[str, ...] = ()  # file ids fetched with the bot token
    reconnects: bool = False
    http_answer: str = ""  # what the HTTP answer holds


EXPECTED: dict[str, Expected] = {
    # A mention is answered in a thread under it; a DM in place, or in its thread.
    "socket_app_mention": Expected("socket", ("C111", "1605853844.000800")),
    "app_mention_enterprise_null": Expected("body", ("C111", "1678252212.229129")),
    "app_mention_with_photo": Expected("event", ("C111", "1707806347.397809"), ("F111",)),
    "message_im_docs": Expected("body", ("D024BE91L", None)),
    "message_im_thread_reply": Expected("event", ("D111", "1726133698.626339")),
    # Files shared in a direct message: answered in place, each file fetched with the token.
    "file_share_photo_im_docs": Expected("event", ("D0L4B9P0Q", None), ("F0RDC39U1",)),
    "file_share_text_im": Expected("body", ("D0442US94JD", None), ("F04EEHX1EES",)),
    # A channel message that is not a mention: kioku hears mentions as app_mention.
    "socket_message_channels_retry": Expected("socket"),
    "message_channels_docs": Expected("body"),
    "file_share_photo_channel": Expected("body"),
    "file_share_inaccessible_connect": Expected("body"),
    "file_share_audio_channel": Expected("body"),
    "file_share_documents_channel": Expected("body"),
    "thread_broadcast_channel": Expected("body"),
    # Edits and deletions, bots (kioku itself first), joins: nobody writing to kioku.
    "message_changed_channel": Expected("body"),
    "message_changed_group": Expected("body"),
    "message_changed_by_bot": Expected("body"),
    "message_changed_im": Expected("event"),
    "message_deleted_channel": Expected("body"),
    "app_message_own": Expected("body"),
    "bot_message_classic": Expected("body"),
    "member_joined_channel": Expected("body"),
    "app_rate_limited": Expected("body"),
    # The Request URL's check: its challenge is echoed (bolt's url_verification).
    "url_verification": Expected(
        "http", http_answer="3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    ),
    # Interactive payloads: kioku posts nothing to click, so it acknowledges and moves on.
    "socket_interactive_block_actions": Expected("socket"),
    "socket_interactive_shortcut": Expected("socket"),
    "block_actions_enterprise_null": Expected("interactive"),
    # Socket Mode's own messages.
    "socket_hello": Expected("socket"),
    "socket_disconnect": Expected("socket", reconnects=True),
}
# Answers of the Web API (the fake answers with them) and slash commands (their handling
# is tested with the slash commands) are not events.
NOT_EVENTS = ("web_", "slash_command_")


def over_http(name: str) -> bool:
    """Whether Slack sends this payload over HTTP: Events API bodies and interactive
    payloads (form-encoded), not Socket Mode's own messages."""
    expected = EXPECTED[name]
    if expected.kind == "socket":
        return recorded(name).get("type") in ("events_api", "interactive")
    return expected.kind in ("body", "http", "event", "interactive")


def form_encoded(name: str) -> bool:
    """Interactive payloads come as the form field `payload`, not as a JSON body."""
    kind = EXPECTED[name].kind
    return kind == "interactive" or (
        kind == "socket" and recorded(name).get("type") == "interactive"
    )


class Served(Door):
    """A daemon's Slack door: Socket Mode, or HTTP mode on `port`."""

    def __init__(self, daemon: Daemon, slack: FakeSlack, port: int | None = None) -> None:
        super().__init__(daemon)
        self.slack = slack
        self.port = port
        self.stored: list[tuple[str, str]] = []  # the history when the test began

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{EVENTS_PATH}"

    async def answers(self) -> None:
        text = self.good_text()
        event = self.slack.dm(PERSON, text, channel="D0GOOD")
        if self.port is None:
            await self.slack.push(event)
        else:
            status, _ = await self.slack.post_raw(
                self.url, json.dumps(event_callback(event)).encode(), SECRET
            )
            assert status == 200
        echo = f"echo: {text}"
        await self.slack.wait_for(lambda: echo in [p.get("text") for p in self.slack.posted], WAIT)

    def clean(self) -> None:
        """Since the mark: nothing malformed, unhandled or at ERROR."""
        text = self.log.text()
        assert "_malformed" not in text
        assert "Unhandled request" not in text
        assert '"level": "error"' not in text


@module_fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@module_fixture
async def slack() -> AsyncIterator[FakeSlack]:
    fake = await FakeSlack(users={PERSON: "Alice"}).start()
    yield fake
    await fake.close()


def slack_env(slack: FakeSlack, **settings: str) -> dict[str, str]:
    return {
        "KIOKU_OWNER__IDENTITIES": f'["slack:{TEAM}:{PERSON}"]',
        **slack.env(),
        **settings,
    }


@module_fixture
async def socket_mode(
    tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic, slack: FakeSlack
) -> AsyncIterator[Served]:
    env = slack_env(slack, KIOKU_SLACK__APP_TOKEN="xapp-test")
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


def payload_of(name: str, slack: FakeSlack) -> Any:
    """The recorded payload, its files served by the fake."""
    return slack.hosted(recorded(name), SERVED.get(name, PHOTO))


def socket_message(name: str, slack: FakeSlack) -> Any:
    """What Slack sends down the socket for the recorded payload."""
    payload, kind = payload_of(name, slack), EXPECTED[name].kind
    if kind == "socket":
        return payload
    if kind == "interactive":
        return envelope(payload, "interactive")
    return envelope(payload if kind == "body" else event_callback(payload))


def http_body(name: str, slack: FakeSlack) -> bytes:
    """What Slack POSTs for the recorded payload."""
    payload, kind = payload_of(name, slack), EXPECTED[name].kind
    body = payload["payload"] if kind == "socket" else payload
    text = json.dumps(event_callback(body) if kind == "event" else body)
    if form_encoded(name):
        return urlencode({"payload": text}).encode()
    return text.encode()


async def expect(served: Served, name: str, posted: int, downloads: int) -> None:
    """The payload's answer, if any, went where expected, once; nothing else was posted."""
    expected, slack = EXPECTED[name], served.slack
    if expected.answer is not None:
        channel = expected.answer[0]
        await slack.wait_for(lambda: any(p["channel"] == channel for p in slack.posted[posted:]))
    await served.held(served.stored)
    served.clean()
    new = [p for p in slack.posted[posted:] if not str(p.get("text", "")).startswith("echo: good")]
    if expected.answer is None:
        assert new == []
        return
    [answer] = new
    assert (answer["channel"], answer.get("thread_ts")) == expected.answer
    fetched = [d for d in slack.downloads[downloads:] if d.authorization.endswith(slack.bot_token)]
    assert sorted({d.file_id for d in fetched}) == sorted(expected.downloads)


async def test_every_recorded_payload_has_an_expectation() -> None:
    names = {path.stem for path in RECORDED.glob("*.json")}
    assert names - set(EXPECTED) == {name for name in names if name.startswith(NOT_EVENTS)}
    assert set(EXPECTED) <= names


@pytest.mark.parametrize("name", [name for name in EXPECTED if EXPECTED[name].kind != "http"])
async def test_a_recorded_socket_mode_message_is_answered_once_or_ignored_cleanly(
    socket_mode: Served, name: str
) -> None:
    slack = socket_mode.slack
    socket_mode.stored = socket_mode.begin()
    posted, downloads, connections = len(slack.posted), len(slack.downloads), slack.connections
    message = socket_message(name, slack)
    envelope_id = message.get("envelope_id")  # recorded ones repeat: count its acks
    acked = slack.acks.count(envelope_id)
    await slack.inject(message)
    if EXPECTED[name].reconnects:
        await slack.wait_for(lambda: slack.connections > connections)
    elif envelope_id is not None:
        await slack.wait_for(lambda: slack.acks.count(envelope_id) > acked)
    await expect(socket_mode, name, posted, downloads)


@pytest.mark.parametrize("name", [name for name in EXPECTED if over_http(name)])
async def test_a_recorded_http_body_is_answered_once_or_ignored_cleanly(
    http_mode: Served, name: str
) -> None:
    slack = http_mode.slack
    http_mode.stored = http_mode.begin()
    posted, downloads = len(slack.posted), len(slack.downloads)
    form = {"Content-Type": "application/x-www-form-urlencoded"} if form_encoded(name) else {}
    status, text = await slack.post_raw(http_mode.url, http_body(name, slack), SECRET, form)
    assert status == 200 and EXPECTED[name].http_answer in text
    await expect(http_mode, name, posted, downloads)


async def test_the_corpus_keeps_slacks_nulls() -> None:
    [authorization] = recorded("app_mention_enterprise_null")["authorizations"]
    assert authorization["enterprise_id"] is None
    assert recorded("block_actions_enterprise_null")["enterprise"] is None
