"""Telegram through python-telegram-bot's `Bot`: long polling (or a webhook) in, replies out.

The adapter runs its own polling loop around `Bot.get_updates` so that it owns the
recovery: Telegram's `retry_after` is waited out, network errors back off with
`Backoff`, and a watchdog restarts a loop whose long poll has gone unanswered for
longer than its timeout plus a margin. Only a token Telegram refuses, or a loop that
stalls again and again, is reported with `failed()` for the supervisor to restart.

An update's message id goes to the gateway as `message_id`, so a redelivered update
(after a restart the last batch is fetched again) is dropped there, not answered twice.
What reaches the gateway, and when Telegram is told it has arrived, is `intake`'s
business: updates that waited while kioku was away are caught up there.
Files on a message are fetched through the same bot, within a limit (`files`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import structlog
from aiohttp import web
from telegram import Bot, BotCommand, InputFile, Update
from telegram.constants import ChatAction
from telegram.error import (
    BadRequest,
    ChatMigrated,
    InvalidToken,
    RetryAfter,
    TelegramError,
)

from adapters.base import Adapter, Address, Delta, EventHandler, MenuCommand, Outbound
from adapters.catch_up import CatchUpSource, no_catch_up
from adapters.chunking import utf16_length
from adapters.long_reply import FILE_NAME, caption, file_bytes, goes_as_file
from adapters.telegram.files import FileRequest
from adapters.telegram.formatting import split_for_telegram, to_plain
from adapters.telegram.intake import Intake
from adapters.telegram.send import (
    RETRY_CAP,
    editor,
    formatted,
    poster,
    reply_parameters,
    retry_seconds,
    retrying,
    thread_of,
)
from adapters.telegram.updates import (
    PROBLEM_CHARS,
    READ_KINDS,
    BoundedRequest,
    UpdatesMalformed,
    webhook_app,
)
from config.platform_settings import TelegramSettings
from plumbing.backoff import Backoff

log = structlog.get_logger("kioku.telegram")

LIMIT = 4096  # UTF-16 code units per message
TYPING_EVERY = 4.0  # Telegram shows "typing…" for about 5 s per sendChatAction
TYPING_AT_MOST = 600.0
EDIT_EVERY = 1.0
STALLS_BEFORE_FAILING = 5


class PollingStalled(RuntimeError):
    """getUpdates kept going unanswered even after in-process restarts."""


@dataclass
class _Draft:
    """A reply being streamed: the message showing it and when it was last edited."""

    text: str = ""
    message_id: int | None = None
    edited: float = 0.0


Key = tuple[str, str, str | None]


class TelegramAdapter(Adapter):
    name = "telegram"

    def __init__(
        self,
        deliver: EventHandler,
        settings: TelegramSettings,
        *,
        commands: Sequence[MenuCommand] = (),
        catch_up: CatchUpSource = no_catch_up,
        retry_base: float = 1.0,
    ) -> None:
        super().__init__(deliver, catch_up)
        if settings.token is None:
            raise ValueError("the Telegram adapter needs KIOKU_TELEGRAM__TOKEN")
        self.settings = settings
        # The gateway's slash commands, shown in Telegram's menu (setMyCommands).
        self.commands = [BotCommand(c.name, c.summary[:256]) for c in commands]
        self.streams = settings.streaming
        self.margin = settings.silence_limit
        self.retry_base = retry_base
        self.webhook_port: int | None = None
        self._bot: Bot | None = None
        self._intake: Intake | None = None
        self._deadline: float | None = None
        self._answers = 0
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._typing: dict[Key, asyncio.Task[None]] = {}
        self._drafts: dict[Key, _Draft] = {}
        self._webhook: web.AppRunner | None = None

    @property
    def bot(self) -> Bot:
        if self._bot is None:
            raise RuntimeError("the Telegram adapter is not started")
        return self._bot

    @property
    def intake(self) -> Intake:
        if self._intake is None:
            raise RuntimeError("the Telegram adapter is not started")
        return self._intake

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        s = self.settings
        assert s.token is not None
        started = datetime.now(UTC)
        plan = await self.catch_up()
        bot = Bot(
            s.token.get_secret_value(),
            base_url=s.base_url or "https://api.telegram.org/bot",
            base_file_url=s.base_file_url or "https://api.telegram.org/file/bot",
            request=FileRequest(connection_pool_size=16),
            # The library's own read timeout fires after the watchdog's, which restarts first.
            get_updates_request=BoundedRequest(
                connection_pool_size=2, read_timeout=2 * self.margin
            ),
        )
        try:
            await bot.initialize()
        except BaseException:
            await bot.shutdown()
            raise
        self._bot = bot
        self._intake = Intake(self.deliver, bot.id, bot.username or "", started, plan)
        # getMe's can_read_all_group_messages: false while BotFather's privacy mode is on,
        # and then groups deliver kioku only commands and replies meant for it.
        log.info(
            "telegram_connected",
            bot=bot.username,
            group_privacy=not bot.can_read_all_group_messages,
        )
        try:
            await bot.set_my_commands(self.commands)
        except TelegramError as exc:
            log.warning("telegram_commands_not_set", error=repr(exc))
        try:
            # Neither deleteWebhook nor setWebhook is asked to drop the updates waiting on
            # Telegram's server (drop_pending_updates): they are read, and caught up.
            if not s.webhook_url:
                await retrying(bot.delete_webhook, self.retry_base)
            elif plan.enabled:
                await retrying(bot.delete_webhook, self.retry_base)
                await self._drain()
            if s.webhook_url:
                await self._start_webhook(s.webhook_url)
        except BaseException:
            await self.stop()  # a half-started adapter holds no connection or port
            raise
        if not s.webhook_url:
            self._spawn("poll", self._poll())
            self._spawn("watchdog", self._watch())

    async def stop(self) -> None:
        tasks = [*self._tasks.values(), *self._typing.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._typing.clear()
        self._drafts.clear()
        if self._webhook is not None:
            await self._webhook.cleanup()
            self._webhook = None
        if self._bot is not None:
            await self._bot.shutdown()
            self._bot = None

    def _spawn(self, name: str, work: Coroutine[Any, Any, None]) -> None:
        self._tasks[name] = asyncio.create_task(work, name=f"telegram-{name}")

    # -- receiving ------------------------------------------------------------------------------

    async def _poll(self) -> None:
        backoff = Backoff(base=self.retry_base, cap=RETRY_CAP)
        intake = self.intake
        garbled = False
        while True:
            # The catch-up pass asks without waiting: what waits is read at once.
            timeout = 0 if intake.catching_up else self.settings.poll_timeout
            self._deadline = time.monotonic() + timeout + self.margin
            try:
                updates = await self.bot.get_updates(
                    offset=intake.offset, timeout=timeout, allowed_updates=list(READ_KINDS)
                )
            except UpdatesMalformed as exc:
                # Asked again at once; a server that keeps garbling its answers is waited for.
                self._deadline = None
                delay = backoff.next_delay() if garbled else 0.0
                garbled = True
                log.warning(
                    "telegram_updates_malformed", problem=str(exc), retry_in=round(delay, 2)
                )
                await asyncio.sleep(delay)
                continue
            except RetryAfter as exc:
                self._deadline = None
                await asyncio.sleep(retry_seconds(exc))
                continue
            except InvalidToken as exc:
                log.error("telegram_token_refused", error=str(exc))
                self.failed(exc)
                return
            except TelegramError as exc:
                self._deadline = None
                delay = backoff.next_delay()
                # The library puts the answer's body in its message: a proxy's page can be MBs.
                error = repr(exc)[:PROBLEM_CHARS]
                log.warning("telegram_poll_failed", error=error, retry_in=round(delay, 2))
                await asyncio.sleep(delay)
                continue
            self._deadline = None
            self._answers += 1
            garbled = False
            try:
                await intake.take(updates)
            except Exception:
                # Not confirmed to Telegram: the next getUpdates gives the rest again.
                delay = backoff.next_delay()
                log.exception("telegram_delivery_failed", retry_in=round(delay, 2))
                await asyncio.sleep(delay)
                continue
            backoff.reset()

    async def _watch(self) -> None:
        """Restart a polling loop whose getUpdates is overdue (or which died)."""
        stalls, answers = 0, self._answers
        while True:
            await asyncio.sleep(self.margin / 4)
            if self._answers != answers:
                stalls, answers = 0, self._answers
            poller = self._tasks["poll"]
            if poller.done() and not poller.cancelled() and poller.exception() is None:
                return  # the loop reported a failure itself
            overdue = self._deadline is not None and time.monotonic() > self._deadline
            if not (overdue or poller.done()):
                continue
            stalls += 1
            log.warning("telegram_polling_restarted", stall=stalls, died=poller.done())
            if stalls > STALLS_BEFORE_FAILING:
                self.failed(PollingStalled(f"getUpdates unanswered {stalls} times in a row"))
                return
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await poller
            self._deadline = None
            self._spawn("poll", self._poll())

    async def _drain(self) -> None:
        """Webhook mode's catch-up pass: what waits on Telegram's server is read with
        getUpdates, which Telegram answers only while no webhook is set, before the
        webhook is set again; so it is caught up as polling catches it up."""
        intake = self.intake
        while True:
            updates = await retrying(
                lambda: self.bot.get_updates(
                    offset=intake.offset, timeout=0, allowed_updates=list(READ_KINDS)
                ),
                self.retry_base,
            )
            await intake.take(updates)
            if not updates:
                return

    async def _hooked(self, update: Update) -> None:
        """An update the webhook was given, live; raises if the gateway could not take
        it (the webhook then answers 500, and Telegram sends it again)."""
        event = self.intake.event(update)
        if event is not None:
            await self.deliver(event)

    async def _start_webhook(self, url: str) -> None:
        """Serve the webhook with aiohttp; a request without the secret token gets 403."""
        secret = self.settings.webhook_secret
        token = secret.get_secret_value() if secret else secrets.token_urlsafe(32)
        host, _, port = self.settings.webhook_listen.rpartition(":")

        app = webhook_app(urlsplit(url).path or "/", token, self._hooked, self.bot)
        self._webhook = web.AppRunner(app, handle_signals=False)
        await self._webhook.setup()
        site = web.TCPSite(self._webhook, host or "127.0.0.1", int(port))
        await site.start()
        server = site._server
        self.webhook_port = server.sockets[0].getsockname()[1] if server else None
        await retrying(
            lambda: self.bot.set_webhook(url, allowed_updates=list(READ_KINDS), secret_token=token),
            self.retry_base,
        )
        log.info("telegram_webhook_serving", listen=self.settings.webhook_listen)

    # -- sending --------------------------------------------------------------------------------

    async def send(self, message: Outbound) -> None:
        try:
            await self._send(message)
        except ChatMigrated as exc:
            # A group upgraded to a supergroup gets a new id; Telegram refuses the old one
            # and names the new one (Bot API: ResponseParameters.migrate_to_chat_id).
            moved = str(exc.new_chat_id)
            log.warning("telegram_chat_migrated", chat=message.address.chat, to=moved)
            await self._send(replace(message, address=replace(message.address, chat=moved)))

    async def _send(self, message: Outbound) -> None:
        address = message.address
        self._stop_typing(_key(address))
        draft = self._drafts.pop(_key(address), None)
        chunks = split_for_telegram(message.text, LIMIT)
        if goes_as_file(message, len(chunks)) and await self._sent_as_file(address, message.text):
            await self._drop_draft(address, draft)
            return
        for index, chunk in enumerate(chunks):
            if index == 0 and draft is not None and draft.message_id is not None:
                await formatted(chunk, editor(self.bot, address, draft.message_id), self.retry_base)
            else:
                await formatted(chunk, poster(self.bot, address, reply=index == 0), self.retry_base)

    async def _sent_as_file(self, address: Address, text: str) -> bool:
        """The reply as one `reply.md` document answering the message; False if Telegram
        refuses it (no right to send documents there): then it goes as messages."""
        first = caption(text)
        try:
            await retrying(
                lambda: self.bot.send_document(
                    address.chat,
                    InputFile(file_bytes(text), filename=FILE_NAME),
                    caption=to_plain(first).strip() if first else None,
                    message_thread_id=thread_of(address),
                    reply_parameters=reply_parameters(address),
                ),
                self.retry_base,
            )
        except BadRequest as exc:
            log.warning("telegram_reply_file_refused", chat=address.chat, error=str(exc))
            return False
        return True

    async def _drop_draft(self, address: Address, draft: _Draft | None) -> None:
        """The streamed draft showed only the start of a reply now sent whole as a file."""
        if draft is None or draft.message_id is None:
            return
        try:
            await self.bot.delete_message(address.chat, draft.message_id)
        except TelegramError as exc:
            log.info("telegram_draft_not_deleted", chat=address.chat, error=repr(exc))

    async def stream(self, delta: Delta) -> None:
        """Show the reply so far (plain text), editing at most once a second."""
        address = delta.address
        draft = self._drafts.setdefault(_key(address), _Draft())
        draft.text += delta.text
        now = time.monotonic()
        if now - draft.edited < EDIT_EVERY or not draft.text.strip():
            return
        if utf16_length(draft.text) > LIMIT:
            return  # the final reply splits it; a draft shows one message's worth
        try:
            if draft.message_id is None:
                self._stop_typing(_key(address))
                sent = await poster(self.bot, address, reply=True)(draft.text, None)
                draft.message_id = sent.message_id
            else:
                await editor(self.bot, address, draft.message_id)(draft.text, None)
            draft.edited = now
        except RetryAfter as exc:
            draft.edited = now + retry_seconds(exc)

    async def working(self, address: Address) -> None:
        key = _key(address)
        self._stop_typing(key)
        self._typing[key] = asyncio.create_task(
            self._type(address), name=f"telegram-typing-{address.chat}"
        )

    async def _type(self, address: Address) -> None:
        """Repeat "typing…" until the reply goes out (the task is cancelled then)."""
        until = time.monotonic() + TYPING_AT_MOST
        while time.monotonic() < until:
            delay = TYPING_EVERY
            try:
                await self.bot.send_chat_action(
                    address.chat, ChatAction.TYPING, message_thread_id=thread_of(address)
                )
            except RetryAfter as exc:
                delay = max(delay, retry_seconds(exc))
            except TelegramError as exc:
                log.info("telegram_typing_failed", chat=address.chat, error=repr(exc))
            await asyncio.sleep(delay)
        self._typing.pop(_key(address), None)

    def _stop_typing(self, key: Key) -> None:
        task = self._typing.pop(key, None)
        if task is not None:
            task.cancel()


def _key(address: Address) -> Key:
    return (address.chat, address.thread, address.reply_to)
