"""A reply too long for one platform message, sent as one `reply.md` document instead.

When `Outbound.long_as_file` is set (`media.long_replies_as_file`) and the text would be
split into several messages, Telegram, Discord and Slack each upload it as a Markdown
file, with its first line as the caption when that is short, so a long answer is one
thing to read, save or forward. The platform calls live in each adapter; this holds
what they share.
"""

from __future__ import annotations

from adapters.base import Outbound
from inputs.text import well_formed

FILE_NAME = "reply.md"
MIME = "text/markdown"
CAPTION_AT_MOST = 200
"""Characters of a first line shown as the caption; a longer one is left to the file."""


def goes_as_file(message: Outbound, pieces: int) -> bool:
    """Whether the reply, split into `pieces` messages for the platform, goes as a file."""
    return message.long_as_file and pieces > 1


def file_bytes(text: str) -> bytes:
    """The document's content: the reply as UTF-8 (a lone surrogate becomes U+FFFD)."""
    return well_formed(text).encode("utf-8")


def caption(text: str) -> str | None:
    """The reply's first non-empty line, when it is short enough to introduce the file."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= CAPTION_AT_MOST else None
    return None
