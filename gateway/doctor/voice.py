"""`kioku doctor` for voice notes: whether they are transcribed, and whether ffmpeg is there to
convert what the transcriber does not take."""

from __future__ import annotations

import shutil

from config.settings import Settings
from gateway.doctor.finding import Finding


def check_voice(settings: Settings) -> list[Finding]:
    """Whether voice notes are transcribed (and, for a command, whether its program is
    there), and whether ffmpeg is there to convert what the transcriber does not take."""
    stt = settings.stt
    findings = []
    if stt.provider == "off":
        findings.append(
            Finding("note", "voice", "transcription off (stt.provider): people are asked to type")
        )
    elif stt.provider == "openai" and stt.api_key is None and _hosted(stt.base_url):
        findings.append(
            Finding(
                "problem",
                "voice",
                f"transcription at {stt.base_url} without stt.api_key: it will be refused",
                "set stt.api_key (KIOKU_STT__API_KEY)",
            )
        )
    elif stt.provider == "openai":
        findings.append(Finding("ok", "voice", f"transcribed by {stt.model} at {stt.base_url}"))
    elif not stt.command:
        findings.append(
            Finding(
                "problem",
                "voice",
                "stt.provider is command but stt.command is empty",
                'set stt.command, e.g. ["whisper-cli", "-nt", "-f", "{file}"]',
            )
        )
    elif shutil.which(stt.command[0]) is None:
        findings.append(
            Finding(
                "problem",
                "voice",
                f"stt.command's program {stt.command[0]!r} is not found",
                "install it, or give its full path in stt.command",
            )
        )
    else:
        findings.append(Finding("ok", "voice", f"transcribed by the command {stt.command[0]}"))
    findings.append(_check_ffmpeg(settings))
    return findings


def _check_ffmpeg(settings: Settings) -> Finding:
    stt = settings.stt
    found = shutil.which(stt.ffmpeg)
    if found is not None:
        return Finding("ok", "ffmpeg", f"present ({found})")
    return Finding(
        "note",
        "ffmpeg",
        f"{stt.ffmpeg!r} (stt.ffmpeg) not found: audio outside stt.formats "
        f"({', '.join(stt.formats)}) cannot be transcribed",
        "install ffmpeg (apt install ffmpeg), or set stt.ffmpeg to its path",
    )


def _hosted(url: str) -> bool:
    """A public transcription service (which wants a key), not a server of one's own."""
    return any(host in url for host in ("api.openai.com", "api.groq.com"))
