"""A voice note or audio file turned into the person's words: its format told from its
bytes, converted with ffmpeg when the transcriber does not take it, then transcribed."""

from __future__ import annotations

from agent.media.audio_format import audio_duration, audio_format
from agent.media.items import Incoming, KeptFile, Prepared
from agent.media.naming import duration_text, shown_name
from agent.media.transcode import to_wav
from agent.media.transcribers import Transcriber
from agent.media.unreadable import Unreadable
from config.settings import SttSettings

TYPE_INSTEAD = (
    "I can't listen to voice notes or audio here: please type your message instead "
    "(the owner can turn on transcription with stt.provider)."
)
NO_WORDS = "I couldn't make out words in the recording: please try again, or type it."


def audio_stand_in(item: Incoming, seconds: float | None) -> str:
    """ "[voice 0:21]" or "[audio song.mp3 3:05]"; without the length when it is unknown."""
    parts = ["voice" if item.kind == "voice" else "audio"]
    if item.kind != "voice" and (name := shown_name(item.name)):
        parts.append(name)
    if seconds is not None:
        parts.append(duration_text(seconds))
    return f"[{' '.join(parts)}]"


async def read_audio(item: Incoming, stt: SttSettings, transcriber: Transcriber | None) -> Prepared:
    """The transcript as `Prepared.transcript`, or a notice saying why there is none."""
    fmt = audio_format(item.data, item.mime, item.name)
    seconds = item.duration if item.duration is not None else audio_duration(item.data, fmt)
    stand_in = audio_stand_in(item, seconds)
    keep = KeptFile(item.kind, item.name, item.mime or f"audio/{fmt or 'unknown'}", item.data)
    if transcriber is None:
        return Prepared(stand_in, notice=TYPE_INSTEAD, keep=keep)
    try:
        data, sent = item.data, fmt
        if fmt not in stt.formats:
            data = await to_wav(
                item.data, fmt, ffmpeg=stt.ffmpeg, formats=stt.formats, seconds=stt.timeout
            )
            sent = "wav"
        words = await transcriber.transcribe(shown_name(item.name) or item.kind, data, sent)
    except Unreadable as exc:
        return Prepared(
            stand_in, notice=f"I couldn't transcribe {_what(item)}: {exc.notice}.", keep=keep
        )
    transcript = " ".join(words.split())
    if not transcript:
        return Prepared(stand_in, notice=NO_WORDS, keep=keep)
    return Prepared(stand_in, transcript=transcript, keep=keep)


def _what(item: Incoming) -> str:
    if item.kind == "voice":
        return "your voice note"
    return shown_name(item.name) or "the audio"
