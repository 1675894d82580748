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

from inputs.limits import MAX_JSON_DEPTH, InputRefused, json_depth

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""One response, every event together: 128k output tokens streamed as OpenAI-style
chunks (~200 bytes each) take about 30 MB."""
MAX_LINE_BYTES = 8 * 1024 * 1024
"""One line of a stream, or a whole error body: a tool call sent whole in one event,
arguments at their limit (`fields.MAX_ARGUMENT_CHARS`) and JSON-escaped, fits."""


def response_hooks() -> dict[str, list[Any]]:
    """`event_hooks` for an SDK's HTTP client (both SDKs use httpx2, httpx's successor)
    that bound every response body."""
    return {"response": [_bound]}


async def _bound(response: httpx2.Response) -> None:
    # An error body is parsed whole by the SDK; a 200 is always read as events.
    response.stream = BoundedBody(response.stream, events=response.status_code < 400)


class BoundedBody(httpx2.AsyncByteStream):
    """The body as it arrives, refused once it passes a limit, before the SDK parses it.

    An event stream is checked line by line: an event's nesting is bounded by adding up
    its lines' nesting (a JSON string cannot span lines, so the SDK's parser cannot be
    deeper in one line than that line's brackets take it), starting again at each blank
    line, where an event ends; a line is checked before the SDK receives its end. An
    error body, which the SDK reads whole before parsing, is checked whole at its end.
    """

    def __init__(self, inner: httpx2.AsyncByteStream, *, events: bool) -> None:
        self._inner = inner
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        check = _EventLines() if self._events else _Document()
        async for chunk in self._inner:
            total += len(chunk)
            if total > MAX_RESPONSE_BYTES:
                raise InputRefused(
                    f"the model server's response passed {MAX_RESPONSE_BYTES:,} bytes; "
                    "kioku reads at most that much of one reply"
                )
            check.feed(chunk)
            yield chunk
        check.end()

    async def aclose(self) -> None:
        await self._inner.aclose()


class _EventLines:
    def __init__(self) -> None:
        self.depth = 0
        self.partial = b""  # the line not yet ended (a final "\r" may still become "\r\n")

    def feed(self, chunk: bytes) -> None:
        if b"\n" not in chunk and b"\r" not in chunk:
            self.partial += chunk
        else:
            lines = (self.partial + chunk).splitlines(keepends=True)
            self.partial = b"" if lines[-1].endswith(b"\n") else lines.pop()
            for line in lines:
                self._add(line.rstrip(b"\r\n"))
        if len(self.partial) > MAX_LINE_BYTES:
            raise InputRefused(
                f"a line of the model server's response passed {MAX_LINE_BYTES:,} bytes; "
                "kioku reads lines of at most that length"
            )

    def end(self) -> None:
        self._add(self.partial.rstrip(b"\r\n"))

    def _add(self, line: bytes) -> None:
        if not line:
            self.depth = 0
            return
        # Counting openers (in C) bounds the line's nesting; the exact scan only near the limit.
        openers = line.count(b"[") + line.count(b"{")
        if self.depth + openers > MAX_JSON_DEPTH:
            openers = json_depth(line, stop_at=MAX_JSON_DEPTH)
        self.depth += openers
        if self.depth > MAX_JSON_DEPTH:
            raise _too_deep()


class _Document:
    def __init__(self) -> None:
        self.body = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.body += chunk
        if len(self.body) > MAX_LINE_BYTES:
            raise InputRefused(
                f"the model server's error body passed {MAX_LINE_BYTES:,} bytes; "
                "kioku reads at most that much of one"
            )

    def end(self) -> None:
        if json_depth(bytes(self.body), stop_at=MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            raise _too_deep()


def _too_deep() -> InputRefused:
    return InputRefused(
        f"the model server's response nests deeper than {MAX_JSON_DEPTH} levels; "
        f"kioku reads at most {MAX_JSON_DEPTH}"
    )
