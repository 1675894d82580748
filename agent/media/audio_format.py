"""What kind of audio a file holds (from its first bytes, else its type and name) and,
when the platform did not say, how long it lasts (an OGG's last granule position, a WAV
header): both read without decoding anything."""

from __future__ import annotations

import struct
from pathlib import PurePath

MIME_FORMATS = {
    "audio/ogg": "ogg",
    "audio/opus": "ogg",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/flac": "flac",
    "audio/x-flac": "flac",
    "audio/mp4": "m4a",
    "audio/x-m4a": "m4a",
    "audio/aac": "aac",
    "audio/webm": "webm",
    "video/webm": "webm",
    "audio/amr": "amr",
}
OPUS_RATE = 48_000
"""An Opus stream's granule positions count 48 kHz samples whatever the input rate."""


def audio_format(data: bytes, mime: str, name: str) -> str:
    """ "ogg", "wav", "mp3", "flac", "m4a", "webm", ...; "" when nothing tells."""
    head = data[:16]
    if head.startswith(b"OggS"):
        return "ogg"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith(b"fLaC"):
        return "flac"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "mp3"
    if head[4:8] == b"ftyp":
        return "m4a"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "webm"
    if head.startswith(b"#!AMR"):
        return "amr"
    known = MIME_FORMATS.get(mime.split(";")[0].strip().lower())
    return known or PurePath(name).suffix.lower().lstrip(".")


def audio_duration(data: bytes, fmt: str) -> float | None:
    """Seconds of audio, for OGG (Opus or Vorbis) and WAV; None when it cannot be told."""
    if fmt == "ogg":
        return _ogg_duration(data)
    if fmt == "wav":
        return _wav_duration(data)
    return None


def _ogg_duration(data: bytes) -> float | None:
    rate, skipped = _ogg_rate(data)
    last = data.rfind(b"OggS")
    if rate is None or last < 0 or len(data) < last + 14:
        return None
    (granule,) = struct.unpack_from("<q", data, last + 6)
    return (granule - skipped) / rate if granule > skipped else None


def _ogg_rate(data: bytes) -> tuple[int | None, int]:
    """The sample rate the granule positions count (48 kHz for Opus, the header's for
    Vorbis) and the samples they count before the sound starts (Opus's pre-skip)."""
    first = data[:512]
    at = first.find(b"OpusHead")
    if at >= 0 and len(first) >= at + 12:
        (pre_skip,) = struct.unpack_from("<H", first, at + 10)
        return OPUS_RATE, pre_skip
    at = first.find(b"\x01vorbis")
    if at >= 0 and len(first) >= at + 16:
        (rate,) = struct.unpack_from("<I", first, at + 12)
        return rate or None, 0
    return None, 0


def _wav_duration(data: bytes) -> float | None:
    at = 12
    byte_rate = 0
    while at + 8 <= len(data):
        chunk, size = data[at : at + 4], struct.unpack_from("<I", data, at + 4)[0]
        if chunk == b"fmt " and at + 16 <= len(data):
            byte_rate = struct.unpack_from("<I", data, at + 16)[0]
        elif chunk == b"data":
            available = min(size, len(data) - at - 8)
            return available / byte_rate if byte_rate else None
        at += 8 + size + (size & 1)
    return None
