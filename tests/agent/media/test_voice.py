"""Voice notes and audio to the person's words: through an OpenAI-compatible endpoint
(the real `openai` SDK against the fake), a local command, or not at all; converted with
ffmpeg when the transcriber does not take the format."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.media.audio_format import audio_duration, audio_format
from agent.media.items import Incoming, Prepared
from agent.media.transcribers import build_transcriber
from agent.media.voice import NO_WORDS, TYPE_INSTEAD, read_audio
from config.settings import SttSettings
from tests.fakes.openai_api import FakeOpenAI
from tests.helpers.media_files import ogg_opus_tone, wav_tone
from tests.helpers.paths import ROOT

STT_COMMAND = [sys.executable, str(ROOT / "tests" / "helpers" / "stt_command.py")]


@pytest.fixture
def ffmpeg() -> str:
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    return imageio_ffmpeg.get_ffmpeg_exe()


@pytest.fixture
async def api() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


def voice(data: bytes, duration: float | None = None) -> Incoming:
    return Incoming("voice", "", "audio/ogg", data, duration=duration)


async def transcribed(item: Incoming, stt: SttSettings) -> Prepared:
    transcriber = build_transcriber(stt)
    try:
        return await read_audio(item, stt, transcriber)
    finally:
        if transcriber is not None:
            await transcriber.aclose()


async def test_openai_endpoint_gets_the_voice_note_and_its_transcript_is_the_text(
    api: FakeOpenAI, ffmpeg: str
) -> None:
    note = ogg_opus_tone(ffmpeg, 2.0)
    api.transcribe("  Buy oat milk\n on the way home ")
    stt = SttSettings(
        provider="openai",
        base_url=api.base_url,
        model="whisper-large-v3",
        language="en",
        api_key="sk-stt",
    )

    prepared = await transcribed(voice(note, duration=21), stt)

    assert prepared.transcript == "Buy oat milk on the way home"
    assert prepared.stand_in == "[voice 0:21]"
    assert prepared.notice is None
    (sent,) = api.transcriptions
    assert sent.data == note  # ogg is in stt.formats: no conversion
    assert sent.filename.endswith(".ogg")
    assert (sent.model, sent.language, sent.authorization) == (
        "whisper-large-v3",
        "en",
        "Bearer sk-stt",
    )
    assert prepared.keep is not None and prepared.keep.data == note


async def test_a_refusing_endpoint_is_a_notice_with_its_message(api: FakeOpenAI) -> None:
    api.fail_transcription(400, "audio file is too short")
    stt = SttSettings(provider="openai", base_url=api.base_url)

    prepared = await transcribed(voice(wav_tone()), stt)

    assert prepared.transcript is None
    assert prepared.notice is not None
    assert "your voice note" in prepared.notice and "audio file is too short" in prepared.notice


async def test_a_server_that_does_not_answer_within_stt_timeout_is_a_notice(
    api: FakeOpenAI,
) -> None:
    api.hang_transcription()
    stt = SttSettings(provider="openai", base_url=api.base_url, timeout=0.5)

    prepared = await transcribed(voice(wav_tone()), stt)

    assert prepared.notice is not None and "took longer than 0.5 s" in prepared.notice


async def test_an_empty_transcript_says_no_words_were_made_out(api: FakeOpenAI) -> None:
    api.transcribe("   ")
    prepared = await transcribed(
        voice(wav_tone()), SttSettings(provider="openai", base_url=api.base_url)
    )

    assert prepared.notice == NO_WORDS and prepared.transcript is None


async def test_a_format_the_endpoint_does_not_take_is_converted_to_16k_mono_wav(
    api: FakeOpenAI, ffmpeg: str
) -> None:
    api.transcribe("hello")
    stt = SttSettings(provider="openai", base_url=api.base_url, formats=["wav"], ffmpeg=ffmpeg)

    prepared = await transcribed(voice(ogg_opus_tone(ffmpeg, 1.0)), stt)

    assert prepared.transcript == "hello"
    (sent,) = api.transcriptions
    assert sent.filename.endswith(".wav")
    assert sent.data[:4] == b"RIFF" and sent.data[8:12] == b"WAVE"
    channels = int.from_bytes(sent.data[22:24], "little")
    rate = int.from_bytes(sent.data[24:28], "little")
    assert (channels, rate) == (1, 16_000)


async def test_without_ffmpeg_the_notice_names_stt_formats_and_ffmpeg(
    tmp_path: Path, ffmpeg: str
) -> None:
    stt = SttSettings(
        provider="command",
        command=[*STT_COMMAND, "say", "x"],
        formats=["wav"],
        ffmpeg=str(tmp_path / "no-ffmpeg-here"),
    )

    prepared = await transcribed(voice(ogg_opus_tone(ffmpeg, 0.5)), stt)

    assert prepared.notice is not None
    assert "stt.formats: wav" in prepared.notice and "ffmpeg" in prepared.notice
    assert "is not installed" in prepared.notice


async def test_command_prints_the_transcript() -> None:
    stt = SttSettings(provider="command", command=[*STT_COMMAND, "say", "call the plumber"])

    prepared = await transcribed(voice(wav_tone()), stt)

    assert prepared.transcript == "call the plumber"


async def test_command_gets_a_private_file_in_place_of_the_placeholder_removed_after() -> None:
    stt = SttSettings(provider="command", command=[*STT_COMMAND, "report", "{file}"])
    audio = wav_tone()

    prepared = await transcribed(Incoming("audio", "memo.wav", "audio/wav", audio), stt)

    assert prepared.transcript is not None
    report = json.loads(prepared.transcript)
    assert report["mode"] == 0o600 and report["size"] == len(audio) and report["suffix"] == ".wav"
    assert not await asyncio.to_thread(os.path.exists, report["path"])
    assert prepared.stand_in == "[audio memo.wav 0:02]"


async def test_a_failing_command_is_a_notice_with_its_last_stderr_line() -> None:
    stt = SttSettings(provider="command", command=[*STT_COMMAND, "fail"])

    prepared = await transcribed(voice(wav_tone()), stt)

    assert prepared.notice is not None
    assert "model file not found: ggml-base.bin" in prepared.notice
    assert "loading model" not in prepared.notice


async def test_a_command_past_stt_timeout_is_killed_and_told() -> None:
    stt = SttSettings(provider="command", command=[*STT_COMMAND, "sleep"], timeout=0.5)

    prepared = await transcribed(voice(wav_tone()), stt)

    assert (
        prepared.notice is not None and "took longer than 0.5 s and was stopped" in prepared.notice
    )


async def test_a_missing_command_program_is_named() -> None:
    stt = SttSettings(provider="command", command=["/nonexistent/whisper-cli"])

    prepared = await transcribed(voice(wav_tone()), stt)

    assert (
        prepared.notice is not None
        and "'/nonexistent/whisper-cli' is not installed" in prepared.notice
    )


async def test_off_tells_the_person_to_type_instead() -> None:
    prepared = await transcribed(voice(wav_tone(), duration=3), SttSettings(provider="off"))

    assert prepared.notice == TYPE_INSTEAD
    assert prepared.transcript is None
    assert prepared.stand_in == "[voice 0:03]"


async def test_without_a_duration_from_the_platform_the_ogg_tells_it(ffmpeg: str) -> None:
    prepared = await transcribed(voice(ogg_opus_tone(ffmpeg, 2.0)), SttSettings(provider="off"))

    assert prepared.stand_in == "[voice 0:02]"


def test_durations_come_from_the_ogg_granule_position_and_the_wav_header(ffmpeg: str) -> None:
    note = ogg_opus_tone(ffmpeg, 21.0)

    assert audio_format(note, "", "") == "ogg"
    assert audio_duration(note, "ogg") == pytest.approx(21.0, abs=0.05)
    assert audio_duration(wav_tone(1.5), "wav") == pytest.approx(1.5)
    assert audio_duration(b"ID3...", "mp3") is None


@pytest.mark.parametrize(
    ("head", "mime", "name", "fmt"),
    [
        (b"fLaC\x00", "", "", "flac"),
        (b"ID3\x04", "", "", "mp3"),
        (b"\x00\x00\x00\x20ftypM4A ", "", "", "m4a"),
        (b"\x1a\x45\xdf\xa3", "", "", "webm"),
        (b"????", "audio/mpeg", "", "mp3"),
        (b"????", "", "song.aiff", "aiff"),
    ],
)
def test_the_format_is_told_by_magic_then_mime_then_name(
    head: bytes, mime: str, name: str, fmt: str
) -> None:
    assert audio_format(head, mime, name) == fmt
