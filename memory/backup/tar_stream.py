"""An archive's tar layer, read by kioku's own bounded header parser.

CPython's `tarfile` parses a pax header of any size, in time that grew with its square
before 3.11.10 (CVE-2024-6232: a 371-byte archive took 41 s), and it turns sparse
members into zeros without end. kioku must not depend on the interpreter's patch level,
so it reads the 512-byte header blocks itself: ustar and GNU headers (checksum checked),
pax extended headers of at most `MAX_EXTENSION` bytes (only `path` and `size` are used),
GNU long names of the same bound, and no more than `MAX_EXTENSIONS` of them before a
member. Sparse members, pax global headers and anything else kioku never writes are
refused with what they are; a member's data can never be read past its size. After the
end-of-archive blocks only zero padding may follow (at most `MAX_PADDING`), then the
gzip layer's own end.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.backup.errors import BackupError
from memory.backup.gzip_stream import CHUNK, GzipStream

BLOCK = 512
EMPTY = bytes(BLOCK)
# The pax header tarfile writes for a long or non-ASCII name holds that name (≤ 1 KiB,
# see manifest.MAX_NAME_BYTES) and a few numbers.
MAX_EXTENSION = 16 * 1024
MAX_EXTENSIONS = 4
# tarfile pads an archive to 10 KiB, GNU tar to its blocking factor (20 blocks by default).
MAX_PADDING = 1024 * 1024
# The largest size a header may state: an 8-byte signed integer, as SQLite's own limit.
MAX_SIZE = 2**63 - 1
FILE, FOLDER = "file", "folder"
KINDS = {
    b"0": FILE,
    b"\0": FILE,
    b"7": FILE,  # contiguous file: a regular file to every reader
    b"5": FOLDER,
    b"1": "a hard link",
    b"2": "a symbolic link",
    b"3": "a device or pipe",
    b"4": "a device or pipe",
    b"6": "a device or pipe",
}
REFUSED = {
    b"S": "a sparse file",
    b"g": "a pax global header",
    b"V": "a volume label",
    b"M": "a multi-volume continuation",
}


@dataclass(frozen=True)
class Member:
    """One member's header: its name, kind (`FILE`, `FOLDER`, or what else it is), size."""

    name: str
    kind: str
    size: int


class TarStream:
    """The members of a tar stream in order; each one's data read through `read`."""

    def __init__(self, gz: GzipStream) -> None:
        self.gz = gz
        self.left = 0  # data bytes of the current member not yet read
        self.padding = 0  # zero bytes after them, up to the next block

    def next(self) -> Member | None:
        """The next member's header, the rest of the current one skipped; None at the end."""
        while self.left:
            self.read(min(self.left, CHUNK))
        self._exact(self.padding)
        self.padding = 0
        extended: dict[str, str] = {}
        for _ in range(MAX_EXTENSIONS + 1):
            block = self._exact(BLOCK)
            if block == EMPTY:
                self._end()
                return None
            raw_name, flag, size = _header(block, self.gz)
            if flag in (b"x", b"L"):
                extended.update(self._extension(flag, size))
                continue
            name = extended.get("path") or _text(raw_name, self.gz)
            kind = KINDS.get(flag)
            if flag in REFUSED or any(key.startswith("GNU.sparse") for key in extended):
                kind = REFUSED.get(flag, "a sparse file")
                raise BackupError(f"the archive holds {name[:200]!r}, {kind}: refused")
            if kind is None:
                raise BackupError(
                    f"the archive holds {name[:200]!r}, a member of type {flag!r}, which "
                    "kioku never writes: refused"
                )
            size = _pax_size(extended.get("size"), size, self.gz)
            self.left, self.padding = size, -size % BLOCK
            return Member(name, kind, size)
        raise BackupError(
            f"the archive holds more than {MAX_EXTENSIONS} extended headers in a row: refused"
        )

    def _extension(self, flag: bytes, size: int) -> dict[str, str]:
        """A pax header's records, or a GNU long name as `path`; refused over the bound
        before a byte of it is read."""
        if size > MAX_EXTENSION:
            raise BackupError(
                f"the archive holds an extended header of {size} bytes (kioku reads at most "
                f"{MAX_EXTENSION}): it was changed or is no kioku backup"
            )
        data = self._exact(size + -size % BLOCK)[:size]
        if flag == b"x":
            return _pax_records(data, self.gz)
        return {"path": _text(data.rstrip(b"\0"), self.gz)}

    def read(self, size: int) -> bytes:
        """Up to `size` bytes of the current member's data; b"" once it is all read."""
        data = self.gz.read(min(size, self.left))
        if len(data) < min(size, self.left):
            raise self.gz.damaged("it ends inside a member")
        self.left -= len(data)
        return data

    def _exact(self, size: int) -> bytes:
        data = self.gz.read(size)
        if len(data) != size:
            raise self.gz.damaged("it ends inside a tar header")
        return data

    def _end(self) -> None:
        """After the first zero block: only zeros (the second block, padding), then the end."""
        total = 0
        while chunk := self.gz.read(BLOCK * 64):
            total += len(chunk)
            if chunk.strip(b"\0") or total > MAX_PADDING:
                raise BackupError(
                    f"{self.gz.archive} holds data after the end of its archive: refused"
                )
        self.gz.finish()


def _header(block: bytes, gz: GzipStream) -> tuple[bytes, bytes, int]:
    """A header block's name (with its ustar prefix), type flag and size, its checksum
    checked (as unsigned bytes, or signed as some old tars summed them)."""
    stored = _number(block[148:156], gz)
    unsigned = sum(block[:148]) + sum(block[156:]) + 8 * 32
    if stored != unsigned:
        high = sum(1 for byte in block[:148] + block[156:] if byte >= 128)
        if stored != unsigned - 256 * high:
            raise gz.damaged("a tar header's checksum does not match")
    name = block[0:100].split(b"\0", 1)[0]
    if block[257:263] == b"ustar\0" and block[345:500].strip(b"\0"):
        name = block[345:500].split(b"\0", 1)[0] + b"/" + name
    return name, block[156:157], _number(block[124:136], gz)


def _pax_size(digits: str | None, size: int, gz: GzipStream) -> int:
    """The size a pax `size` record gives (tarfile writes one past 8 GiB), else `size`."""
    if digits is not None:
        if not (digits.isascii() and digits.isdigit() and len(digits) <= 19):
            raise gz.damaged(f"a pax size of {digits[:40]!r}")
        size = int(digits)
    if size > MAX_SIZE:
        raise gz.damaged(f"a member's size of {size} bytes")
    return size


def _pax_records(data: bytes, gz: GzipStream) -> dict[str, str]:
    """The `LENGTH key=value\\n` records of a pax header (already bounded in size)."""
    records: dict[str, str] = {}
    at = 0
    while at < len(data):
        space = data.find(b" ", at, at + 12)
        digits = data[at:space] if space > at else b""
        if not (digits.isdigit() and len(digits) <= 6):
            raise gz.damaged("a pax record without its length")
        end = at + int(digits)
        record = data[space + 1 : end]
        if end > len(data) or not record.endswith(b"\n") or b"=" not in record:
            raise gz.damaged("a pax record of the wrong length")
        key, value = record[:-1].split(b"=", 1)
        records[_text(key, gz)] = _text(value, gz)
        at = end
    return records


def _number(field: bytes, gz: GzipStream) -> int:
    """A numeric header field: octal digits, or GNU's base-256 (high bit set)."""
    if field[:1] == b"\x80":
        return int.from_bytes(field[1:], "big")
    if field[:1] and field[0] & 0x80:
        raise gz.damaged("a negative number in a tar header")
    digits = field.split(b"\0", 1)[0].strip(b" ")
    if digits.translate(None, b"01234567"):
        raise gz.damaged("a tar header field that is no number")
    return int(digits, 8) if digits else 0


def _text(raw: bytes, gz: GzipStream) -> str:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise gz.damaged("a name in a tar header that is not UTF-8") from None
