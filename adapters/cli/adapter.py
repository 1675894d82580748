"""The local CLI socket: `kioku chat` and `kioku status` talk to the daemon through it.

A Unix socket `$KIOKU_HOME/gateway.sock`, mode 0600, so only the account running
kioku (and root) can connect; the kernel tells us who the peer is (SO_PEERCRED), so
the identity `cli:<uid>` needs no password. The frames are those of
`adapters/cli/protocol.py`; a bad frame gets an error frame and the connection stays usable.
Files come as bytes in `attach` frames (`adapters/cli/uploads.py` gathers them), never as
a path for the daemon to open.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import os
import pwd
import socket
import stat
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import structlog

from adapters.base import Adapter, Delta, EventHandler, Inbound, Outbound
from adapters.cli.framer import Framer, FrameTooLong
from adapters.cli.protocol import (
    MAX_FRAME,
    Attach,
    BadAttach,
    BadFrame,
    ClaimOwner,
    Frame,
    Message,
    claim_waiting_frame,
    encode,
    error_frame,
    ok_frame,
    owner_claimed_frame,
    parse_frame,
    status_frame,
    text_frame,
    too_long,
)
from adapters.cli.uploads import Received, Uploads, attachment

log = structlog.get_logger("kioku.cli_socket")

WRITE_TIMEOUT = 10.0
STOP_WAIT = 2.0
"""How long `stop()` lets each connection close before cutting it (twice at most)."""
READ_CHUNK = 64 * 1024
# sockaddr_un.sun_path holds 108 bytes including the terminating NUL.
MAX_SOCKET_PATH = 107

StatusSource = Callable[[], Awaitable[dict[str, Any]]]
Changed = Callable[[], None]
Reload = Callable[[], Awaitable[None]]
Claim = Callable[[str, str, float], Awaitable[str | None]]
"""(platform, code, seconds): starts waiting at once (raising RuntimeError if it cannot);
the awaitable gives the identity that sent the code in a DM there, or None."""


class SocketInUse(RuntimeError):
    """Another process answers on the socket path (a second daemon on the same home)."""


def peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end, as the kernel recorded it."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    return pid, uid, gid


def _user_name(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None


@dataclass(eq=False)
class _Connection:
    number: int
    uid: int
    name: str | None
    writer: asyncio.StreamWriter
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: set[str] = field(default_factory=set)  # message ids whose reply goes here
    uploads: Uploads = field(default_factory=Uploads)

    async def send(self, frame: Frame) -> bool:
        """Write one frame; False (and the connection closed) if the client is gone or stuck."""
        data = encode(frame)
        async with self.lock:
            if self.writer.is_closing():
                return False
            self.writer.write(data)
            try:
                await asyncio.wait_for(self.writer.drain(), WRITE_TIMEOUT)
            except (ConnectionError, TimeoutError) as exc:
                log.info("cli_client_dropped", connection=self.number, error=repr(exc))
                self.writer.close()
                return False
        return True


class CliSocketAdapter(Adapter):
    """Serves the local socket; replies find their connection by `Address.reply_to`."""

    name = "cli"
    streams = True

    def __init__(
        self,
        deliver: EventHandler,
        path: Path,
        status: StatusSource,
        *,
        owner_uid: int | None = None,
        max_frame: int = MAX_FRAME,
        schedule_changed: Changed | None = None,
        reload: Reload | None = None,
        claim_owner: Claim | None = None,
    ) -> None:
        super().__init__(deliver)
        self.path = path
        self._status = status
        self._schedule_changed = schedule_changed
        self._reload = reload
        self._claim_owner = claim_owner
        self._owner_uid = os.getuid() if owner_uid is None else owner_uid
        self._max_frame = max_frame
        self._server: asyncio.Server | None = None
        self._inode: int | None = None
        self._numbers = itertools.count(1)
        self._connections: dict[int, _Connection] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._routes: dict[str, _Connection] = {}

    async def start(self) -> None:
        if len(os.fsencode(self.path)) > MAX_SOCKET_PATH:
            raise OSError(
                errno.ENAMETOOLONG,
                f"the socket path {self.path} is longer than {MAX_SOCKET_PATH} bytes, the "
                "limit of Unix sockets: set KIOKU_HOME to a shorter folder",
            )
        await self._remove_stale()
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(self.path), limit=READ_CHUNK
            )
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        self._inode = os.stat(self.path).st_ino
        log.info("cli_socket_listening", path=str(self.path))

    async def stop(self) -> None:
        """Close every connection and wait for its task to see the end of its stream.

        Not `cancel()` first: asyncio 3.11 reports a cancelled connection task as an ERROR
        ("Exception in callback ...connection_made"), and shutting down is no error. A
        client that does not read, so its connection cannot close, is cut after
        `STOP_WAIT`; a task still stuck after that is cancelled.
        """
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for connection in list(self._connections.values()):
            connection.writer.close()
        still_open = await self._open_after_waiting()
        if still_open:
            for connection in list(self._connections.values()):
                connection.writer.transport.abort()
            still_open = await self._open_after_waiting()
        for task in still_open:
            log.warning("cli_client_cancelled", task=task.get_name())
            task.cancel()
        if server is not None:
            await server.wait_closed()
        self._remove_own_socket()

    async def _open_after_waiting(self) -> set[asyncio.Task[None]]:
        """The connection tasks still running after waiting up to `STOP_WAIT` for them."""
        if not self._tasks:
            return set()
        _, pending = await asyncio.wait(set(self._tasks), timeout=STOP_WAIT)
        return pending

    async def send(self, message: Outbound) -> None:
        kind: Literal["note", "reply"] = "note" if message.more else "reply"
        await self._route(message.address.reply_to, kind, message.text)

    async def stream(self, delta: Delta) -> None:
        await self._route(delta.address.reply_to, "delta", delta.text)

    async def direct_chat(self, user: str) -> str:
        """None: a CLI connection lives only while `kioku chat` waits for its replies."""
        raise LookupError(
            "the CLI has no chat kioku can write to unasked; schedule it to a Telegram, "
            "Discord or Slack identity instead"
        )

    async def _route(
        self, reply_to: str | None, kind: Literal["delta", "note", "reply"], text: str
    ) -> None:
        connection = self._routes.get(reply_to) if reply_to is not None else None
        if connection is None:
            log.info("cli_reply_unrouted", reply_to=reply_to, kind=kind)
            return
        client_id = reply_to.split("-", 1)[1] if reply_to else ""
        if kind == "reply":
            self._forget_route(reply_to, connection)
        await connection.send(text_frame(kind, client_id, text))

    def _forget_route(self, key: str | None, connection: _Connection) -> None:
        if key is not None and self._routes.get(key) is connection:
            del self._routes[key]
        connection.waiting.discard(key or "")

    async def _remove_stale(self) -> None:
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(mode):
            raise SocketInUse(
                f"{self.path} exists and is not a socket: move it away so kioku can listen there"
            )
        try:
            _, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(self.path)), 2)
        except (ConnectionRefusedError, FileNotFoundError, TimeoutError):
            log.info("cli_socket_stale_removed", path=str(self.path))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            return
        writer.close()
        raise SocketInUse(f"another process is serving on {self.path}: is kioku already running?")

    def _remove_own_socket(self) -> None:
        try:
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        except FileNotFoundError:
            pass
        self._inode = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if self._server is None or task is None:  # accepted while stopping
            writer.close()
            return
        self._tasks.add(task)
        number = next(self._numbers)
        try:
            _, uid, _ = peer_credentials(writer.get_extra_info("socket"))
            name = await asyncio.to_thread(_user_name, uid)
            connection = _Connection(number, uid, name, writer)
            self._connections[number] = connection
            log.info("cli_client_connected", connection=number, uid=uid)
            await self._read_frames(reader, connection)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.info("cli_client_gone", connection=number, error=repr(exc))
        finally:
            self._tasks.discard(task)
            gone = self._connections.pop(number, None)
            if gone is not None:
                for key in list(gone.waiting):
                    self._forget_route(key, gone)
            writer.close()

    async def _read_frames(self, reader: asyncio.StreamReader, connection: _Connection) -> None:
        framer = Framer(self._max_frame)
        while True:
            data = await reader.read(READ_CHUNK)
            if not data:
                rest = framer.rest()
                if rest is not None:
                    await self._handle(rest, connection)
                return
            for line in framer.feed(data):
                await self._handle(line, connection)

    async def _handle(self, line: bytes | FrameTooLong, connection: _Connection) -> None:
        if isinstance(line, FrameTooLong):
            await connection.send(error_frame(too_long(self._max_frame)))
            return
        if not line.strip():
            return
        try:
            frame = parse_frame(line)
            if isinstance(frame, Attach):
                connection.uploads.add(frame)
                return
            files = connection.uploads.take(frame) if isinstance(frame, Message) else ()
        except BadAttach as exc:
            if connection.uploads.refuse(exc.frame_id):
                await connection.send(error_frame(str(exc), exc.frame_id))
            return
        except BadFrame as exc:
            await connection.send(error_frame(str(exc), exc.frame_id))
            return
        if isinstance(frame, Message):
            if files is not None:  # None: its files were refused, and the client told so
                await self._deliver(frame, files, connection)
        elif not await self._owner(connection, frame):
            return
        elif isinstance(frame, ClaimOwner):
            await self._answer_claim(connection, frame)
        elif frame == "status":
            await self._answer_status(connection)
        elif frame == "reload":
            await self._answer_reload(connection)
        else:
            await self._answer_schedule_changed(connection)

    async def _deliver(
        self, message: Message, files: tuple[Received, ...], connection: _Connection
    ) -> None:
        key = f"{connection.uid}-{message.id}"
        self._routes[key] = connection
        connection.waiting.add(key)
        inbound = Inbound(
            platform=self.name,
            chat=message.conversation,
            sender=f"cli:{connection.uid}",
            text=message.text,
            is_direct=True,
            sender_name=connection.name,
            addressed=True,
            message_id=key,
            attachments=tuple(attachment(item) for item in files),
            kept_by_platform=False,
        )
        try:
            await self.deliver(inbound)
        except Exception as exc:
            log.exception("cli_deliver_failed", connection=connection.number)
            self._forget_route(key, connection)
            await connection.send(error_frame(f"kioku could not take it: {exc}", message.id))

    async def _owner(self, connection: _Connection, frame: ClaimOwner | str) -> bool:
        """Whether the peer may send this control frame; if not, it is told so."""
        if connection.uid in (self._owner_uid, 0):
            return True
        kind = "claim_owner" if isinstance(frame, ClaimOwner) else frame
        await connection.send(
            error_frame(
                f"{kind} is only for the account running kioku (uid {self._owner_uid}) and root"
            )
        )
        return False

    async def _answer_claim(self, connection: _Connection, claim: ClaimOwner) -> None:
        """`kioku setup --claim-owner`: wait for the DM carrying the code, say who sent it."""
        if self._claim_owner is None:
            await connection.send(error_frame("this kioku takes no owner claims"))
            return
        try:
            waiting = self._claim_owner(claim.platform, claim.code, claim.timeout)
        except RuntimeError as exc:  # ClaimBusy: one claim per platform at a time
            await connection.send(error_frame(str(exc)))
            return
        await connection.send(claim_waiting_frame())  # now the code may be sent
        await connection.send(owner_claimed_frame(await waiting))

    async def _answer_reload(self, connection: _Connection) -> None:
        if self._reload is None:
            await connection.send(error_frame("this kioku cannot reload"))
            return
        await self._reload()
        await connection.send(ok_frame())

    async def _answer_schedule_changed(self, connection: _Connection) -> None:
        """`kioku schedule add|cancel|run` wrote state.db: the scheduler looks again."""
        if self._schedule_changed is None:
            await connection.send(error_frame("this kioku runs no scheduler"))
            return
        self._schedule_changed()
        await connection.send(ok_frame())

    async def _answer_status(self, connection: _Connection) -> None:
        try:
            status = await self._status()
        except Exception as exc:
            log.exception("cli_status_failed")
            await connection.send(error_frame(f"status failed: {exc}"))
            return
        await connection.send(status_frame(status))
