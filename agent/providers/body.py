"""Limits on a model server's response body, checked as the bytes arrive, before the SDK
parses them.

Both SDKs split the stream into server-sent events and `json.loads` each one, with no
limit on a line, an event or its nesting: `[[[[…]]]]` a hundred thousand levels deep
raises `RecursionError` inside the SDK. So each client gets an HTTP response hook that
wraps the body: over a limit, reading it raises `InputRefused` (a `ValueError`), which
the provider reports as a malformed response like any other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

from config.limits import MAX_JSON_DEPTH, InputRefused, json_depth

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""One response, every event together: 128k output tokens streamed as OpenAI-style
chunks (~200 bytes each) take about 30 MB."""
MAX_LINE_BYTES = 8 * 1024 * 1024
"""One line of the body: a tool call sent whole in one event, arguments at their limit
(`fields.MAX_ARGUMENT_CHARS`) and JSON-escaped, fits."""


def response_hooks() -> dict[str, list[Any]]:
    """`event_hooks` for an SDK's HTTP client (both SDKs use httpx2, httpx's successor)
    that bound every response body."""
    return {"response": [_bound]}


async def _bound(response: httpx2.Response) -> None:
    # An error body is parsed whole by the SDK; a 200 is always read as events.
    response.stream = BoundedBody(response.stream, events=response.status_code < 400)


class BoundedBody(httpx2.AsyncByteStream):
    """The body as it arrives, refused once it passes a limit.

    The nesting of an event is bounded by adding up its lines' nesting (a JSON string
    cannot span lines, so brackets in one line cannot close another's); the sum starts
    again only at a blank line, where an SSE event ends. A line is checked before the
    SDK receives the end of it, so it never parses an unchecked one. A body that is not
    events is checked as one document.
    """

    def __init__(self, inner: httpx2.AsyncByteStream, *, events: bool) -> None:
        self._inner = inner
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = depth = 0
        partial = b""  # the line not yet ended (a final "\r" may still become "\r\n")
        async for chunk in self._inner:
            total += len(chunk)
            if total > MAX_RESPONSE_BYTES:
                raise InputRefused(
                    f"the model server's response passed {MAX_RESPONSE_BYTES:,} bytes; "
                    "kioku reads at most that much of one reply"
                )
            if b"\n" in chunk or b"\r" in chunk:
                lines = (partial + chunk).splitlines(keepends=True)
                partial = b"" if lines[-1].endswith(b"\n") else lines.pop()
                for line in lines:
                    depth = self._add(depth, line.rstrip(b"\r\n"))
            else:
                partial += chunk
            if len(partial) > MAX_LINE_BYTES:
                raise InputRefused(
                    f"a line of the model server's response passed {MAX_LINE_BYTES:,} bytes; "
                    "kioku reads lines of at most that length"
                )
            yield chunk
        self._add(depth, partial.rstrip(b"\r\n"))

    def _add(self, depth: int, line: bytes) -> int:
        if not line and self._events:
            return 0
        depth += json_depth(line, stop_at=MAX_JSON_DEPTH)
        if depth > MAX_JSON_DEPTH:
            raise InputRefused(
                f"the model server's response nests deeper than {MAX_JSON_DEPTH} levels; "
                f"kioku reads at most {MAX_JSON_DEPTH}"
            )
        return depth

    async def aclose(self) -> None:
        await self._inner.aclose()
