"""The bench's side of `bench_soak.py`: the ledger of sent messages and replies, and one
driver per platform. Each driver sends a conversation's next message the way its
platform would deliver it (the CLI socket, or an update pushed into a fake platform
server) and hands every reply kioku sends to the ledger with the time it arrived.
"""

from __future__ import annotations

import asyncio
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench.soak_daemon import MESSAGE, message_text
from tests.fakes.discord import FakeDiscord, snowflake, user
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram

FOREVER = 86_400.0  # s: the readers wait for replies as long as the bench runs


@dataclass
class Sent:
    expected: str
    delay: float
    sent_at: float
    platform: str
    replies: list[float] = field(default_factory=list)  # arrival times
    wrong: int = 0


class Ledger:
    """Every message sent and every reply seen, matched by the message id in the text."""

    def __init__(self) -> None:
        self.sent: dict[str, Sent] = {}
        self.strays: list[str] = []  # replies naming no message the bench sent
        self._waiting: dict[str, asyncio.Future[float]] = {}

    def expect(self, platform: str, message_id: str, delay: float) -> asyncio.Future[float]:
        """Note a message about to be sent; the future gets its first reply's arrival time."""
        text = message_text(message_id, delay)
        self.sent[message_id] = Sent(f"echo: {text}", delay, time.monotonic(), platform)
        waiter = self._waiting[message_id] = asyncio.get_running_loop().create_future()
        return waiter

    def replied(self, text: str, at: float) -> None:
        found = MESSAGE.search(text)
        sent = self.sent.get(found["id"]) if found else None
        if found is None or sent is None:
            self.strays.append(text)
            return
        sent.replies.append(at)
        if text.strip() != sent.expected:
            sent.wrong += 1
        waiter = self._waiting.pop(found["id"], None)
        if waiter is not None and not waiter.done():
            waiter.set_result(at)

    def give_up(self, message_id: str) -> None:
        self._waiting.pop(message_id, None)


class Driver(ABC):
    """One platform's side of the bench: `send` a conversation's message, report replies."""

    name = ""
    code = ""  # the message id prefix

    def __init__(self, ledger: Ledger, conversations: int) -> None:
        self.ledger = ledger
        self.conversations = conversations
        self.tasks: list[asyncio.Task[None]] = []
        self.errors: list[str] = []
        self.live = True  # False once the bench is done and the daemon may go away

    async def start(self) -> Driver:
        """Start the platform's fake, before the daemon that connects to it."""
        return self

    def env(self) -> dict[str, str]:
        """The daemon's settings pointing it at this platform's fake."""
        return {}

    async def ready(self, within: float) -> None:
        return None

    @abstractmethod
    async def send(self, conversation: int, message_id: str, text: str) -> None:
        """Send one message as `conversation`'s person; the reply reaches the ledger."""

    def watch(self, work: Callable[[], Coroutine[Any, Any, None]], name: str) -> None:
        """Run a reader for the bench's lifetime; if it dies, the reason becomes an error."""
        task = asyncio.create_task(work(), name=name)
        task.add_done_callback(self._ended)
        self.tasks.append(task)

    def _ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.errors.append(f"{task.get_name()} stopped: {task.exception()!r}")

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


class CliDriver(Driver):
    """One CLI-socket connection per conversation (all of them the owner's, in their own chat)."""

    name, code = "cli", "c"

    def __init__(self, ledger: Ledger, conversations: int, path: Path) -> None:
        super().__init__(ledger, conversations)
        self.path = path
        self.writers: list[asyncio.StreamWriter] = []

    async def ready(self, within: float) -> None:
        for number in range(self.conversations):
            reader, writer = await asyncio.open_unix_connection(str(self.path), limit=1 << 22)
            self.writers.append(writer)
            self.watch(lambda reader=reader: self._read(reader), f"cli-{number}")

    async def send(self, conversation: int, message_id: str, text: str) -> None:
        frame = {
            "type": "message",
            "id": message_id,
            "text": text,
            "conversation": f"c{conversation}",
        }
        writer = self.writers[conversation]
        writer.write(json.dumps(frame).encode() + b"\n")
        await writer.drain()

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while line := await reader.readline():
            frame = json.loads(line)
            if frame["type"] == "reply":
                self.ledger.replied(frame["text"], time.monotonic())
            elif frame["type"] == "error":
                self.errors.append(frame["message"])
        if self.live:
            self.errors.append("the daemon closed a CLI connection")

    async def close(self) -> None:
        for writer in self.writers:
            writer.close()
        await super().close()


class _RecordingTelegram(FakeTelegram):
    """The fake Telegram, telling the ledger of each sendMessage as it arrives (the fake's
    own `wait_for` rescans every call so far, too slow for tens of thousands)."""

    def __init__(self, ledger: Ledger) -> None:
        super().__init__()
        self.ledger = ledger

    def _sent_message(self, method: str, params: dict[str, str]) -> dict[str, Any]:
        if method == "sendMessage":
            self.ledger.replied(params.get("text", ""), time.monotonic())
        return super()._sent_message(method, params)


class TelegramDriver(Driver):
    """Private chats with users 7000001, 7000002, ... (the chat id is the user's)."""

    name, code = "telegram", "t"
    FIRST_USER = 7_000_001

    async def start(self) -> TelegramDriver:
        self.fake = _RecordingTelegram(self.ledger)
        await self.fake.__aenter__()
        return self

    def env(self) -> dict[str, str]:
        return {
            "KIOKU_TELEGRAM__TOKEN": TELEGRAM_TOKEN,
            "KIOKU_TELEGRAM__BASE_URL": self.fake.base_url,
            "KIOKU_TELEGRAM__BASE_FILE_URL": self.fake.base_file_url,
            "KIOKU_TELEGRAM__DM_POLICY": "open",
        }

    async def ready(self, within: float) -> None:
        await self.fake.wait_for("getUpdates", 1, within)

    async def send(self, conversation: int, message_id: str, text: str) -> None:
        await self.fake.dm(self.FIRST_USER + conversation, text)

    async def close(self) -> None:
        await super().close()
        await self.fake.__aexit__(None, None, None)


class DiscordDriver(Driver):
    """Direct messages from as many users, each in their own DM channel."""

    name, code = "discord", "d"

    async def start(self) -> DiscordDriver:
        self.fake = await FakeDiscord().start()
        self.authors = [user(snowflake(), f"soak{n}") for n in range(self.conversations)]
        self.watch(self._read, "discord-posts")
        return self

    def env(self) -> dict[str, str]:
        return {
            **self.fake.env(),
            "KIOKU_DISCORD__DM_POLICY": "open",
        }

    async def ready(self, within: float) -> None:
        await self.fake.wait_ready(1, within)

    async def send(self, conversation: int, message_id: str, text: str) -> None:
        await self.fake.push(self.fake.dm(text, author=self.authors[conversation]))

    async def _read(self) -> None:
        while True:
            post = await self.fake.next_post(within=FOREVER)
            self.ledger.replied(post.content, time.monotonic())

    async def close(self) -> None:
        await super().close()
        await self.fake.close()


class SlackDriver(Driver):
    """Direct messages from users U0SOAK00, U0SOAK01, ... in channels D0SOAK00, ..."""

    name, code = "slack", "s"

    async def start(self) -> SlackDriver:
        self.users = [f"U0SOAK{n:02d}" for n in range(self.conversations)]
        self.fake = await FakeSlack(users={u: f"Soak {u[-2:]}" for u in self.users}).start()
        self.watch(self._read, "slack-posts")
        return self

    def env(self) -> dict[str, str]:
        return {
            "KIOKU_SLACK__BOT_TOKEN": "xoxb-soak",
            "KIOKU_SLACK__APP_TOKEN": "xapp-soak",
            "KIOKU_SLACK__BASE_URL": self.fake.base_url,
            "KIOKU_SLACK__DM_POLICY": "open",
        }

    async def ready(self, within: float) -> None:
        await self.fake.wait_for(lambda: self.fake.connections >= 1, within)

    async def send(self, conversation: int, message_id: str, text: str) -> None:
        channel = f"D0SOAK{conversation:02d}"
        await self.fake.push(self.fake.dm(self.users[conversation], text, channel=channel))

    async def _read(self) -> None:
        """Tail the fake's calls (waking on each new one) for chat.postMessage."""
        seen = 0
        while True:
            await self.fake.wait_for(lambda seen=seen: len(self.fake.calls) > seen, within=FOREVER)
            for call in self.fake.calls[seen:]:
                if call.method == "chat.postMessage":
                    self.ledger.replied(str(call.args.get("text", "")), call.at)
            seen = len(self.fake.calls)

    async def close(self) -> None:
        await super().close()
        await self.fake.close()
