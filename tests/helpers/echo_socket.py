"""A CLI socket served by an echo "gateway", for testing clients without the daemon.

In process (`EchoGateway` + `CliSocketAdapter`) or as a subprocess:

    python tests/helpers/echo_socket.py SOCKET_PATH [--silent]

prints `ready` once listening and serves until stdin closes. Each message is
answered with two deltas and the reply `echo (<conversation>): <text>`, each attached file
read and named after it as `[kind name mime N bytes sha256:<first 12>]`; a text starting with
`markdown` gets a Markdown reply. `--silent` never answers (for client timeouts).

`misbehaving(path)` is a daemon gone wrong, for the clients' own door: it answers
each request line with whatever bytes the test sets, then closes the connection.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import socketserver
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from adapters.base import Delta, Inbound, Outbound
from adapters.cli.adapter import CliSocketAdapter

STARTED = "2026-01-01T00:00:00+00:00"
ECHO_LIMIT = 64 * 1024 * 1024
MARKDOWN_REPLY = "# Title\n\n- **bold** item\n- `code` item\n"


class EchoGateway:
    """Answers every message at once; records what it received."""

    def __init__(self, path: Path, *, silent: bool = False, owner_uid: int | None = None) -> None:
        self.received: deque[Inbound] = deque(maxlen=1000)  # bounded: benches send many
        self.silent = silent
        self.adapter = CliSocketAdapter(self.handle, path, self.status, owner_uid=owner_uid)

    async def handle(self, inbound: Inbound) -> None:
        self.received.append(inbound)
        if self.silent:
            return
        asyncio.get_running_loop().create_task(self._answer(inbound))

    async def _answer(self, inbound: Inbound) -> None:
        markdown = inbound.text.startswith("markdown")
        reply = MARKDOWN_REPLY if markdown else f"echo ({inbound.chat}): {inbound.text}"
        for item in inbound.attachments:
            data = await item.fetch(ECHO_LIMIT)
            digest = hashlib.sha256(data).hexdigest()[:12]
            reply += f" [{item.kind} {item.name} {item.mime} {len(data)} bytes sha256:{digest}]"
        middle = len(reply) // 2
        for part in (reply[:middle], reply[middle:]):
            await self.adapter.stream(Delta(inbound.address, part))
        await self.adapter.send(Outbound(inbound.address, reply))

    async def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "started_at": STARTED,
            "adapters": {
                "cli": {
                    "state": "running",
                    "since": "2026-01-01T00:00:00+00:00",
                    "last_error": None,
                },
                "telegram": {
                    "state": "backoff",
                    "since": "2026-01-01T00:01:00+00:00",
                    "last_error": "InvalidToken: rejected",
                },
            },
            "open_sessions": 1,
            "in_flight": 0,
            "queued": 2,
            "conversations": [{"key": "cli:default", "session_id": 7, "queued": 2, "busy": True}],
            "catch_up": {
                "telegram": {
                    "at": "2026-01-01T00:01:00+00:00",
                    "messages": 4,
                    "answered": 3,
                    "unanswered": 1,
                    "already_had": 0,
                }
            },
            "database_bytes": 123456,
            "media": {"files": 3, "bytes": 2_500_000},
        }


@contextmanager
def echo_process(
    path: Path, *, silent: bool = False, quiet: bool = False
) -> Iterator[subprocess.Popen[str]]:
    """The echo socket in a subprocess, serving until the block ends (`quiet`: no logs)."""
    process = subprocess.Popen(
        [sys.executable, __file__, str(path), *(["--silent"] if silent else [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if quiet else None,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        assert process.stdout.readline().strip() == "ready"
        yield process
    finally:
        process.stdin.close()
        process.wait(timeout=10)


class _Misbehaving(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    answer = b""

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up before reading the whole answer is what is being tested."""


class _AnswerGarbage(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.rfile.readline()
        self.wfile.write(self.server.answer)  # type: ignore[attr-defined]


@contextmanager
def misbehaving(path: Path) -> Iterator[_Misbehaving]:
    """A socket at `path` answering every request with `server.answer` (set by the test)."""
    server = _Misbehaving(str(path), _AnswerGarbage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        path.unlink(missing_ok=True)


async def main(path: Path, silent: bool) -> None:
    gateway = EchoGateway(path, silent=silent)
    await gateway.adapter.start()
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await gateway.adapter.stop()


if __name__ == "__main__":
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    asyncio.run(main(Path(sys.argv[1]), "--silent" in sys.argv[2:]))
