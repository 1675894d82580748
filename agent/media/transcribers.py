"""Speech to text (`stt.provider`): an OpenAI-compatible `/v1/audio/transcriptions`
endpoint (OpenAI, Groq, a local faster-whisper or whisper.cpp server) through the
`openai` SDK, or a local command that prints the transcript."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from agent.media.programs import run_program, scratch_file
from agent.media.unreadable import Unreadable
from config.settings import SttSettings

if TYPE_CHECKING:
    import openai


class Transcriber(Protocol):
    async def transcribe(self, name: str, data: bytes, fmt: str) -> str:
        """What was said in `data` (audio in `fmt`); `Unreadable` when it could not be told."""
        ...

    async def aclose(self) -> None: ...


class OpenAITranscriber:
    """One client for the daemon's life; every call is bounded by `stt.timeout`."""

    def __init__(self, stt: SttSettings) -> None:
        import openai

        from agent.providers.openai_compat import PLACEHOLDER_KEY

        self._stt = stt
        key = stt.api_key.get_secret_value() if stt.api_key else None
        self._client: openai.AsyncOpenAI = openai.AsyncOpenAI(
            api_key=key or PLACEHOLDER_KEY,
            base_url=stt.base_url,
            timeout=stt.timeout,
            max_retries=1,
        )

    async def transcribe(self, name: str, data: bytes, fmt: str) -> str:
        import openai

        language = self._stt.language or openai.omit
        upload = f"{name}.{fmt}" if fmt and not name.endswith(f".{fmt}") else name
        try:
            async with asyncio.timeout(self._stt.timeout):  # retries included
                result = await self._client.audio.transcriptions.create(
                    file=(upload, data), model=self._stt.model, language=language
                )
        except (openai.APITimeoutError, TimeoutError):
            raise Unreadable(
                f"the transcription server took longer than {self._stt.timeout:g} s"
            ) from None
        except openai.APIStatusError as exc:
            raise Unreadable(
                f"the transcription server refused the audio ({exc.status_code}: {_message(exc)})"
            ) from None
        except openai.APIConnectionError:
            raise Unreadable(
                f"the transcription server ({self._stt.base_url}) could not be reached"
            ) from None
        return result.text

    async def aclose(self) -> None:
        await self._client.close()


class CommandTranscriber:
    """`stt.command` run on a private copy of the audio: "{file}" in an argument is its
    path (else the path is appended); stdout is the transcript."""

    def __init__(self, stt: SttSettings) -> None:
        self._stt = stt

    async def transcribe(self, name: str, data: bytes, fmt: str) -> str:
        if not self._stt.command:
            raise Unreadable(
                "stt.provider is command but stt.command names no program: the owner can set it"
            )
        async with scratch_file(data, f".{fmt or 'audio'}") as path:
            argv = [part.replace("{file}", str(path)) for part in self._stt.command]
            if not any("{file}" in part for part in self._stt.command):
                argv.append(str(path))
            finished = await run_program(argv, self._stt.timeout, "the transcription command")
        if finished.returncode != 0:
            raise Unreadable(f"the transcription command failed: {finished.last_error_line}")
        return finished.stdout.decode("utf-8", "replace")

    async def aclose(self) -> None:
        return None


def build_transcriber(stt: SttSettings) -> Transcriber | None:
    """The configured transcriber; None when `stt.provider` is off."""
    if stt.provider == "openai":
        return OpenAITranscriber(stt)
    if stt.provider == "command":
        return CommandTranscriber(stt)
    return None


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
    return exc.message[:300]
