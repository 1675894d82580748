"""An archive's gzip layer, checked end to end: the whole compressed stream, its CRC-32
and length, and nothing after it.

`tarfile`'s streaming reader inflates raw deflate data, never checks the gzip trailer,
and stops at the tar's end, so an archive with a flipped CRC, a cut-off trailer or junk
appended read as whole. zlib in gzip mode (`wbits=31`) checks the header, the CRC and
the length itself; this reads through to the end and refuses any byte after the one
gzip member kioku writes. Output comes in bounded pieces: memory never holds more than
`CHUNK` of inflated data, however well the input compresses.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import IO

from memory.backup.errors import BackupError

CHUNK = 1024 * 1024
GZIP = 16 + zlib.MAX_WBITS


class GzipStream:
    """The inflated bytes of one gzip file, read forward."""

    def __init__(self, raw: IO[bytes], archive: Path) -> None:
        self.raw = raw
        self.archive = archive
        self.inflate = zlib.decompressobj(wbits=GZIP)
        self.buffer = bytearray()

    def read(self, size: int) -> bytes:
        """Up to `size` (≤ `CHUNK`) bytes; fewer only at the end of the data."""
        self._fill(size)
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def finish(self) -> None:
        """`BackupError` unless the gzip data ended here, whole, with nothing after it."""
        if self.buffer or self._more():
            raise BackupError(f"{self.archive} holds data after the end of its archive: refused")
        if self.inflate.unused_data or self.raw.read(1):
            raise BackupError(
                f"{self.archive} has bytes appended after its compressed data: it was changed"
            )

    def _more(self) -> bool:
        self._fill(1)
        return bool(self.buffer)

    def _fill(self, size: int) -> None:
        while len(self.buffer) < size and not self.inflate.eof:
            data = self.inflate.unconsumed_tail or self.raw.read(CHUNK)
            if not data:
                raise self.damaged("the file ends before its compressed data does")
            try:
                self.buffer += self.inflate.decompress(data, CHUNK)
            except zlib.error as exc:
                raise self.damaged(str(exc)) from None

    def damaged(self, why: str) -> BackupError:
        return BackupError(
            f"{self.archive} is truncated or damaged ({why}): it cannot be read to the end; "
            "use another backup"
        )
