"""Files on Matrix messages (`m.image`, `m.audio`, `m.video`, `m.file`) as `Attachment`s.

The bytes live in the homeserver's media repository under an `mxc://` URI, downloaded
through matrix-nio (the authenticated `/_matrix/client/v1/media` endpoints). In an
encrypted room the file is encrypted too: its event carries the AES key, IV and SHA-256
(`file`), and the bytes are decrypted (and checked) after download. A voice note is an
`m.audio` marked `org.matrix.msc3245.voice`, as Element sends it.
"""

from __future__ import annotations

from typing import Any

from nio import (
    AsyncClient,
    DownloadError,
    RoomEncryptedAudio,
    RoomEncryptedImage,
    RoomEncryptedMedia,
    RoomEncryptedVideo,
    RoomMessageAudio,
    RoomMessageImage,
    RoomMessageMedia,
    RoomMessageVideo,
)
from nio.crypto.attachments import decrypt_attachment
from nio.exceptions import EncryptionError

from adapters.base import Attachment, AttachmentKind, Fetch, FetchFailed, TooLarge, kind_by_type

VOICE = "org.matrix.msc3245.voice"
_NAMES = {"image": "photo", "audio": "audio", "voice": "voice", "video": "video"}


def _kind(event: RoomMessageMedia | RoomEncryptedMedia, mime: str, name: str) -> AttachmentKind:
    if isinstance(event, RoomMessageImage | RoomEncryptedImage):
        return "image"
    if isinstance(event, RoomMessageAudio | RoomEncryptedAudio):
        return "voice" if VOICE in event.source.get("content", {}) else "audio"
    if isinstance(event, RoomMessageVideo | RoomEncryptedVideo):
        return "video"
    return kind_by_type(mime, name)


def _number(info: dict[str, Any], key: str) -> int | None:
    value = info.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def attachment(client: AsyncClient, event: RoomMessageMedia | RoomEncryptedMedia) -> Attachment:
    """The event's file, fetched only when the gateway asks (within its limit)."""
    content: dict[str, Any] = event.source.get("content", {})
    info = content.get("info") if isinstance(content.get("info"), dict) else {}
    assert isinstance(info, dict)
    mime = info.get("mimetype") if isinstance(info.get("mimetype"), str) else ""
    if isinstance(event, RoomEncryptedMedia) and not mime:
        mime = event.mimetype or ""
    filename = content.get("filename")
    name = filename if isinstance(filename, str) and filename else event.body
    kind = _kind(event, str(mime), name)
    size = _number(info, "size")
    duration = _number(info, "duration")
    return Attachment(
        kind=kind,
        name=name or _NAMES.get(kind, "file"),
        mime=str(mime) or "application/octet-stream",
        size=size,
        fetch=_fetcher(client, event, size),
        duration=duration / 1000 if duration is not None else None,
        width=_number(info, "w"),
        height=_number(info, "h"),
    )


def caption(event: RoomMessageMedia | RoomEncryptedMedia) -> str:
    """The text sent with the file: `body` is a caption only when a separate `filename`
    names the file (Matrix 1.10); otherwise `body` is the file name."""
    filename = event.source.get("content", {}).get("filename")
    if isinstance(filename, str) and filename and filename != event.body:
        return event.body
    return ""


def _fetcher(
    client: AsyncClient, event: RoomMessageMedia | RoomEncryptedMedia, size: int | None
) -> Fetch:
    async def fetch(limit: int) -> bytes:
        if size is not None and size > limit:
            raise TooLarge(f"the file is {size:,} bytes, over the limit of {limit:,}")
        answer = await client.download(mxc=event.url)
        if isinstance(answer, DownloadError):
            raise FetchFailed(f"the homeserver did not give the file: {answer.message}")
        body = answer.body
        if not isinstance(body, bytes):
            raise FetchFailed("the homeserver's answer held no file")
        if len(body) > limit:
            raise TooLarge(f"the file is {len(body):,} bytes, over the limit of {limit:,}")
        if isinstance(event, RoomEncryptedMedia):
            return _decrypted(event, body)
        return body

    return fetch


def _decrypted(event: RoomEncryptedMedia, body: bytes) -> bytes:
    try:
        plain: bytes = decrypt_attachment(body, event.key["k"], event.hashes["sha256"], event.iv)
    except (EncryptionError, KeyError, TypeError) as exc:
        raise FetchFailed(f"the encrypted file could not be decrypted: {exc}") from exc
    return plain
