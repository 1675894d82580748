"""Files arriving on one CLI connection, gathered per message id from `attach` frames.

The rules of `adapters/cli/protocol.py` that span frames live here: the pieces of a file
add up to its declared size, a message carries at most `MAX_ATTACHMENTS` files and
`MAX_ATTACHED_BYTES` in all, and what a connection holds before its messages arrive is
bounded by the same cap (and to `AT_ONCE` messages), so no client can make the daemon
hold more than that.
After a refusal the rest of that message's frames are dropped without more errors, and
its message frame too: the client has already been told, once.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field

from adapters.base import Attachment, TooLarge, kind_by_type
from adapters.cli.protocol import MAX_ATTACHED_BYTES, MAX_ATTACHMENTS, Attach, BadFrame, Message

GENERIC_MIME = "application/octet-stream"
REMEMBERED_REFUSALS = 100
AT_ONCE = 16
"""Messages a connection may be sending files for at the same time."""
"""How many refused message ids a connection remembers, to drop their later frames."""


@dataclass(frozen=True)
class Received:
    """One whole file, as the client sent it."""

    name: str
    mime: str
    data: bytes


def attachment(item: Received) -> Attachment:
    """The file as the gateway reads every platform's: its bytes are already here, so
    `fetch` only holds them to the gateway's limit."""
    mime = item.mime.lower()
    if mime == GENERIC_MIME:
        mime = mimetypes.guess_type(item.name, strict=False)[0] or GENERIC_MIME
    size = len(item.data)

    async def fetch(limit: int) -> bytes:
        if size > limit:
            raise TooLarge(f"{item.name} is {size} bytes, over the limit of {limit} bytes")
        return item.data

    return Attachment(kind_by_type(mime, item.name), item.name, mime, size, fetch)


@dataclass
class _Partial:
    name: str
    mime: str
    size: int
    pieces: list[bytes] = field(default_factory=list)
    received: int = 0


@dataclass
class _Gathering:
    done: list[Received] = field(default_factory=list)
    current: _Partial | None = None


class Uploads:
    """The files of one connection's messages still being sent."""

    def __init__(self, cap: int = MAX_ATTACHED_BYTES) -> None:
        self.cap = cap
        self._messages: dict[str, _Gathering] = {}
        self._refused: dict[str, bool] = {}  # ordered: the oldest is forgotten first
        self.held = 0
        """Bytes received and not yet handed over with their message."""

    def add(self, piece: Attach) -> None:
        """Take one `attach` frame; `BadFrame` (once per message) if it breaks a rule."""
        if piece.id in self._refused:
            return
        try:
            self._add(piece)
        except BadFrame:
            self.refuse(piece.id)
            raise

    def refuse(self, message_id: str) -> bool:
        """Drop what `message_id` gathered and its frames still to come; True the first
        time (the client is to be told), False when it was refused already."""
        if message_id in self._refused:
            return False
        self._release(message_id)
        self._refused[message_id] = True
        while len(self._refused) > REMEMBERED_REFUSALS:
            del self._refused[next(iter(self._refused))]
        return True

    def take(self, message: Message) -> tuple[Received, ...] | None:
        """The files of `message`, which must be exactly as many as it says arrived whole.

        None when its files were refused already (drop the message: the client was told).
        """
        if self._refused.pop(message.id, False):
            return None
        gathering = self._release(message.id) or _Gathering()
        if gathering.current is not None:
            raise BadFrame(
                f"the message came before the end of {gathering.current.name}: send its "
                'last piece ("last": true) first',
                message.id,
            )
        done = gathering.done
        if len(done) != message.attachments:
            raise BadFrame(
                f"the message says {message.attachments} attachment(s) but {len(done)} "
                "arrived: send each file's attach frames before the message",
                message.id,
            )
        return tuple(done)

    def _add(self, piece: Attach) -> None:
        if piece.id not in self._messages and len(self._messages) >= AT_ONCE:
            raise BadFrame(
                f"files for {AT_ONCE} messages are waiting on this connection: send those "
                "messages before the files of another",
                piece.id,
            )
        gathering = self._messages.setdefault(piece.id, _Gathering())
        current = gathering.current
        if current is None:
            if len(gathering.done) >= MAX_ATTACHMENTS:
                raise BadFrame(
                    f"at most {MAX_ATTACHMENTS} files per message: {piece.name} is one too many",
                    piece.id,
                )
            already = sum(len(item.data) for item in gathering.done)
            if already + piece.size > self.cap:
                raise BadFrame(
                    f"{piece.name} ({piece.size} bytes) takes this message's files past "
                    f"{self.cap} bytes, the most the socket takes: send fewer or smaller files",
                    piece.id,
                )
            current = gathering.current = _Partial(piece.name, piece.mime, piece.size)
        elif (piece.name, piece.mime, piece.size) != (current.name, current.mime, current.size):
            raise BadFrame(
                f"a piece of {piece.name!r} arrived while {current.name!r} was not finished: "
                "send one file's pieces, up to its last, before the next file",
                piece.id,
            )
        if current.received + len(piece.data) > current.size:
            raise BadFrame(
                f"{current.name} is longer than the {current.size} bytes its frames declare",
                piece.id,
            )
        if self.held + len(piece.data) > self.cap:
            raise BadFrame(
                f"this connection holds {self.held} bytes of files not yet sent with their "
                f"message, the most it may: send each message after its files",
                piece.id,
            )
        current.pieces.append(piece.data)
        current.received += len(piece.data)
        self.held += len(piece.data)
        if not piece.last:
            return
        if current.received != current.size:
            raise BadFrame(
                f"{current.name} ended after {current.received} of the {current.size} bytes "
                "its frames declare",
                piece.id,
            )
        gathering.done.append(Received(current.name, current.mime, b"".join(current.pieces)))
        gathering.current = None

    def _release(self, message_id: str) -> _Gathering | None:
        """Stop holding what `message_id` gathered; return it."""
        gathering = self._messages.pop(message_id, None)
        if gathering is not None:
            self.held -= sum(len(item.data) for item in gathering.done)
            if gathering.current is not None:
                self.held -= gathering.current.received
        return gathering
