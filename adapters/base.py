"""The seam between platforms and the gateway: neutral messages and the adapter contract.

An adapter turns platform events into `Inbound` and delivers `Outbound`; it knows
nothing about agents, sessions or memory. Reconnecting inside a library is the
adapter's business; if it gives up, it reports the failure and the gateway's
supervisor restarts it with backoff while the other adapters keep serving.
"""

from __future__ import annotations

import asyncio
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePath
from typing import ClassVar, Literal

from adapters.catch_up import CatchUpSource, no_catch_up
from inputs.text import well_formed

MAX_NAME = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_TEXTS = ("chat", "sender", "text", "thread", "sender_name", "message_id", "reply_to_text")


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Address:
    """Where a reply goes: the chat (and thread) of the message it answers."""

    platform: str
    chat: str
    thread: str = ""
    reply_to: str | None = None


AttachmentKind = Literal["image", "voice", "audio", "video", "document"]
_FAMILIES: dict[str, AttachmentKind] = {"image": "image", "audio": "audio", "video": "video"}
TEXT_IMAGE_TYPE = "image/svg+xml"


def kind_by_type(mime: str, name: str = "") -> AttachmentKind:
    """What a file is by its media type (a voice note is the platform's own marker, not
    a type): an image, audio or video, else a document. An SVG is a document whatever
    it was sent as: it is XML text, read as text, not a picture to decode."""
    mime = mime.partition(";")[0].strip().lower()
    if mime == TEXT_IMAGE_TYPE or PurePath(name).suffix.lower() == ".svg":
        return "document"
    return _FAMILIES.get(mime.partition("/")[0], "document")


class FetchFailed(Exception):
    """An attachment's bytes could not be had; the message says why, for the person."""


class TooLarge(FetchFailed):
    """The file is larger than the `limit` given to `Attachment.fetch`."""


Fetch = Callable[[int], Awaitable[bytes]]
"""Download the file, at most `limit` bytes: past it `TooLarge`, any other failure
`FetchFailed`. Nothing is downloaded before it is called."""


@dataclass(frozen=True)
class Attachment:
    """A file on a message, not yet downloaded, as every platform can describe it.

    The adapter fills what its platform declares (`size` and `duration` may be unknown)
    and a `fetch` that gets the bytes through the platform's own library, so the gateway
    decides whether, and how much, to read. `name` is the file name as sent, or one made
    up from the kind ("photo.jpg"); it is never trusted as a path.
    """

    kind: AttachmentKind
    name: str
    mime: str
    size: int | None
    fetch: Fetch = field(repr=False, compare=False)
    duration: float | None = None
    width: int | None = None
    height: int | None = None

    def __post_init__(self) -> None:
        # The name is shown, stored and searched: one line of text, of a sane length.
        name = _CONTROL.sub(" ", well_formed(self.name)).strip()[:MAX_NAME] or f"{self.kind} file"
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "mime", _CONTROL.sub("", well_formed(self.mime))[:100].lower())


@dataclass(frozen=True)
class Inbound:
    """One message from a person, as every platform can describe it.

    `sender` is the identity (`telegram:123`, `cli:1000`). In groups, `addressed`
    says whether kioku was mentioned, replied to or commanded (`/cmd@bot`); kioku
    answers only then. `attachments` are the files on the message (its caption is
    `text`); `unreadable` names what has no file to read (a sticker), so the person is
    told instead of being ignored. `message_id` is unique within its chat; a second
    delivery with the same id is dropped.
    """

    platform: str
    chat: str
    sender: str
    text: str
    is_direct: bool
    thread: str = ""
    sender_name: str | None = None
    addressed: bool = False
    message_id: str | None = None
    reply_to_text: str | None = None
    unreadable: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    received_at: datetime = field(default_factory=_now)
    kept_by_platform: bool = True
    """False for a message its platform keeps nowhere (a slash command's interaction, a
    line from the CLI socket): no catch-up pass can read on from it, so it moves no
    cursor, and it is not held over a restart (its sender waits for the reply, or sends
    it again)."""

    def __post_init__(self) -> None:
        # JSON's "\ud800" escapes decode to lone surrogates, which no UTF-8 store or API
        # takes: each becomes U+FFFD here, once for every platform.
        for name in _TEXTS:
            value = getattr(self, name)
            if isinstance(value, str) and not value.isascii():  # the common case costs nothing
                object.__setattr__(self, name, well_formed(value))

    @property
    def address(self) -> Address:
        return Address(self.platform, self.chat, self.thread, self.message_id)


@dataclass(frozen=True)
class Outbound:
    """A complete reply; the adapter splits and formats it for its platform."""

    address: Address
    text: str
    long_as_file: bool = False
    """If the text does not fit in one message, send it as one `.md` document instead
    of several messages, where the platform can (`media.long_replies_as_file`)."""
    more: bool = False
    """Another reply to the same message follows (what was not read, before the answer):
    a client that waits for one reply (the CLI's) keeps waiting."""


@dataclass(frozen=True)
class Delta:
    """A piece of a reply still being written, for adapters that stream (`streams`)."""

    address: Address
    text: str


@dataclass(frozen=True)
class Missed:
    """What a catch-up pass found: messages sent to kioku while it was away (stopped, or
    reconnecting), of every conversation the pass looked at, each with its own
    `received_at` (when it was sent). The adapter hands over one `Missed` per pass, also
    when it found nothing, so `kioku status` can say when it last caught up; the gateway
    drops what it already has and answers each conversation once."""

    platform: str
    messages: tuple[Inbound, ...] = ()


@dataclass(frozen=True)
class Changed:
    """A message edited on its platform (`text` is what it says now) or deleted (`text`
    is None). `chat` and `message_id` name it as its `Inbound` did."""

    platform: str
    chat: str
    message_id: str
    text: str | None
    thread: str = ""

    def __post_init__(self) -> None:
        if self.text is not None and not self.text.isascii():
            object.__setattr__(self, "text", well_formed(self.text))

    @property
    def deleted(self) -> bool:
        return self.text is None


Event = Inbound | Missed | Changed
EventHandler = Callable[[Event], Awaitable[None]]
"""The gateway's way in: a message, a catch-up pass's finds, or an edit or deletion. It
returns once what it was given is stored (or dropped), so an adapter confirms to its
platform only what kioku can no longer lose."""


@dataclass(frozen=True)
class MenuCommand:
    """One slash command as a platform's own command menu shows it (Telegram's
    setMyCommands, Discord's application commands, Slack's app manifest). `argument`
    names what may follow it (`CODE`, `[ZONE]`), empty for a command that takes nothing."""

    name: str
    summary: str
    argument: str = ""


class AdapterFailed(RuntimeError):
    """The adapter stopped serving by itself; the supervisor restarts it."""


class Adapter(ABC):
    """A short class with three verbs: `start`, `stop`, `send`, plus the `deliver` callback
    and `catch_up`, which says what a catch-up pass may read (platforms that can read
    what was missed ask it on start and after each reconnect)."""

    name: ClassVar[str]
    streams: ClassVar[bool] = False

    def __init__(self, deliver: EventHandler, catch_up: CatchUpSource = no_catch_up) -> None:
        self.deliver = deliver
        self.catch_up = catch_up
        self._failure: asyncio.Future[BaseException] | None = None

    @abstractmethod
    async def start(self) -> None:
        """Connect and begin delivering; return once serving, raise if that is impossible."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop taking messages and release every connection and task; safe to call twice."""

    async def __aenter__(self) -> Adapter:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @abstractmethod
    async def send(self, message: Outbound) -> None:
        """Deliver a reply; raise if it could not be delivered after the platform's retries."""

    async def stream(self, delta: Delta) -> None:
        """Show a growing reply; only called on adapters that set `streams`."""
        raise NotImplementedError(f"the {self.name} adapter does not stream replies")

    async def working(self, address: Address) -> None:
        """Show that kioku is working on an answer; platforms with no indicator ignore it."""
        return None

    async def direct_chat(self, user: str) -> str:
        """The chat of the direct conversation with `user` (an identity's part after the
        platform), for a message nobody asked for (a reminder). Telegram addresses a
        person's DM by their user id; a platform that needs more says so here."""
        return user

    def failed(self, error: BaseException) -> None:
        """Called by the adapter when it can no longer serve (not for errors it recovers from)."""
        failure = self._pending_failure()
        if not failure.done():
            failure.set_result(error)

    async def wait_failed(self) -> BaseException:
        """Return the error once the adapter reports it has stopped serving."""
        return await asyncio.shield(self._pending_failure())

    def clear_failure(self) -> None:
        """Forget a reported failure; the supervisor calls it before each (re)start."""
        self._failure = None

    def _pending_failure(self) -> asyncio.Future[BaseException]:
        if self._failure is None:
            self._failure = asyncio.get_running_loop().create_future()
        return self._failure
