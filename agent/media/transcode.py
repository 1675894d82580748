"""Audio the transcriber does not take (`stt.formats`) converted by ffmpeg to the one
format every speech-to-text server reads: 16 kHz mono WAV."""

from __future__ import annotations

from collections.abc import Sequence

from agent.media.programs import ProgramMissing, run_program, scratch_file
from agent.media.unreadable import Unreadable


async def to_wav(
    data: bytes, fmt: str, *, ffmpeg: str, formats: Sequence[str], seconds: float
) -> bytes:
    """`data` (in `fmt`) as 16 kHz mono WAV, or `Unreadable` naming what to install."""
    async with scratch_file(data, f".{fmt or 'audio'}") as path:
        try:
            finished = await run_program(
                [
                    ffmpeg,
                    "-nostdin",
                    "-hide_banner",
                    "-loglevel",
                    "error",
                    "-i",
                    str(path),
                    "-vn",
                    "-ac",
                    "1",
                    "-ar",
                    "16000",
                    "-f",
                    "wav",
                    "pipe:1",
                ],
                seconds,
                "converting the audio",
            )
        except ProgramMissing:
            raise Unreadable(
                f"the audio is {fmt or 'of an unknown format'}, which the transcriber does not "
                f"take (stt.formats: {', '.join(formats)}), and ffmpeg ({ffmpeg!r}, stt.ffmpeg) "
                "is not installed to convert it: the owner can install ffmpeg"
            ) from None
    if finished.returncode != 0 or not finished.stdout:
        raise Unreadable(f"the audio could not be converted: {finished.last_error_line}")
    return finished.stdout
