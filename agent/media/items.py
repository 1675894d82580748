"""A received file before and after kioku reads it; the types the gateway, the media
readers and the turn share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.providers import Block

Kind = Literal["image", "voice", "audio", "video", "document"]


@dataclass(frozen=True)
class Incoming:
    """A file downloaded from a platform (within `media.max_bytes`), not yet read.
    `name` and `mime` are what the sender's platform said: both untrusted."""

    kind: Kind
    name: str
    mime: str
    data: bytes = field(repr=False)
    duration: float | None = None


@dataclass(frozen=True)
class KeptFile:
    """The bytes to keep under the owner's `media/` folder (an image as sent to the
    model: EXIF-free), and what kind of file it is."""

    kind: Kind
    name: str
    mime: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class Prepared:
    """One file as the turn uses it.

    `stand_in` ("[photo 1280x960: receipt.jpg]", "[voice 0:21]") goes into the stored
    user turn, so search finds the file by its name; `blocks` are what the model gets
    for it (an `Image`, a `Document`, or `Text` holding a document's text or an image's
    description); `transcript` is what a voice note said, which is the person's own
    text; `notice` is told to the person (what could not be read, and why, or what was
    cut); `keep` is the file to store, when `media.keep` is on and it was read.
    """

    stand_in: str
    blocks: tuple[Block, ...] = ()
    transcript: str | None = None
    notice: str | None = None
    keep: KeptFile | None = None
