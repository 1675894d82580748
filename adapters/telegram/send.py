"""How one message goes out through python-telegram-bot: posted or edited, as HTML with a
plain-text fallback when Telegram cannot parse its entities, and retried through flood
limits (`retry_after`) and network errors with `Backoff` before giving up.

The adapter decides what to send (chunks, drafts, files); these helpers only say how, so
a reply, a streamed draft and a document share one retry policy.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

import structlog
from telegram import Bot, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, NetworkError, RetryAfter
from telegram.warnings import PTBDeprecationWarning

from adapters.base import Address
from adapters.telegram.formatting import to_html, to_plain
from plumbing.backoff import Backoff

log = structlog.get_logger("kioku.telegram")

SEND_ATTEMPTS = 5
RETRY_CAP = 30.0  # seconds: the backoff cap for polling and for sends
T = TypeVar("T")

Call = Callable[[str, str | None], Awaitable[Any]]
"""Send or edit one text with a parse mode (None: plain)."""


def poster(bot: Bot, address: Address, *, reply: bool) -> Callable[..., Awaitable[Message]]:
    """A new message in the address's chat and topic, answering its message if `reply`."""
    parameters = reply_parameters(address) if reply else None

    def post(text: str, mode: str | None) -> Awaitable[Message]:
        return bot.send_message(
            address.chat,
            text,
            parse_mode=mode,
            message_thread_id=thread_of(address),
            reply_parameters=parameters,
        )

    return post


def editor(bot: Bot, address: Address, message_id: int) -> Call:
    """An edit of message `message_id`; Telegram's "not modified" is no failure."""

    async def edit(text: str, mode: str | None) -> Any:
        try:
            return await bot.edit_message_text(
                text, chat_id=address.chat, message_id=message_id, parse_mode=mode
            )
        except BadRequest as exc:
            if "not modified" not in str(exc).lower():
                raise
            return None

    return edit


async def formatted(chunk: str, call: Call, retry_base: float) -> Any:
    """Send one chunk as HTML; if Telegram cannot parse the entities, as plain text."""
    rendered = to_html(chunk) or chunk
    try:
        return await retrying(lambda: call(rendered, ParseMode.HTML), retry_base)
    except BadRequest as exc:
        if "parse entities" not in str(exc).lower():
            raise
        log.info("telegram_html_refused", error=str(exc))
    return await retrying(lambda: call(to_plain(chunk) or chunk, None), retry_base)


async def retrying(call: Callable[[], Awaitable[T]], retry_base: float) -> T:
    """Wait out flood limits and network errors; raise after SEND_ATTEMPTS tries."""
    backoff = Backoff(base=retry_base, cap=RETRY_CAP)
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call()
        except BadRequest:
            raise
        except RetryAfter as exc:
            if attempt >= SEND_ATTEMPTS:
                raise
            delay = retry_seconds(exc)
        except NetworkError as exc:
            if attempt >= SEND_ATTEMPTS:
                raise
            delay = backoff.next_delay()
            log.info("telegram_send_retry", error=repr(exc), retry_in=round(delay, 2))
        await asyncio.sleep(delay)


def retry_seconds(exc: RetryAfter) -> float:
    """The wait Telegram asked for (the library gives int or timedelta by configuration)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def reply_parameters(address: Address) -> ReplyParameters | None:
    reply_to = address.reply_to
    if not reply_to or not reply_to.isdigit():
        return None
    return ReplyParameters(int(reply_to), allow_sending_without_reply=True)


def thread_of(address: Address) -> int | None:
    """The forum topic's id, for a message in one."""
    return int(address.thread) if address.thread.isdigit() else None
