"""kill -9 of `kioku serve` at a random moment while CLI conversations and Telegram DMs
keep talking to it: after a restart every answered message is stored with its reply, the
store passes its integrity and FTS checks, nothing is answered twice (Telegram redelivers
what was not confirmed, CLI clients resend what got no reply) and notes files are whole."""

from __future__ import annotations

import asyncio
import itertools
import random
import signal
from collections import Counter
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.access.people import OWNER, person_dir
from memory.notes.files import read_notes
from memory.store import deliveries
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Client, Daemon, run_daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.integrity import integrity_problems
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

CLI_CONVERSATIONS = 3


class Traffic:
    """What the clients sent and which replies reached them, across both daemon runs."""

    def __init__(self) -> None:
        self.cli_replies: Counter[str] = Counter()  # message id -> replies received
        self.answered: dict[str, str] = {}  # text sent -> reply received
        self.unanswered: dict[str, tuple[int, str]] = {}  # CLI id -> (conversation, text)
        self.telegram_sent = 0

    async def cli(self, client: Client, conversation: int) -> None:
        """One conversation: ask, wait for the answer, ask again, until the daemon dies."""
        for number in itertools.count():
            message_id, text = f"c{conversation}-{number}", f"cli {conversation} says {number}"
            self.unanswered[message_id] = (conversation, text)
            await client.send(message_id, text, conversation=f"conv{conversation}")
            self.answered[text] = await client.reply(message_id)
            self.cli_replies[message_id] += 1
            del self.unanswered[message_id]

    async def telegram(self, tg: FakeTelegram) -> None:
        for number in itertools.count():
            await tg.dm(OWNER_CHAT, f"telegram says {number}")
            self.telegram_sent += 1
            await tg.wait_for("sendMessage", count=number + 1, within=WAIT)


async def run_until_killed(
    daemon: Daemon, traffic: Traffic, tg: FakeTelegram, delay: float
) -> None:
    clients = [await Client.connect(daemon.home) for _ in range(CLI_CONVERSATIONS)]
    flows = [asyncio.create_task(traffic.cli(c, n)) for n, c in enumerate(clients)]
    flows.append(asyncio.create_task(traffic.telegram(tg)))
    await asyncio.sleep(delay)  # the one deliberate sleep: a random moment to kill at
    daemon.signal(signal.SIGKILL)
    assert await daemon.exit_code() == -signal.SIGKILL
    for flow in flows:
        flow.cancel()
    results = await asyncio.gather(*flows, return_exceptions=True)
    for result in results:
        # A CLI flow ends when the daemon's socket closes; nothing else may break it.
        assert isinstance(result, ConnectionError | asyncio.CancelledError), repr(result)
    for client in clients:
        client.writer.close()


async def settle_after_restart(daemon: Daemon, traffic: Traffic, tg: FakeTelegram) -> None:
    """Resend what got no reply (as a client would), then one fresh message per line: its
    answer means everything queued before it in that line was handled."""
    by_conversation: dict[int, list[tuple[str, str]]] = {}
    for message_id, (conversation, text) in traffic.unanswered.items():
        by_conversation.setdefault(conversation, []).append((message_id, text))
    for conversation in range(CLI_CONVERSATIONS):
        client = await Client.connect(daemon.home)
        for message_id, text in by_conversation.get(conversation, []):
            await client.send(message_id, text, conversation=f"conv{conversation}")
        fresh = f"after-{conversation}"
        await client.send(
            fresh, f"after restart {conversation}", conversation=f"conv{conversation}"
        )
        while (frame := await client.frame()).get("id") != fresh or frame["type"] != "reply":
            if frame["type"] == "reply":
                traffic.cli_replies[frame["id"]] += 1
                traffic.answered[by_conversation_text(by_conversation, frame["id"])] = frame["text"]
        await client.close()
    await tg.dm(OWNER_CHAT, "telegram after restart")
    while not tg.sent() or asked(tg.sent()[-1].text) != "telegram after restart":
        await tg.wait_for("sendMessage", count=len(tg.sent()) + 1, within=WAIT)


def asked(reply: str) -> str:
    """The message an echo answers. A message stored but cut off by the kill has no reply
    of its own: the model sees it with the next one, and the echo repeats both, newest last."""
    return reply.removeprefix("echo: ").splitlines()[-1]


def by_conversation_text(by_conversation: dict[int, list[tuple[str, str]]], message_id: str) -> str:
    return next(
        text for pairs in by_conversation.values() for mid, text in pairs if mid == message_id
    )


@pytest.mark.parametrize("seed", [7, 1234, 90210])
async def test_kill_9_under_load_loses_nothing_answered_and_answers_nothing_twice(
    seed: int, daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    delay = random.Random(seed).uniform(0.3, 2.0)
    traffic = Traffic()
    async with FakeTelegram() as tg:
        daemon = await run_daemon(daemons, home, api, tmp_path, **telegram_env(tg))
        await run_until_killed(daemon, traffic, tg, delay)
        restarted = await run_daemon(daemons, home, api, tmp_path, **telegram_env(tg))
        await settle_after_restart(restarted, traffic, tg)
        restarted.signal(signal.SIGTERM)
        assert await restarted.exit_code() == 0

    for call in tg.sent():
        traffic.answered[asked(call.text)] = call.text
    assert traffic.answered, f"seed {seed}: nothing was answered before the kill"
    stored = Counter(stored_texts(home))
    for text, reply in traffic.answered.items():
        assert stored[("user", text)] == 1, (
            f"seed {seed}: {text!r} stored {stored[('user', text)]}x"
        )
        assert stored[("assistant", reply)] == 1, f"seed {seed}: {reply!r} stored wrongly"
    assert max(traffic.cli_replies.values()) == 1, traffic.cli_replies.most_common(3)
    telegram_replies = Counter(call.text for call in tg.sent())
    assert telegram_replies.most_common(1)[0][1] == 1, telegram_replies.most_common(3)
    assert await integrity_problems(home) == []
    for notes in (person_dir(home, OWNER)).glob("*.md"):
        assert read_notes(notes).canonical, f"{notes} is not whole"


async def test_a_message_stored_before_its_delivery_was_recorded_is_known(tmp_path: Path) -> None:
    """The window kill -9 found: the message's row committed, its delivery record not yet."""
    async with await Store.open(tmp_path / "state.db") as store:
        await ensure_person(store, OWNER)
        session = await store.open_session(Conversation("telegram", "111", "dm", OWNER))
        await store.append(session.id, NewMessage("user", "hello", platform_message_id="42"))
        assert await deliveries.known(store, "telegram", "111", "42")
        assert not await deliveries.known(store, "telegram", "111", "43")
        assert not await deliveries.known(store, "telegram", "222", "42")
