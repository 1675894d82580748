"""Files `kioku chat` attaches to a message: checked here, then sent as bytes.

The daemon never gets a path (it may run as another account, and would open whatever that
account can read): the client reads the file, as the person who typed the command, and
sends its bytes in `attach` frames (`adapters/cli/protocol.py`). A file that cannot be
sent is refused here, before anything goes out, with what is wrong and what to do.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.cli.protocol import (
    CHUNK_BYTES,
    MAX_ATTACHED_BYTES,
    MAX_ATTACHMENTS,
    MAX_FILE_NAME,
)
from inputs.text import well_formed

GENERIC_MIME = "application/octet-stream"


class NotAttachable(ValueError):
    """A file that cannot go with the message; `str()` says why, for the person."""


@dataclass(frozen=True)
class LocalFile:
    path: Path
    name: str
    mime: str
    size: int


def local_file(raw: str, max_bytes: int | None = None) -> LocalFile:
    """The file at `raw` (`~` expanded) if it is a readable regular file within the caps:
    the socket's, and `max_bytes` (the daemon's `media.max_bytes`) when it is known."""
    path = Path(raw).expanduser()
    try:
        with path.open("rb") as file:
            info = os.fstat(file.fileno())
    except FileNotFoundError:
        raise NotAttachable(f"no file {raw}: check the path") from None
    except IsADirectoryError:
        raise NotAttachable(f"{raw} is a folder: attach the files in it one by one") from None
    except PermissionError:
        raise NotAttachable(f"{raw} cannot be read (permission denied)") from None
    except OSError as exc:
        raise NotAttachable(f"{raw} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise NotAttachable(f"{raw} is not a regular file: attach a file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise NotAttachable(
            f"{raw} is {_size(info.st_size)}: kioku reads files up to {_size(max_bytes)} "
            "(media.max_bytes)"
        )
    if info.st_size > MAX_ATTACHED_BYTES:
        raise NotAttachable(
            f"{raw} is {_size(info.st_size)}: a message carries at most "
            f"{_size(MAX_ATTACHED_BYTES)} of files"
        )
    name = file_name(path)
    mime = mimetypes.guess_type(name, strict=False)[0] or GENERIC_MIME
    return LocalFile(path, name, mime, info.st_size)


def check_together(files: Sequence[LocalFile]) -> None:
    """The caps on one message's files together."""
    if len(files) > MAX_ATTACHMENTS:
        raise NotAttachable(
            f"{len(files)} files: a message carries at most {MAX_ATTACHMENTS}; send the rest "
            "with another message"
        )
    total = sum(item.size for item in files)
    if total > MAX_ATTACHED_BYTES:
        raise NotAttachable(
            f"these files are {_size(total)} together: a message carries at most "
            f"{_size(MAX_ATTACHED_BYTES)}; send some with another message"
        )


def file_name(path: Path) -> str:
    """The name the daemon is told: printable, at most `MAX_FILE_NAME`, its suffix kept."""
    name = "".join(c if c.isprintable() else "_" for c in well_formed(path.name)) or "file"
    if len(name) <= MAX_FILE_NAME:
        return name
    suffix = path.suffix[:20]
    return name[: MAX_FILE_NAME - len(suffix)] + suffix


class Pieces:
    """The bytes of a file in `CHUNK_BYTES` pieces, at most its checked size. A read that
    fails or ends early just stops (the daemon then refuses the short file); `error` says
    why, for the person."""

    def __init__(self, file: LocalFile) -> None:
        self.file = file
        self.error: str | None = None

    def __iter__(self) -> Iterator[bytes]:
        left = self.file.size
        try:
            with self.file.path.open("rb") as handle:
                while left > 0:
                    piece = handle.read(min(CHUNK_BYTES, left))
                    if not piece:
                        self.error = f"{self.file.path} got shorter while it was being sent"
                        return
                    left -= len(piece)
                    yield piece
        except OSError as exc:
            self.error = f"{self.file.path} could not be read: {exc.strerror or exc}"


def described(files: Sequence[LocalFile]) -> str:
    """One line per file, for `/attach` alone."""
    return "\n".join(f"{item.name} ({_size(item.size)}, {item.mime})" for item in files)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"
