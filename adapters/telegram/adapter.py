"""Telegram through python-telegram-bot's `Bot`: long polling (or a webhook) in, replies out.

The adapter runs its own polling loop around `Bot.get_updates` so that it owns the
recovery (`polling`). Only a token Telegram refuses, or a loop that stalls again and
again, is reported with `failed()` for the supervisor to restart.

An update's message id goes to the gateway as `message_id`, so a redelivered update
(after a restart the last batch is fetched again) is dropped there, not answered twice.
What reaches the gateway, and when Telegram is told it has arrived, is `intake`'s
business: updates that waited while kioku was away are caught up there.
Files on a message are fetched through the same bot, within a limit (`files`).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from urllib.parse import urlsplit

import structlog
from aiohttp import web
from telegram import Bot, BotCommand, InputFile, Update
from telegram.constants import ChatAction
from telegram.error import (
    BadRequest,
    ChatMigrated,
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
from adapters.telegram.polling import Polling, drain
from adapters.telegram.send import (
    editor,
    formatted,
    poster,
    reply_parameters,
    retry_seconds,
    retrying,
    thread_of,
)
from adapters.telegram.updates import (
    READ_KINDS,
    BoundedRequest,
    webhook_app,
)
from config.platform_settings import TelegramSettings

log = structlog.get_logger("kioku.telegram")

LIMIT = 4096  # UTF-16 code units per message
TYPING_EVERY = 4.0  # Telegram shows "typing…" for about 5 s per sendChatAction
TYPING_AT_MOST = 600.0
EDIT_EVERY = 1.0


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
        self._polling: Polling | None = None
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
            if s.webhook_url:
                await self._start_webhook(s.webhook_url, catch_up=plan.enabled)
            else:
                # Not asked to drop the updates waiting on Telegram's server
                # (drop_pending_updates): they are read, and caught up.
                await retrying(bot.delete_webhook, self.retry_base)
        except BaseException:
            await self.stop()  # a half-started adapter holds no connection or port
            raise
        if not s.webhook_url:
            self._polling = Polling(
                bot,
                self._intake,
                timeout=s.poll_timeout,
                margin=self.margin,
                retry_base=self.retry_base,
                failed=self.failed,
            )
            self._polling.start()

    async def stop(self) -> None:
        if self._polling is not None:
            await self._polling.stop()
            self._polling = None
        tasks = list(self._typing.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._typing.clear()
        self._drafts.clear()
        if self._webhook is not None:
            await self._webhook.cleanup()
            self._webhook = None
        if self._bot is not None:
            await self._bot.shutdown()
            self._bot = None

    # -- receiving ------------------------------------------------------------------------------

    async def _hooked(self, update: Update) -> None:
        """An update the webhook was given, live; raises if the gateway could not take
        it (the webhook then answers 500, and Telegram sends it again)."""
        event = self.intake.event(update)
        if event is not None:
            await self.deliver(event)

    async def _start_webhook(self, url: str, *, catch_up: bool) -> None:
        """Serve the webhook with aiohttp; a request without the secret token gets 403.
        Neither deleteWebhook nor setWebhook drops the updates waiting on Telegram's
        server; to catch them up they are read first, while no webhook is set."""
        if catch_up:
            await retrying(self.bot.delete_webhook, self.retry_base)
            await drain(self.bot, self.intake, self.retry_base)
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
