"""The files on a Telegram message as `Attachment`s, downloaded through the bot within a limit.

Each attachment's `fetch` asks the bot for the file (`getFile`) and downloads it with
python-telegram-bot's `File.download_as_bytearray`. A size Telegram declares over the
limit is refused before anything is downloaded; what arrives is counted as it streams
(`FileRequest`), so a server that sends more than it declared is cut off at the limit.
A photo comes in several sizes: the largest whose declared size is within the limit is
the one fetched.
"""

from __future__ import annotations

import contextlib
import mimetypes
import warnings
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

import httpx
from telegram import (
    Animation,
    Audio,
    Bot,
    Document,
    Message,
    PhotoSize,
    Video,
    VideoNote,
    Voice,
)
from telegram.error import NetworkError, TelegramError, TimedOut
from telegram.request import HTTPXRequest, RequestData
from telegram.warnings import PTBDeprecationWarning

from adapters.base import Attachment, AttachmentKind, Fetch, FetchFailed, TooLarge, kind_by_type
from adapters.shapes import Malformed, require

Source = PhotoSize | Document | Voice | Audio | Video | VideoNote | Animation

_LIMIT: ContextVar[int | None] = ContextVar("telegram_download_limit", default=None)
_ERROR_BODY = 64 * 1024  # an error page is read this far, for its description

# (attribute, kind, name when the file has none, type when Telegram gives none); an
# animation also carries a document, so it is looked for first.
_FILES: tuple[tuple[str, AttachmentKind, str, str], ...] = (
    ("animation", "video", "animation.mp4", "video/mp4"),
    ("video", "video", "video.mp4", "video/mp4"),
    ("video_note", "video", "video_note.mp4", "video/mp4"),
    ("voice", "voice", "voice.ogg", "audio/ogg"),
    ("audio", "audio", "audio.mp3", "audio/mpeg"),
    ("document", "document", "document", "application/octet-stream"),
)


class _OverLimit(TelegramError):
    """More bytes arrived than the download may hold (python-telegram-bot passes a
    TelegramError through unchanged)."""


class FileRequest(HTTPXRequest):
    """The bot's HTTP request: a GET made while `_LIMIT` is set (a file download) is
    streamed and stopped past it; everything else goes as python-telegram-bot sends it."""

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = HTTPXRequest.DEFAULT_NONE,
        write_timeout: Any = HTTPXRequest.DEFAULT_NONE,
        connect_timeout: Any = HTTPXRequest.DEFAULT_NONE,
        pool_timeout: Any = HTTPXRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        limit = _LIMIT.get()
        if limit is None or method != "GET":
            return await super().do_request(
                url,
                method,
                request_data,
                read_timeout=read_timeout,
                write_timeout=write_timeout,
                connect_timeout=connect_timeout,
                pool_timeout=pool_timeout,
            )
        try:
            return await self._bounded_get(url, limit)
        except httpx.TimeoutException as err:
            raise TimedOut("the file download timed out") from err
        except httpx.HTTPError as err:
            raise NetworkError(f"httpx.{type(err).__name__}: {err}") from err

    async def _bounded_get(self, url: str, limit: int) -> tuple[int, bytes]:
        client = self._client
        headers = {"User-Agent": self.USER_AGENT}
        async with client.stream("GET", url, headers=headers, timeout=client.timeout) as answer:
            if not 200 <= answer.status_code <= 299:
                return answer.status_code, await _head(answer, _ERROR_BODY)
            declared = answer.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise _OverLimit(f"{int(declared):,} bytes")
            body = bytearray()
            async for chunk in answer.aiter_bytes():
                body += chunk
                if len(body) > limit:
                    raise _OverLimit(f"more than {limit:,} bytes")
            return answer.status_code, bytes(body)


def attachments(message: Message) -> tuple[Attachment, ...]:
    """The message's file (Telegram sends at most one per message), or nothing: a
    sticker or a message without a file."""
    if message.photo:
        return (_photo(message.photo),)
    for attribute, kind, name, mime in _FILES:
        source = getattr(message, attribute)
        if source is None:
            continue
        declared_mime = getattr(source, "mime_type", None) or mime
        if attribute == "document":  # a photo, a song or an SVG sent as a plain file
            kind = kind_by_type(declared_mime, getattr(source, "file_name", None) or "")
            if kind == "image":
                name = "image"
        width, height = _dimensions(source)
        return (
            Attachment(
                kind=kind,
                name=_name(source, name, declared_mime, mime),
                mime=declared_mime,
                size=source.file_size,
                fetch=_fetcher(source),
                duration=_seconds(source),
                width=width,
                height=height,
            ),
        )
    return ()


def check(message: Message) -> None:
    """The file fields read here have the Bot API's types (core.telegram.org/bots/api:
    PhotoSize, Animation, Audio, Document, Video, VideoNote, Voice); `file_unique_id`,
    thumbnails and the rest are not read, so not checked."""
    sources = [*message.photo, *(getattr(message, attr) for attr, *_ in _FILES)]
    for source in sources:
        if source is None:
            continue
        require(str, source, "file_id")  # file_id: String
        require(int, source, "file_size", optional=True)  # Optional. Integer (may pass 2^31)
        for name in ("file_name", "mime_type"):  # Optional. String
            if hasattr(source, name):
                require(str, source, name, optional=True)
        for name in ("width", "height", "length"):  # Integer where the type has them
            if hasattr(source, name):
                require(int, source, name)
        _seconds(source)  # duration: Integer seconds


def _photo(sizes: tuple[PhotoSize, ...]) -> Attachment:
    """A photo as its largest size; `fetch` takes the largest that fits the limit."""
    by_area = sorted(sizes, key=lambda size: size.width * size.height, reverse=True)
    largest = by_area[0]

    async def fetch(limit: int) -> bytes:
        fitting = [size for size in by_area if size.file_size is None or size.file_size <= limit]
        if not fitting:
            smallest = min(size.file_size or 0 for size in by_area)
            raise TooLarge(f"the photo is {smallest:,} bytes even at its smallest, over {limit:,}")
        return await _fetcher(fitting[0])(limit)

    return Attachment(
        kind="image",
        name="photo.jpg",
        mime="image/jpeg",
        size=largest.file_size,
        fetch=fetch,
        width=largest.width,
        height=largest.height,
    )


def _fetcher(source: Source) -> Fetch:
    async def fetch(limit: int) -> bytes:
        _refuse_over(source.file_size, limit)
        bot = source.get_bot()
        try:
            file = await bot.get_file(source.file_id)
        except TelegramError as exc:
            if "too big" in str(exc).lower():  # Bot API: "Bad Request: file is too big"
                raise TooLarge(f"Telegram refused it as too big ({exc})") from None
            said = _said(exc, bot)
            raise FetchFailed(f"Telegram would not hand the file over ({said})") from None
        _refuse_over(file.file_size, limit)
        if not file.file_path:
            raise FetchFailed("Telegram gave no path to download the file from")
        try:
            with _limited(limit):
                data = await file.download_as_bytearray()
        except _OverLimit as exc:
            raise TooLarge(f"the file is over the limit of {limit:,} bytes ({exc})") from None
        except TelegramError as exc:
            raise FetchFailed(f"the download from Telegram failed ({_said(exc, bot)})") from None
        if len(data) > limit:  # a FileRequest counts as it reads; another request may not
            raise TooLarge(f"the file is {len(data):,} bytes, over the limit of {limit:,}")
        return bytes(data)

    return fetch


def _name(source: Source, default: str, mime: str, default_mime: str) -> str:
    """The file's own name, else one made up from its kind and type ("audio.m4a")."""
    given = getattr(source, "file_name", None)
    if given:
        return str(given)
    if mime == default_mime:
        return default
    stem = default.rpartition(".")[0] or default
    return stem + (mimetypes.guess_extension(mime) or "")


def _refuse_over(size: int | None, limit: int) -> None:
    if size is not None and size > limit:
        raise TooLarge(f"the file is {size:,} bytes, over the limit of {limit:,}")


@contextlib.contextmanager
def _limited(limit: int) -> Iterator[None]:
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


async def _head(answer: httpx.Response, most: int) -> bytes:
    body = bytearray()
    async for chunk in answer.aiter_bytes():
        body += chunk[: most - len(body)]
        if len(body) >= most:
            break
    return bytes(body)


def _said(exc: TelegramError, bot: Bot) -> str:
    """The library's message, without the token (file URLs carry it)."""
    return str(exc).replace(bot.token, "<token>")[:200]


def _seconds(source: Source) -> float | None:
    """The duration in seconds (python-telegram-bot gives int or timedelta by configuration)."""
    if not hasattr(type(source), "duration"):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        try:
            value = source.duration  # type: ignore[union-attr]
        except (AttributeError, TypeError):  # the library converts what it was given
            value = "not a number"
    if value is None:
        return None
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise Malformed(f"{type(source).__name__}.duration is not a number of seconds")


def _dimensions(source: Source) -> tuple[int | None, int | None]:
    if isinstance(source, VideoNote):
        return source.length, source.length
    return getattr(source, "width", None), getattr(source, "height", None)
