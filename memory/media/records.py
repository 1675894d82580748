"""What crosses the layers about kept media: a file to keep, a file kept, the totals."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

MediaKind = Literal["image", "voice", "audio", "video", "document"]
MEDIA_KINDS: tuple[MediaKind, ...] = ("image", "voice", "audio", "video", "document")
GROUP_OWNER = "group:"
"""How a group's media is owned: `group:` and its conversation key, never a person id
(a person id has no colon)."""


@dataclass(frozen=True)
class NewMedia:
    """A file to keep. `name` and `mime` come from the sender's platform, so neither is
    trusted: the name on disk is made safe from `name` (see `memory.media.names`)."""

    kind: MediaKind
    name: str
    mime: str
    data: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if self.kind not in MEDIA_KINDS:
            raise ValueError(
                f"media kind must be one of {', '.join(MEDIA_KINDS)}, not {self.kind!r}"
            )
        if not isinstance(self.data, bytes):
            raise ValueError("media data must be bytes")


@dataclass(frozen=True)
class StoredMedia:
    """A kept file: its row in `media`. `path` is relative to `$KIOKU_HOME`
    (`media_path` gives the file); `owner` is a person id or `group:<conversation>`."""

    id: int
    message_id: int
    session_id: int
    owner: str
    kind: str
    name: str
    mime: str
    bytes: int
    path: str
    created_at: datetime

    @property
    def is_group(self) -> bool:
        return self.owner.startswith(GROUP_OWNER)


@dataclass(frozen=True)
class MediaCount:
    """How many kept files there are and how many bytes they hold (`kioku status`)."""

    files: int
    bytes: int
