"""The client end of the CLI socket, for `kioku chat`, `kioku status` and `kioku mcp list`.

A plain blocking socket: these commands run no event loop, and a blocking read is
what lets Ctrl-C end them at once. What the daemon sends is held to the limits the
daemon holds its clients to (`MAX_FRAME`, the decode of `adapters.cli.protocol`), and a status
must have the shape the commands print (`status_shape`): anything else is a
`DaemonError`, never a traceback.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapters.cli.names import DEFAULT_CONVERSATION
from adapters.cli.protocol import (
    MAX_FRAME,
    BadFrame,
    Frame,
    attach_frames,
    claim_owner_request,
    decode,
    encode,
    message_frame,
    reload_request,
    schedule_changed_request,
    status_request,
    too_long,
)

if TYPE_CHECKING:
    from gateway.client.attach_files import LocalFile


class NotRunning(ConnectionError):
    """Nothing listens on the socket; `str()` says how to start kioku."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"kioku is not running (no socket at {path}): start it with `kioku serve` or `make run`"
        )


class DaemonError(RuntimeError):
    """The daemon answered with an error frame, or with something no kioku sends."""


class ConnectionLost(DaemonError):
    """The connection is over: the daemon closed it, or sent what ends it."""


class NoAnswer(TimeoutError):
    """The daemon did not answer in time."""


class SocketClient:
    """One connection; `ask` sends a message and returns the complete reply."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            self._sock.close()
            raise NotRunning(path) from None
        except OSError:
            self._sock.close()
            raise
        self._file = self._sock.makefile("rwb")

    def close(self) -> None:
        self._file.close()
        self._sock.close()

    def __enter__(self) -> SocketClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def status(self) -> dict[str, Any]:
        self._send(status_request())
        deadline = time.monotonic() + self.timeout
        while True:
            frame = self._receive(deadline)
            if frame.get("type") == "status":
                from gateway.client.status_shape import status_problem

                problem = status_problem(frame)
                if problem is not None:
                    raise DaemonError(f"kioku sent a status this client cannot read ({problem})")
                return frame
            if frame.get("type") == "error" and "id" not in frame:
                raise DaemonError(str(frame.get("message")))

    def schedule_changed(self) -> None:
        """Tell the daemon that jobs changed in state.db; it answers `ok` once told."""
        self._send(schedule_changed_request())
        self._answer("ok", self.timeout)

    def reload(self) -> None:
        """Have the daemon apply the reloadable settings (as SIGHUP), and wait till it has."""
        self._send(reload_request())
        self._answer("ok", self.timeout)

    def claim_owner(
        self, platform: str, code: str, within: float, waiting: Callable[[], None]
    ) -> str | None:
        """The identity whose DM on `platform` carried `code` within `within` seconds, None
        if none did; `waiting` is called once the daemon counts DMs. A refusal is a
        `DaemonError`."""
        self._send(claim_owner_request(platform, code, within))
        self._answer("claim_waiting", self.timeout)
        waiting()
        identity = self._answer("owner_claimed", within + self.timeout).get("identity")
        return identity if isinstance(identity, str) else None

    def _answer(self, kind: str, seconds: float) -> Frame:
        """The next frame of type `kind` (an error frame is a `DaemonError`)."""
        deadline = time.monotonic() + seconds
        while True:
            frame = self._receive(deadline)
            if frame.get("type") == kind:
                return frame
            if frame.get("type") == "error" and "id" not in frame:
                raise DaemonError(str(frame.get("message")))

    def ask(
        self,
        text: str,
        conversation: str = DEFAULT_CONVERSATION,
        on_delta: Callable[[str], None] | None = None,
        files: Sequence[LocalFile] = (),
        on_note: Callable[[str], None] | None = None,
    ) -> str:
        """Send `text` with `files` and wait for its reply, passing each streamed piece to
        `on_delta` and each message before the reply (a file not read) to `on_note`. A
        file that cannot be read to its end is `NotAttachable`, and the message is not
        sent."""
        message_id = uuid.uuid4().hex
        for item in files:
            self._send_file(message_id, item)
        self._send(message_frame(message_id, text, conversation, len(files)))
        deadline = time.monotonic() + self.timeout
        while True:
            frame = self._receive(deadline)
            kind = frame.get("type")
            if kind == "error" and frame.get("id") in (message_id, None):
                raise DaemonError(str(frame.get("message")))
            if frame.get("id") != message_id:
                continue
            if kind == "delta" and on_delta is not None:
                on_delta(str(frame.get("text", "")))
            elif kind == "note" and on_note is not None:
                on_note(str(frame.get("text", "")))
            elif kind == "reply":
                return str(frame.get("text", ""))

    def _send_file(self, message_id: str, item: LocalFile) -> None:
        """The file's `attach` frames; one that ended short is refused by the daemon, so
        nothing of it stays there."""
        from gateway.client.attach_files import NotAttachable, Pieces

        pieces = Pieces(item)
        for frame in attach_frames(message_id, item.name, item.mime, item.size, iter(pieces)):
            self._send(frame)
        if pieces.error is not None:
            raise NotAttachable(pieces.error)

    def _send(self, frame: Frame) -> None:
        """Write one frame; one the daemon would drop as too long is refused here."""
        data = encode(frame)
        if len(data) - 1 > MAX_FRAME:
            raise DaemonError(too_long(MAX_FRAME))
        self._file.write(data)
        self._file.flush()

    def _receive(self, deadline: float) -> Frame:
        """The next frame, read no further than `MAX_FRAME` bytes: what the daemon sends is
        held to the limits the daemon holds its clients to."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NoAnswer(f"no answer from kioku within {self.timeout:g} s")
        self._sock.settimeout(remaining)
        try:
            line = self._file.readline(MAX_FRAME + 1)
        except TimeoutError:
            raise NoAnswer(f"no answer from kioku within {self.timeout:g} s") from None
        if not line:
            raise ConnectionLost("kioku closed the connection (is it shutting down?)")
        if len(line) > MAX_FRAME and not line.endswith(b"\n"):
            self.close()
            raise ConnectionLost(f"kioku sent a frame longer than {MAX_FRAME} bytes: closed")
        try:
            return decode(line)
        except BadFrame as exc:
            raise DaemonError(f"unexpected frame from kioku ({exc}): {line[:200]!r}") from None
