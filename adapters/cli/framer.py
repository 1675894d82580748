"""Lines out of the CLI socket's byte stream, none longer than a frame may be: a longer
line is reported once and skipped, so a client cannot make the daemon buffer without end."""

from __future__ import annotations

from adapters.cli.protocol import MAX_FRAME


class FrameTooLong:
    """Marker yielded by `Framer` for a line longer than its limit."""


TOO_LONG = FrameTooLong()


class Framer:
    """Splits a byte stream into lines of at most `limit` bytes.

    A longer line is reported once (as `TOO_LONG`) as soon as it passes the limit,
    and its bytes are dropped up to the newline, so the buffer never grows past the
    limit and the next line is read normally.
    """

    def __init__(self, limit: int = MAX_FRAME) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._skipping = False

    def feed(self, data: bytes) -> list[bytes | FrameTooLong]:
        self._buffer += data
        out: list[bytes | FrameTooLong] = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > self.limit:
                    if not self._skipping:
                        out.append(TOO_LONG)
                        self._skipping = True
                    self._buffer.clear()
                return out
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if self._skipping:
                self._skipping = False
            elif len(line) > self.limit:
                out.append(TOO_LONG)
            else:
                out.append(line)

    def rest(self) -> bytes | None:
        """What is left at end of stream (a last line without its newline), if anything."""
        if self._skipping or not self._buffer:
            return None
        return bytes(self._buffer)
