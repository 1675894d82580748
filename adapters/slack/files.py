"""Files shared on Slack as `Attachment`s, downloaded with the bot token within a limit.

A file's bytes are at its `url_private_download`, which takes the bot token as
`Authorization: Bearer` (the app needs the `files:read` scope). The token goes to that
URL only if it is Slack's file host (`https://files.slack.com`), or, when `slack.base_url`
points kioku at another Slack (tests), that base's own scheme, host and port; redirects
are not followed, so it cannot be sent on. The download is streamed and cut off past
the limit; a size Slack declares over it is refused before anything is asked.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import aiohttp

from adapters.base import Attachment, AttachmentKind, Fetch, FetchFailed, TooLarge, kind_by_type

FILE_HOST = ("https", "files.slack.com", 443)
CHUNK = 64 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=30)
_NO_SCOPE = "the Slack app may lack the files:read scope"
_PAGE = f"Slack answered with a web page instead of the file: {_NO_SCOPE}"


class FileShapeError(ValueError):
    """A `files` item of a shape Slack never sends."""


class SlackFiles:
    """The downloads of one adapter: the bot token, where it may go, and the aiohttp
    session they share (opened on the first download, closed by `aclose`)."""

    def __init__(self, bot_token: str, base_url: str | None = None) -> None:
        self._token = bot_token
        self._host = _origin(base_url) if base_url else FILE_HOST
        self._session: aiohttp.ClientSession | None = None
        self._closed = False

    async def aclose(self) -> None:
        """Close the session; a download asked for after this fails."""
        self._closed = True
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    def attachments(self, files: Any) -> tuple[Attachment, ...]:
        """The event's `files` as Attachments; deleted files (tombstones) are left out."""
        if files is None:
            return ()
        if not isinstance(files, list):
            raise FileShapeError(f"files is {type(files).__name__}, not a list")
        return tuple(self._attachment(item) for item in files if not _deleted(item))

    def _attachment(self, item: Any) -> Attachment:
        if not isinstance(item, dict):
            raise FileShapeError(f"a files item is {type(item).__name__}, not an object")
        mime = _optional(item, "mimetype", str) or "application/octet-stream"
        given = _optional(item, "name", str) or _optional(item, "title", str)
        kind = _kind(mime, given or "", _optional(item, "subtype", str))
        name = given or kind
        size = _optional(item, "size", int)
        duration = _optional(item, "duration_ms", int)
        url = _optional(item, "url_private_download", str)
        return Attachment(
            kind=kind,
            name=name,
            mime=mime,
            size=size,
            fetch=self._fetcher(url, size),
            duration=duration / 1000 if duration is not None else None,
            width=_optional(item, "original_w", int),
            height=_optional(item, "original_h", int),
        )

    def _fetcher(self, url: str | None, size: int | None) -> Fetch:
        async def fetch(limit: int) -> bytes:
            if size is not None and size > limit:
                raise TooLarge(f"the file is {size:,} bytes, over the limit of {limit:,}")
            if url is None:
                raise FetchFailed("Slack gave no download link for the file")
            self._check(url)
            try:
                return await self._download(url, limit)
            except TimeoutError:
                raise FetchFailed("the download from Slack timed out") from None
            except aiohttp.ClientError as exc:
                raise FetchFailed(f"the download from Slack failed ({exc!r:.200})") from None

        return fetch

    def _check(self, url: str) -> None:
        """Refuse a URL the token must not go to."""
        try:
            origin = _origin(url)
        except ValueError:
            origin = None
        if origin != self._host:
            scheme, host, port = self._host
            raise FetchFailed(
                f"the file's link is not on Slack's file host ({scheme}://{host}:{port}), "
                "so the bot token was not sent to it"
            )

    async def _download(self, url: str, limit: int) -> bytes:
        if self._closed:
            raise FetchFailed("the Slack adapter has stopped")
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=TIMEOUT)
        headers = {"Authorization": f"Bearer {self._token}"}
        async with self._session.get(url, headers=headers, allow_redirects=False) as answer:
            if answer.status in (401, 403) or 300 <= answer.status < 400:
                raise FetchFailed(f"Slack refused the download ({answer.status}): {_NO_SCOPE}")
            if answer.status != 200:
                raise FetchFailed(f"Slack answered the download with {answer.status}")
            if answer.content_type == "text/html":  # Slack's sign-in page, not the file
                raise FetchFailed(_PAGE)
            if answer.content_length is not None and answer.content_length > limit:
                raise TooLarge(
                    f"the file is {answer.content_length:,} bytes, over the limit of {limit:,}"
                )
            body = bytearray()
            async for chunk in answer.content.iter_chunked(CHUNK):
                body += chunk
                if len(body) > limit:
                    raise TooLarge(f"the file is more than the limit of {limit:,} bytes")
            return bytes(body)


def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; ValueError for anything else."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in ("http", "https") or not host:
        raise ValueError(f"not an http(s) URL: {url[:100]!r}")
    return scheme, host, parts.port or (443 if scheme == "https" else 80)


def _kind(mime: str, name: str, subtype: str | None) -> AttachmentKind:
    """An audio clip recorded in Slack itself (`slack_audio`) is a voice note."""
    if subtype == "slack_audio":
        return "voice"
    return kind_by_type(mime, name)


def _deleted(item: Any) -> bool:
    return isinstance(item, dict) and item.get("mode") == "tombstone"


def _optional(item: dict[str, Any], name: str, kind: type) -> Any:
    value = item.get(name)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise FileShapeError(f"a file's {name} is {type(value).__name__}, not {kind.__name__}")
    return value
