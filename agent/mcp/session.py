"""A session with one MCP server through the SDK, and waiting on its answers safely.

A message from the server that the SDK cannot read (not JSON, nested past its parser's
limit of about 200 levels, a result of the wrong shape) is dropped by the SDK, so the
answer it carried never comes. The SDK hands the failure to the session's message
handler, where a `Watch` turns it into a wake-up: whoever waits on an answer from that
server (starting, listing, a call) fails at once, saying so, instead of waiting for a
timeout.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeVar

import anyio
import structlog
from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage

from agent.untrusted import shorten
from config.settings import McpServerSettings

log = structlog.get_logger("kioku.mcp")

CONNECT_TIMEOUT = 30.0
"""Starting a server, and each listing of its tools."""
CLIENT_INFO = types.Implementation(name="kioku", version="0.1.0")
SDK_PARSE_FAILURES = (
    "Failed to parse JSONRPC message",
    "Error parsing SSE message",
    "Error parsing JSON response",
)

MessageHandler = Callable[[Any], Awaitable[None]]
T = TypeVar("T")


class _QuietParseFailures(logging.Filter):
    """The SDK logs a traceback at ERROR for each message it cannot parse; kioku reports
    the same failure once, as the warning `mcp_transport_error` naming the server."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(SDK_PARSE_FAILURES)


for _transport in ("mcp.client.stdio", "mcp.client.streamable_http"):
    logging.getLogger(_transport).addFilter(_QuietParseFailures())


class Unreadable(Exception):
    """The server sent a message the SDK could not read while kioku waited on an answer."""


class Interrupted(Exception):
    """`race` lost to `event`."""

    def __init__(self, event: asyncio.Event) -> None:
        self.event = event


async def race(work: Awaitable[T], *stops: asyncio.Event) -> T:
    """`work`'s result, or `Interrupted` when one of `stops` is set first (then `work` is
    cancelled)."""
    task = asyncio.ensure_future(work)
    watches = {asyncio.ensure_future(stop.wait()): stop for stop in stops}
    try:
        done, _ = await asyncio.wait({task, *watches}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future in (task, *watches):
            future.cancel()
        await asyncio.gather(task, *watches, return_exceptions=True)
    if task in done:
        return task.result()
    raise Interrupted(watches[done.pop()])


class Watch:
    """The messages of one server the SDK could not read: each one sets `unreadable` (a
    fresh event follows it, for the next waiters) and is logged once."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.unreadable = asyncio.Event()
        self.error = ""

    def saw(self, failure: Exception) -> None:
        self.error = describe(failure)
        unreadable, self.unreadable = self.unreadable, asyncio.Event()
        unreadable.set()
        log.warning("mcp_transport_error", server=self.server, error=self.error)

    async def answer(self, work: Awaitable[T], what: str) -> T:
        """`work` within `CONNECT_TIMEOUT`, failing with `Unreadable` (naming `what`) if a
        message the SDK cannot read comes first."""
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                return await race(work, self.unreadable)
        except Interrupted:
            raise Unreadable(f"{what} could not be read: {self.error}") from None


@asynccontextmanager
async def connect(
    settings: McpServerSettings, watch: Watch, on_message: MessageHandler | None = None
) -> AsyncIterator[tuple[ClientSession, asyncio.Event]]:
    """An initialized session with the server, and an event set when its transport closes.
    Messages the SDK could not read go to `watch`, the others to `on_message`."""
    closed = asyncio.Event()

    async def handle(message: Any) -> None:
        if isinstance(message, Exception):
            watch.saw(message)
        elif on_message is not None:
            await on_message(message)

    async with AsyncExitStack() as stack:
        if settings.command is not None:
            params = StdioServerParameters(
                command=settings.command,
                args=settings.args,
                env=settings.env or None,
                encoding_error_handler="replace",  # invalid UTF-8 is a bad message, not a crash
            )
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            http = await stack.enter_async_context(
                create_mcp_http_client(headers=settings.headers or None)
            )
            read, write, _ = await stack.enter_async_context(
                streamable_http_client(str(settings.url), http_client=http)
            )
        sink, source = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)
        group.start_soon(_forward, read, sink, closed)
        session = await stack.enter_async_context(
            ClientSession(source, write, message_handler=handle, client_info=CLIENT_INFO)
        )
        await watch.answer(session.initialize(), "its answer to initialize")
        yield session, closed


async def _forward(read: Any, sink: Any, closed: asyncio.Event) -> None:
    """Pass the transport's messages to the session; its end is how a dead server shows."""
    try:
        async with sink:
            async for item in read:
                await sink.send(item)
    finally:
        closed.set()


def describe(exc: BaseException) -> str:
    """One short line for an error, unwrapping the task groups' exception groups (a
    server's message may be megabytes long)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, McpError):
        return shorten(str(exc.error.message))
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return shorten(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
