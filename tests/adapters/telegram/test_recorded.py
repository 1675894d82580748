"""Recorded real Telegram updates (tests/fixtures/recorded/telegram/), each handed raw to
a running `kioku serve` through both doors, getUpdates and the webhook: what a person would
expect an answer to is answered exactly once, everything else is left unanswered, and
neither logs a `*_malformed` line, an ERROR, or anything unhandled (nor does the webhook
refuse a real update, which Telegram would send again and again).

One daemon and one fake Telegram per door serve the whole module. Each test marks the
daemon's log, delivers its update (ids re-pointed at the fakes, `telegram_recorded.repoint`),
then sends the owner's next DM the same way and waits for its answer: updates are read in
order, so by then the recorded one has been read, and answered if it was going to be.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from adapters.telegram.updates import SECRET_HEADER
from tests.fakes.telegram import BOT, Call, FakeTelegram
from tests.fakes.telegram_recorded import names, recorded, repoint
from tests.helpers.daemon import WAIT
from tests.helpers.door_daemon import DoorLog, door_daemon, free_port
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.media import media
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

in_module_loop = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")

GROUP = -1001000000777  # the group kioku is in; it answers there only when addressed
BOT_ID = BOT["id"]
HOOK = "/telegram/hook"
SECRET = "recorded-secret"


@dataclass(frozen=True)
class Expect:
    """What a person expects of kioku for one recorded update, and whose ids are whose:
    `ids` maps the capture's user and chat ids to the fake's (`OWNER_CHAT`, `GROUP`,
    `BOT_ID`), `usernames` the capture's bot username to ours."""

    answered: bool
    ids: dict[int, int] = field(default_factory=dict)
    usernames: dict[str, str] = field(default_factory=dict)


def owner(*ids: int) -> dict[int, int]:
    """A DM from the owner: the capture's sender and chat become the owner's."""
    return dict.fromkeys(ids, OWNER_CHAT)


def group(*ids: int) -> dict[int, int]:
    return dict.fromkeys(ids, GROUP)


EXPECTED: dict[str, Expect] = {
    # A person's DM is answered, whatever it holds: text, nulls, forwards, files, a sticker.
    "private-text-link-preview": Expect(True, owner(218485655)),
    "private-text-digit": Expect(True, owner(408258968)),
    "private-text-cyrillic-emoji": Expect(True, owner(250918540)),
    "private-sticker": Expect(True, owner(250918540)),
    "private-photo": Expect(True, owner(250918540)),
    "private-photo-caption-entities": Expect(True, owner(27433968)),
    "private-photo-nulls": Expect(True, owner(1234567)),
    "private-video": Expect(True, owner(250918540)),
    "private-forward-origin-user-nulls": Expect(True, owner(1234567)),
    "private-forward-origin-hidden-user": Expect(True, owner(1234567)),
    "private-forward-origin-channel": Expect(True, owner(1234567)),
    "private-document": Expect(True, owner(12345678)),
    "private-voice": Expect(True, owner(12345678)),
    # From an older Bot API: no `file_unique_id` (before 4.5).
    "private-voice-bot-api-2017": Expect(True, owner(12345678)),
    "private-text-before-its-edit": Expect(True, owner(1173180004)),
    # A DM with nothing in it (Telegram's "empty" message: no sender, no content).
    "private-empty-message": Expect(False, owner(1234567890)),
    # In a group kioku answers only when addressed: `/command@itsname`, a reply to it.
    "group-command-at-the-bot": Expect(True, group(-275439610), {"pinkjjbot": BOT["username"]}),
    "group-mention-of-the-bot-with-a-command": Expect(
        True, group(-348651357), {"nvt_ssh_bot": BOT["username"]}
    ),
    "supergroup-reply-to-the-bot": Expect(
        True, group(-1001389039341) | {580288862: BOT_ID}, {"pinkjjbot": BOT["username"]}
    ),
    # None of these address it.
    "supergroup-story": Expect(False, group(-1001293752024)),
    "supergroup-bare-command-reply-to-story": Expect(False, group(-1001293752024)),
    "supergroup-pinned-message": Expect(False, group(-1001276785818)),
    "supergroup-dice": Expect(False, group(-1001276785818)),
    "supergroup-anonymous-admin-forward": Expect(False, group(-1001160242915)),
    "supergroup-document-every-field-null": Expect(False, group(-9877654320000)),
    "forum-topic-created": Expect(False, group(-1001847508954)),
    "forum-topic-message": Expect(False, group(-1001847508954)),
    # In a topic kioku opened, a message "replies" to the topic's creation, not to kioku.
    "forum-topic-person-in-a-topic-the-bot-opened": Expect(
        False,
        group(-1001854699958) | {5950953118: BOT_ID},
        {"telik_dev_operator_bot": BOT["username"]},
    ),
    "forum-topic-edited-by-the-bot": Expect(
        False, group(-1001971186208) | {6129457865: BOT_ID}, {"sicheebot": BOT["username"]}
    ),
    "group-new-chat-members": Expect(False, group(-999999999999)),
    "group-left-chat-member-the-bot": Expect(
        False, group(-217850512) | {136508315: BOT_ID}, {"HuginnNotificationBot": BOT["username"]}
    ),
    "group-migrate-to-supergroup": Expect(False, group(-599075523)),
    # From an older Bot API: no `is_bot` (before 3.0), no `file_unique_id`.
    "supergroup-voice-bot-api-2016": Expect(False, group(-1001043020159)),
    # An edit updates the stored message it names (here none: it was sent elsewhere) and
    # is never answered.
    "edited-message": Expect(False, owner(12345678)),
    "edited-message-hashtag": Expect(False, owner(1173180004)),
    "supergroup-edited-message-entities": Expect(False, group(-1001249263243)),
    # Kinds kioku does not read (it asks for `message` and `edited_message` only).
    "channel-post-text": Expect(False),
    "channel-post-pinned-message": Expect(False),
    "my-chat-member-kicked": Expect(False, owner(0) | {1: BOT_ID}),
    "chat-member-banned": Expect(False, owner(1234567)),
    "message-reaction": Expect(False),
    "callback-query-inline": Expect(False, owner(12345)),
    "callback-query-inline-message": Expect(False, owner(894075106)),
    "callback-query-inaccessible-message": Expect(False, owner(1234567)),
}


def test_every_recorded_update_has_an_expectation() -> None:
    assert sorted(EXPECTED) == names()


def test_a_command_to_the_recorded_bot_is_repointed_at_ours_with_its_entity() -> None:
    message = repoint(
        recorded("group-command-at-the-bot"), {}, usernames={"pinkjjbot": "kioku_bot"}
    )
    assert message["message"]["text"] == "/jj@kioku_bot"
    assert message["message"]["entities"] == [{"offset": 0, "length": 13, "type": "bot_command"}]


def test_a_mention_of_the_recorded_bot_renamed_shorter_keeps_its_entity_on_the_name() -> None:
    update = repoint(
        recorded("group-mention-of-the-bot-with-a-command"),
        {},
        usernames={"nvt_ssh_bot": "kioku_bot"},
    )
    assert update["message"]["text"] == "/my_id @kioku_bot"
    assert update["message"]["entities"] == [
        {"offset": 0, "length": 6, "type": "bot_command"},
        {"offset": 7, "length": 10, "type": "mention"},
    ]


class Replay:
    """A door's daemon and fake Telegram, and the numbers that keep captures apart:
    updates go to getUpdates, or are POSTed to the webhook on `port`."""

    def __init__(self, tg: FakeTelegram, log: DoorLog, port: int | None = None) -> None:
        self.tg = tg
        self.log = log
        self.port = port
        self.shifts = count(1)
        self.sentinels = count(1)

    async def deliver(self, update: dict[str, Any]) -> None:
        """Hand `update` to kioku raw; the webhook must take it (200)."""
        raw = json.dumps(update, ensure_ascii=False).encode()
        if self.port is None:
            await self.tg.inject(raw)
            return
        headers = {SECRET_HEADER: SECRET, "Content-Type": "application/json"}
        url = f"http://127.0.0.1:{self.port}{HOOK}"
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, data=raw, headers=headers) as got,
        ):
            assert got.status == 200, await got.text()

    def update(self, name: str) -> dict[str, Any]:
        """The recorded update `name`, re-pointed, under the next update_id, its message
        dated now; its files served (sound as a real OGG, text as a real CSV, anything
        else as a real JPEG)."""
        expect = EXPECTED[name]
        shift = 10_000_000 * next(self.shifts)  # past any recorded message id
        update = repoint(recorded(name), expect.ids, shift=shift, usernames=expect.usernames)
        update["update_id"] = self.tg.new_update_id()
        message = update.get("message")
        if isinstance(message, dict) and message.get("date"):
            # Sent now: kioku takes a message dated before it started for one it missed.
            # (Telegram's empty message keeps its recorded date 0.)
            message["date"] = int(time.time())
        for kind, file_id, mime_type in _files(update):
            self.tg.host(file_id, media(_stand_in(kind, mime_type)))
        return update

    async def owner_answered(self) -> int:
        """The owner's next DM is answered (every update before it has been read); its
        message id."""
        text = f"sentinel {next(self.sentinels)}"
        owner = {"id": OWNER_CHAT, "type": "private", "first_name": "Owner"}
        sentinel = self.tg.message(owner, OWNER_CHAT, text)
        await self.deliver({"update_id": self.tg.new_update_id(), "message": sentinel})
        while not any(call.text == f"echo: {text}" for call in self.tg.sent()):
            await self.tg.wait_for("sendMessage", count=len(self.tg.sent()) + 1, within=WAIT)
        return int(sentinel["message_id"])

    async def answer_to(self, chat: int, message_id: int) -> None:
        while not self.replies(chat, message_id):
            await self.tg.wait_for("sendMessage", count=len(self.tg.sent()) + 1, within=WAIT)

    def replies(self, chat: int, message_id: int) -> list[Call]:
        return [
            call
            for call in self.tg.calls
            if call.method in ("sendMessage", "sendDocument")
            and call.params.get("chat_id") == str(chat)
            and _replied_to(call) == message_id
        ]

    def to_chat(self, chat: int) -> list[Call]:
        """Every call about `chat`: typing, messages, files."""
        return [call for call in self.tg.calls if call.params.get("chat_id") == str(chat)]

    def sent_to(self, chat: int) -> list[Call]:
        return [c for c in self.to_chat(chat) if c.method in ("sendMessage", "sendDocument")]


@module_fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["polling", "webhook"])
async def replay(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic
) -> AsyncIterator[Replay]:
    port = free_port() if request.param == "webhook" else None
    async with FakeTelegram() as tg:
        env = telegram_env(tg)
        if port is not None:
            env |= {
                "KIOKU_TELEGRAM__WEBHOOK_URL": f"https://kioku.example{HOOK}",
                "KIOKU_TELEGRAM__WEBHOOK_LISTEN": f"127.0.0.1:{port}",
                "KIOKU_TELEGRAM__WEBHOOK_SECRET": SECRET,
            }
        async with door_daemon(tmp_path_factory.mktemp(request.param), api, **env) as daemon:
            ready = Replay(tg, DoorLog(daemon.log), port)
            await ready.owner_answered()
            yield ready


@in_module_loop
@pytest.mark.parametrize("name", [name for name, e in EXPECTED.items() if e.answered])
async def test_a_recorded_update_a_person_expects_answered_is_answered_once(
    replay: Replay, name: str
) -> None:
    replay.log.begin()
    update = replay.update(name)
    message = update["message"]
    await replay.deliver(update)
    await replay.answer_to(message["chat"]["id"], message["message_id"])
    await replay.owner_answered()
    assert len(replay.replies(message["chat"]["id"], message["message_id"])) == 1
    assert_logged_cleanly(replay.log)


@in_module_loop
@pytest.mark.parametrize("name", [name for name, e in EXPECTED.items() if not e.answered])
async def test_a_recorded_update_nobody_expects_answered_is_left_unanswered(
    replay: Replay, name: str
) -> None:
    replay.log.begin()
    update = replay.update(name)
    chats = {chat for chat in _chat_ids(update) if chat != OWNER_CHAT}
    before = {chat: len(replay.to_chat(chat)) for chat in chats}
    owner_before = len(replay.sent_to(OWNER_CHAT))
    await replay.deliver(update)
    sentinel = await replay.owner_answered()
    assert {chat: len(replay.to_chat(chat)) for chat in chats} == before
    to_owner = replay.sent_to(OWNER_CHAT)[owner_before:]
    assert [_replied_to(call) for call in to_owner] == [sentinel]
    assert_logged_cleanly(replay.log)


def assert_logged_cleanly(log: DoorLog) -> None:
    events = [line for line in log.text().splitlines() if "_malformed" in line]
    assert events == []
    assert '"level": "error"' not in log.text()
    assert log.unhandled() == []


def _replied_to(call: Call) -> int | None:
    raw = call.params.get("reply_parameters")
    return json.loads(raw)["message_id"] if raw else None


def _stand_in(kind: str, mime_type: str) -> str:
    """The test medium served for a recorded file: a sound, a text, or a photo."""
    if kind in ("voice", "audio"):
        return "voice.ogg"
    return "notes.csv" if mime_type.startswith("text/") else "receipt.jpg"


def _files(value: Any, kind: str = "") -> Iterator[tuple[str, str, str]]:
    """(the field that holds it, file_id, its declared mime_type or "") for every file in
    `value`."""
    if isinstance(value, dict):
        mime_type = value.get("mime_type")
        for key, item in value.items():
            if key == "file_id" and isinstance(item, str):
                yield kind, item, mime_type if isinstance(mime_type, str) else ""
            else:
                yield from _files(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _files(item, kind)


def _chat_ids(value: Any) -> Iterator[int]:
    if isinstance(value, dict):
        chat = value.get("chat")
        if isinstance(chat, dict) and isinstance(chat.get("id"), int):
            yield chat["id"]
        for item in value.values():
            yield from _chat_ids(item)
    elif isinstance(value, list):
        for item in value:
            yield from _chat_ids(item)
