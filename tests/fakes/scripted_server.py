"""The scripted HTTP server under the fake model APIs (`anthropic_api`, `openai_api`).

A test queues one step per expected request — a reply, an error status, a hang, a
malformed body — and reads back every request received. Requests beyond the script get
a 400 naming the request number, so a missing step fails loudly instead of hanging.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import web
from multidict import CIMultiDict

MAX_REQUEST_BYTES = 32 * 1024 * 1024
"""The largest request body taken, as the real Messages API does (32 MB): a session
with its images and PDFs passes aiohttp's 1 MB default."""


@dataclass(frozen=True)
class Received:
    """One request as it arrived: `body` holds the exact bytes, `json` their decoding;
    `headers` is case-insensitive."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    """A success: `payload` answers a plain request, `events` (SSE frames) a streaming one.
    With `hang_after` the stream stops after the events and never finishes."""

    payload: dict[str, Any]
    events: Sequence[bytes]
    hang_after: bool = False


@dataclass(frozen=True)
class Failure:
    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


@dataclass(frozen=True)
class Hang:
    """Accept the request and never answer, until the client gives up or the server stops."""


Step = Reply | Failure | Hang


def sse(event: str | None, data: Any) -> bytes:
    """One server-sent event frame; `data` is JSON-encoded unless it is already a string."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


class ScriptedServer(ABC):
    """Lifecycle, script and request log shared by the fakes; use them as async context
    managers (`async with FakeAnthropic() as api:`) so the port is freed after the test."""

    route: str  # the endpoint path, set by each fake

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.client_gone = asyncio.Event()  # set when a client drops a request left hanging
        self.port = 0
        self._script: deque[Step] = deque()
        self._gate: asyncio.Event | None = None
        # Answers requests when the script is empty (e.g. an echo for daemon tests and benches).
        self.fallback: Callable[[Received], Step] | None = None
        self._stopping = asyncio.Event()
        self._runner: web.AppRunner | None = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def last(self) -> Received:
        return self.requests[-1]

    @property
    def pending(self) -> int:
        """Steps queued but not yet consumed."""
        return len(self._script)

    def enqueue(self, step: Step) -> None:
        self._script.append(step)

    def clear_script(self) -> None:
        """Drop the steps still queued (a shared fake between tests)."""
        self._script.clear()

    def hang(self) -> None:
        """The next request gets no answer at all (for timeouts and cancellation)."""
        self.enqueue(Hang())

    def hold_until(self, gate: asyncio.Event) -> None:
        """The next request is answered only once `gate` is set (to prove nobody waits on it)."""
        self._gate = gate

    def malformed(
        self, body: bytes = b"{this is not json", *, content_type: str = "application/json"
    ) -> None:
        """The next request gets status 200 with `body` as it is."""
        self.enqueue(Failure(200, body, content_type=content_type))

    async def start(self) -> Self:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_post(self.route, self._handle)
        self.add_routes(app)
        # handler_cancellation: a client that goes away cancels its handler (-> client_gone).
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    def add_routes(self, app: web.Application) -> None:
        """More endpoints of the same API, for a fake that serves them (none by default)."""
        return None

    async def close(self) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if self._gate is not None:
            gate, self._gate = self._gate, None
            await gate.wait()
        received = Received(request.method, request.path, CIMultiDict(request.headers), body)
        self.requests.append(received)
        if self._script:
            step = self._script.popleft()
        elif self.fallback is not None:
            step = self.fallback(received)
        else:
            return self._unscripted(len(self.requests))
        if isinstance(step, Failure):
            return web.Response(
                status=step.status,
                body=step.body,
                headers=dict(step.headers),
                content_type=step.content_type,
            )
        if isinstance(step, Hang):
            await self._hang()
            return web.Response(status=503)
        streaming = bool(json.loads(body).get("stream"))
        if not streaming:
            return web.json_response(step.payload)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for frame in step.events:
            await response.write(frame)
        if step.hang_after:
            await self._hang()
        await response.write_eof()
        return response

    async def _hang(self) -> None:
        try:
            await self._stopping.wait()
        except asyncio.CancelledError:
            self.client_gone.set()
            raise

    @abstractmethod
    def _unscripted(self, number: int) -> web.Response:
        """The API's own error for a request the test did not script."""
