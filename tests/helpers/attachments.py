"""Attachments as an adapter hands them over, with bytes given by the test."""

from __future__ import annotations

from adapters.base import Attachment, AttachmentKind, TooLarge


def attached(
    kind: AttachmentKind,
    name: str,
    data: bytes,
    *,
    mime: str = "",
    size: int | None = None,
    duration: float | None = None,
) -> Attachment:
    """An attachment whose download gives `data`, bounded as an adapter's is."""

    declared = len(data) if size is None else size

    async def fetch(limit: int) -> bytes:
        if declared > limit or len(data) > limit:
            raise TooLarge(f"{len(data)} bytes")
        return data

    return Attachment(kind, name, mime, declared, fetch, duration=duration)
