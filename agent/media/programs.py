"""Running a local program on a received file (ffmpeg, a speech-to-text command): the
file goes to a private temporary path, the program runs without a shell and is killed
at its timeout, and the path is removed whatever happens."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.media.unreadable import Unreadable


class ProgramMissing(Unreadable):
    """The program is not installed, or not runnable by this account."""


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def last_error_line(self) -> str:
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1].strip() if lines else f"exit status {self.returncode}"


@contextlib.asynccontextmanager
async def scratch_file(data: bytes, suffix: str) -> AsyncIterator[Path]:
    """`data` in a new file only this account can read (mode 0600), removed on exit."""
    path = await asyncio.to_thread(_write_private, data, suffix)
    try:
        yield path
    finally:
        await asyncio.to_thread(path.unlink, missing_ok=True)


def _write_private(data: bytes, suffix: str) -> Path:
    handle, name = tempfile.mkstemp(prefix="kioku-media-", suffix=suffix)
    try:
        os.fchmod(handle, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


async def run_program(argv: Sequence[str], seconds: float, what: str) -> Finished:
    """`argv` run to the end within `seconds`; `Unreadable` naming `what` when the
    program is missing or took too long (it is killed then)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError:
        raise ProgramMissing(f"{what}: the program {argv[0]!r} is not installed") from None
    except PermissionError:
        raise ProgramMissing(f"{what}: the program {argv[0]!r} cannot be run") from None
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), seconds)
    except TimeoutError:
        raise Unreadable(f"{what} took longer than {seconds:g} s and was stopped") from None
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return Finished(process.returncode, stdout, stderr)
