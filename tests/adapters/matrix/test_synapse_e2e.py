"""kioku on a real Matrix homeserver: `kioku serve` against the session's Synapse, with
matrix-nio clients standing in for the people's phones (encryption on).

One daemon serves the module (restarted by the tests of restarts, its home kept), one
fake model echoes. The tests run in order, each building on the people the ones before
let in: Alice, a stranger, pairs in an encrypted DM; then she and Bob share a room.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from nio import MegolmEvent, RoomEncryptedImage

from adapters.matrix.keep import undecryptable
from tests.helpers.daemon import Daemon, own_home
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.matrix_phone import Phone
from tests.helpers.paths import KIOKU
from tests.helpers.synapse import Account, Synapse

in_module_loop = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")
pytestmark = in_module_loop

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e226059b0000000049454e44ae426082"
)


@dataclass
class World:
    synapse: Synapse
    bot: Account
    api: GatedAnthropic
    tmp: Path
    alice: Phone
    bob: Phone
    daemon: Daemon | None = None
    starts: int = 0
    rooms: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.tmp / "home"

    def env(self) -> dict[str, str]:
        return {
            **own_home(self.home),
            "KIOKU_MATRIX__HOMESERVER": self.synapse.url,
            "KIOKU_MATRIX__USER_ID": self.bot.user_id,
            "KIOKU_MATRIX__PASSWORD": self.bot.password,
            "KIOKU_MATRIX__POLL_TIMEOUT": "2",
        }

    async def start(self, **extra: str) -> Daemon:
        self.starts += 1
        daemon = Daemon(self.home, self.api, self.tmp, self.starts)
        self.daemon = daemon
        await daemon.start(**self.env(), **extra)
        assert b"matrix" in daemon.ready, daemon.ready
        return daemon

    async def stop(self) -> None:
        assert self.daemon is not None
        self.daemon.signal(signal.SIGTERM)
        assert await self.daemon.exit_code() == 0
        self.daemon.notify.close()
        self.daemon = None

    def kioku(self, *args: str, ok: bool = True) -> str:
        """What `kioku ARGS` prints (it must exit 0 when `ok`)."""
        done = subprocess.run(
            [str(KIOKU), *args],
            env={**self.env(), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0 or not ok, done.stderr
        return done.stdout

    def log(self) -> str:
        assert self.daemon is not None
        return self.daemon.log.read_text("utf-8", "replace")

    def user_turns(self) -> list[tuple[str, str]]:
        db = sqlite3.connect(self.home / "state.db")
        try:
            rows = db.execute(
                "SELECT content, platform_message_id FROM messages WHERE role = 'user' ORDER BY id"
            ).fetchall()
        finally:
            db.close()
        return [(str(text), str(message)) for text, message in rows]


@module_fixture
async def world(synapse: Synapse, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    tmp = tmp_path_factory.mktemp("matrix-e2e")
    bot = await synapse.register("kioku")
    alice_account = await synapse.register("alice")
    bob_account = await synapse.register("bob")
    async with (
        GatedAnthropic() as api,
        Phone(synapse.url, alice_account, tmp / "alice") as alice,
        Phone(synapse.url, bob_account, tmp / "bob") as bob,
    ):
        world = World(synapse, bot, api, tmp, alice, bob)
        try:
            await world.start()
            yield world
            _record(world)
        finally:
            if world.daemon is not None:
                if world.daemon.process is not None and world.daemon.process.returncode is None:
                    world.daemon.process.kill()
                    await world.daemon.process.wait()
                world.daemon.notify.close()


def _record(world: World) -> None:
    """With KIOKU_RECORD_MATRIX=DIR, every event each phone was given goes to DIR as JSON:
    the raw material of tests/fixtures/recorded/matrix/ (its PROVENANCE.md)."""
    folder = os.environ.get("KIOKU_RECORD_MATRIX")
    if not folder:
        return
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for name, phone in (("alice", world.alice), ("bob", world.bob)):
        for number, seen in enumerate(phone.seen):
            kind = seen.event.source.get("type", "unknown")
            where = (
                next(k for k, v in world.rooms.items() if v == seen.room)
                if seen.room in world.rooms.values()
                else "other"
            )
            path = out / f"{name}-{number:03}-{where}-{kind}.json"
            path.write_text(json.dumps(seen.event.source, indent=2, ensure_ascii=False) + "\n")


async def _answer(world: World, phone: Phone, room: str, text: str, **extra: object) -> str:
    mark = len(phone.seen)
    await phone.say(room, text, **extra)
    reply = await phone.reply_from(world.bot.user_id, room, mark)
    return str(reply.body)  # type: ignore[attr-defined]


async def test_stranger_encrypted_dm_gets_a_pairing_code_and_once_approved_an_answer(
    world: World,
) -> None:
    room = await world.alice.open_room(world.bot.user_id, encrypted=True)
    world.rooms["dm"] = room
    pairing = await _answer(world, world.alice, room, "hello there")
    code = pairing.split("Your pairing code: ")[1].split()[0]
    world.kioku("pairing", "approve", code)
    mark = len(world.alice.seen)
    await world.alice.say(room, "how are you?")
    answer = await world.alice.reply_from(world.bot.user_id, room, mark)
    assert answer.body == "echo: how are you?"  # type: ignore[attr-defined]
    assert answer.decrypted  # it came encrypted, and Alice's phone could read it


async def _logged(world: World, event: str, after: int) -> dict[str, object]:
    """The first `event` the daemon logged past byte `after` of its log, once it has."""
    assert world.daemon is not None
    path = world.daemon.log
    async with asyncio.timeout(60):
        while True:
            with path.open("rb") as log:
                log.seek(after)
                for line in log.read().decode("utf-8", "replace").splitlines():
                    if f'"event": "{event}"' in line or f'"event":"{event}"' in line:
                        found: dict[str, object] = json.loads(line)
                        return found
            await asyncio.sleep(0.05)


def _log_size(world: World) -> int:
    assert world.daemon is not None
    return world.daemon.log.stat().st_size


async def test_an_encrypted_message_without_its_key_is_said_to_the_sender_and_recorded(
    world: World,
) -> None:
    room = world.rooms["dm"]
    keys = world.alice.client.olm
    assert keys is not None
    content = {
        "algorithm": "m.megolm.v1.aes-sha2",
        "ciphertext": "AwgAEnB4aW5zdGVhZCBvZiBhIHJlYWwgY2lwaGVydGV4dA",
        "device_id": world.alice.account.device_id,
        "sender_key": keys.account.identity_keys["curve25519"],
        "session_id": "a-session-kioku-was-never-given",
    }
    mark = len(world.alice.seen)
    event_id = await world.alice.send_raw(room, "m.room.encrypted", content)
    notice = await world.alice.reply_from(world.bot.user_id, room, mark)
    assert "your encrypted message" in notice.body  # type: ignore[attr-defined]
    assert "send the message again" in notice.body  # type: ignore[attr-defined]
    [kept] = undecryptable(world.home / "matrix")
    assert (kept.room, kept.sender, kept.event_id) == (room, world.alice.account.user_id, event_id)
    assert "matrix_message_undecryptable" in world.log()
    report = world.kioku("doctor", "--offline", ok=False)
    assert "1 encrypted message(s) kioku could not decrypt" in report
    assert f"{world.alice.account.user_id} in {room}" in report


async def test_an_encrypted_image_reaches_the_model_decrypted(world: World) -> None:
    room = world.rooms["dm"]
    url, keys = await world.alice.upload(PNG, "image/png", "pixel.png", encrypt=True)
    mark = len(world.alice.seen)
    await world.alice.send(
        room,
        {
            "msgtype": "m.image",
            "body": "pixel.png",
            "info": {"mimetype": "image/png", "size": len(PNG), "w": 1, "h": 1},
            "file": {**keys, "url": url},
        },
    )
    await world.alice.reply_from(world.bot.user_id, room, mark)
    newest = world.api.requests[-1].json["messages"][-1]["content"]
    assert any(block.get("type") == "image" for block in newest), newest
    assert any(isinstance(s.event, RoomEncryptedImage) for s in world.alice.seen)


async def test_a_voice_note_is_taken_as_one(world: World) -> None:
    room = world.rooms["dm"]
    sound = b"OggS" + bytes(60)
    url, keys = await world.alice.upload(sound, "audio/ogg", "voice.ogg", encrypt=True)
    mark = len(world.alice.seen)
    await world.alice.send(
        room,
        {
            "msgtype": "m.audio",
            "body": "Voice message",
            "info": {"mimetype": "audio/ogg", "size": len(sound), "duration": 1200},
            "file": {**keys, "url": url},
            "org.matrix.msc3245.voice": {},
        },
    )
    reply = await world.alice.reply_from(world.bot.user_id, room, mark)
    assert "I can't listen to voice notes" in reply.body  # type: ignore[attr-defined]


async def test_a_redacted_message_is_erased_from_history(world: World) -> None:
    room = world.rooms["dm"]
    await _answer(world, world.alice, room, "my locker code is 4711")
    [(_, event_id)] = [t for t in world.user_turns() if t[0] == "my locker code is 4711"]
    after = _log_size(world)
    await world.alice.client.room_redact(room, event_id, reason="oops")
    await _logged(world, "stored_message_changed", after)
    assert not [t for t in world.user_turns() if "4711" in t[0]]


async def test_an_edit_changes_the_stored_message(world: World) -> None:
    room = world.rooms["dm"]
    await _answer(world, world.alice, room, "I like tea")
    [(_, event_id)] = [t for t in world.user_turns() if t[0] == "I like tea"]
    after = _log_size(world)
    await world.alice.say(
        room,
        "* I like coffee",
        **{
            "m.new_content": {"msgtype": "m.text", "body": "I like coffee"},
            "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
        },
    )
    await _logged(world, "stored_message_changed", after)
    assert ("I like coffee", event_id) in world.user_turns()


async def test_in_a_room_a_mention_is_answered_as_a_reply_and_chatter_is_not(world: World) -> None:
    room = await world.alice.open_room(
        world.bot.user_id, world.bob.account.user_id, encrypted=False, name="family"
    )
    world.rooms["family"] = room
    await world.alice.say(room, "lunch at noon, everyone")
    mark = len(world.alice.seen)
    asked = await world.alice.say(
        room, "kioku: what is for lunch?", **{"m.mentions": {"user_ids": [world.bot.user_id]}}
    )
    reply = await world.alice.reply_from(world.bot.user_id, room, mark)
    assert reply.body == "echo: what is for lunch?"  # type: ignore[attr-defined]
    relation = reply.source["content"]["m.relates_to"]
    assert relation == {"m.in_reply_to": {"event_id": asked}}
    said = world.alice.said_by(world.bot.user_id, room)
    assert [e.body for e in said] == ["echo: what is for lunch?"]  # type: ignore[attr-defined]


async def test_a_reply_to_kiokus_message_is_answered_without_a_mention(world: World) -> None:
    room = world.rooms["family"]
    [kiokus] = await world.bob.until(lambda: world.bob.said_by(world.bot.user_id, room))
    answer = await _answer(
        world,
        world.bob,
        room,
        "and for dinner?",
        **{"m.relates_to": {"m.in_reply_to": {"event_id": kiokus.event_id}}},
    )
    assert answer == "echo: (replying to: echo: what is for lunch?)\nand for dinner?"


async def test_a_thread_is_answered_in_the_thread_as_its_own_conversation(world: World) -> None:
    room = world.rooms["family"]
    root = await world.alice.say(room, "planning the trip")
    mark = len(world.alice.seen)
    await world.alice.say(
        room,
        "kioku: which train?",
        **{
            "m.mentions": {"user_ids": [world.bot.user_id]},
            "m.relates_to": {
                "rel_type": "m.thread",
                "event_id": root,
                "is_falling_back": True,
                "m.in_reply_to": {"event_id": root},
            },
        },
    )
    reply = await world.alice.reply_from(world.bot.user_id, room, mark)
    assert reply.body == "echo: which train?"  # type: ignore[attr-defined]
    relation = reply.source["content"]["m.relates_to"]
    assert (relation["rel_type"], relation["event_id"]) == ("m.thread", root)
    db = sqlite3.connect(world.home / "state.db")
    try:
        sessions = {
            text: session
            for text, session in db.execute(
                "SELECT content, session_id FROM messages WHERE role = 'user'"
            )
        }
    finally:
        db.close()
    assert sessions["which train?"] != sessions["what is for lunch?"]


async def test_restarted_kioku_keeps_its_device_and_reads_the_next_encrypted_message(
    world: World,
) -> None:
    connected = await _logged(world, "matrix_connected", 0)
    await world.stop()
    await world.start()
    again = await _logged(world, "matrix_connected", 0)
    assert again["device"] == connected["device"]
    answer = await _answer(world, world.alice, world.rooms["dm"], "still there?")
    assert answer == "echo: still there?"
    folder = world.home / "matrix"
    report = world.kioku("doctor", "--online", ok=False)
    assert f"{world.bot.user_id}, device {connected['device']}" in report
    assert f"keys of device {connected['device']} kept (" in report
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / "session.json").stat().st_mode & 0o777 == 0o600


async def test_messages_sent_while_kioku_was_down_are_caught_up_once(world: World) -> None:
    room = world.rooms["dm"]
    await world.stop()
    mark = len(world.alice.seen)
    await world.alice.say(room, "the plumber comes at nine")
    await world.alice.say(room, "bring the spare key")
    await world.start()
    answer = await world.alice.reply_from(world.bot.user_id, room, mark)
    assert "the plumber comes at nine" in answer.body  # type: ignore[attr-defined]
    assert "bring the spare key" in answer.body  # type: ignore[attr-defined]
    live = await _answer(world, world.alice, room, "anything else?")
    assert live == "echo: anything else?"
    replies = [
        s.event
        for s in world.alice.seen[mark:]
        if s.room == room and s.event.sender == world.bot.user_id and hasattr(s.event, "body")
    ]
    assert len(replies) == 2
    texts = [text for text, _ in world.user_turns()]
    assert texts.count("the plumber comes at nine") == 1
    assert texts.count("bring the spare key") == 1
    assert not any(isinstance(s.event, MegolmEvent) for s in world.alice.seen[mark:])


async def test_catch_up_reads_at_most_max_messages_a_room(world: World) -> None:
    room = world.rooms["dm"]
    await world.stop()
    mark = len(world.alice.seen)
    await world.alice.say(room, "first of three, too old to read")
    await world.alice.say(room, "second of three")
    await world.alice.say(room, "third of three")
    await world.start(KIOKU_GATEWAY__CATCH_UP__MAX_MESSAGES="2")
    answer = await world.alice.reply_from(world.bot.user_id, room, mark)
    assert "second of three" in answer.body  # type: ignore[attr-defined]
    assert "third of three" in answer.body  # type: ignore[attr-defined]
    assert "first of three" not in answer.body  # type: ignore[attr-defined]
    await world.stop()
    await world.start()


async def test_a_long_answer_is_split_and_the_homeservers_rate_limit_waited_out(
    world: World,
) -> None:
    room = world.rooms["dm"]
    admin = await world.synapse.register("admin", admin=True)
    await world.synapse.limit_messages(admin, world.bot.user_id, per_second=1)
    try:
        text = "a long one: " + "word " * 4000
        before = len(world.alice.said_by(world.bot.user_id, room))
        await world.alice.say(room, text.strip())

        def pieces() -> list[str]:
            said = world.alice.said_by(world.bot.user_id, room)[before:]
            return [str(event.body) for event in said]  # type: ignore[attr-defined]

        found = await world.alice.until(lambda: len(pieces()) >= 2 and pieces())
    finally:
        await world.synapse.limit_messages(admin, world.bot.user_id, per_second=0)
    assert " ".join(found).split() == f"echo: {text}".split()
    assert "ratelimited" in world.log()  # matrix-nio waited out M_LIMIT_EXCEEDED
    assert any(world.bot.user_id in users for where, users in world.alice.typing if where == room)
