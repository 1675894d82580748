"""The text a turn with files is stored as, and shown to the model as.

The stand-ins come first, one a line, so that a search finds the turn by a file's name
and history reads like what was sent: "[photo 1280x960: receipt.jpg]" above the caption.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.media.items import Prepared
from agent.media.naming import shown_name

TRANSCRIBED = "transcribed"


def compose_stored(text: str, media: Sequence[Prepared]) -> str:
    """The stand-ins of `media`, one a line, then `text` (the caption or transcript);
    `text` alone when there are no files."""
    lines = [_stand_in(item) for item in media]
    if text or not lines:
        lines.append(text)
    return "\n".join(lines)


def file_stand_in(kind: str, name: str) -> str:
    """A file's line before it is read (or when it is not): "[photo receipt.jpg]"."""
    shown = shown_name(name)
    word = {"image": "photo", "voice": "voice", "audio": "audio", "video": "video"}.get(
        kind, "document"
    )
    return f"[{word} {shown}]" if shown else f"[{word}]"


def _stand_in(item: Prepared) -> str:
    """A voice note's stand-in says that the text below it is what kioku heard, so
    history never passes a transcript off as typed words: "[voice 0:21, transcribed]"."""
    if item.transcript is None:
        return item.stand_in
    if item.stand_in.endswith("]"):
        return f"{item.stand_in[:-1]}, {TRANSCRIBED}]"
    return f"{item.stand_in} ({TRANSCRIBED})"
