"""A message's files, from the platform to the turn: downloaded within the caps, read
by the agent's media reader, and what the person is told about them.

The gateway runs this in the conversation's line, so a slow download or transcription
holds up only that conversation, and never the platform's event loop. Nothing here
fails the message: a file that cannot be had or read is named in a notice, and the
text (the caption) is answered all the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import structlog

from adapters.base import Attachment, FetchFailed, Inbound, TooLarge
from agent.media.items import Incoming, Prepared
from agent.media.reader import MediaReader
from agent.prompt import TurnContext
from agent.usage import Charger
from config.settings import MediaSettings, SttSettings

log = structlog.get_logger("kioku.gateway")

ECHO_CHARS = 280
"""How much of a transcript is shown back: enough to see it was heard right."""


@dataclass(frozen=True)
class Intake:
    """What the turn gets from a message with files: `text` is the caption and the
    voice notes' transcripts (the person's own words), `media` the files read;
    `notices` and `echo` are told to the person before the answer."""

    text: str
    media: tuple[Prepared, ...]
    notices: tuple[str, ...]
    echo: str | None

    @property
    def has_content(self) -> bool:
        """Whether there is anything for the model to answer: a message with files none
        of which could be read, and no caption, has nothing."""
        if not self.media and not self.notices:
            return True  # a text message is answered whatever it says
        return bool(self.text.strip()) or any(item.blocks for item in self.media)


async def take_in(
    inbound: Inbound,
    reader: MediaReader,
    media: MediaSettings,
    stt: SttSettings,
    charged: Charger,
) -> Intake:
    """Download and read `inbound`'s files; the caps and each failure become notices. A
    model call made to read them is recorded by `charged`."""
    notices: list[str] = []
    wanted = inbound.attachments[: media.max_files]
    skipped = inbound.attachments[media.max_files :]
    if skipped:
        names = ", ".join(item.name for item in skipped)
        notices.append(
            f"I read only the first {media.max_files} files of a message "
            f"(media.max_files), so not {names}."
        )
    downloads = await asyncio.gather(*(_download(item, media.max_bytes) for item in wanted))
    incoming = [item for item in downloads if isinstance(item, Incoming)]
    notices[:0] = [item for item in downloads if isinstance(item, str)]
    prepared = tuple(await reader.read(incoming, charged)) if incoming else ()
    notices.extend(item.notice for item in prepared if item.notice)
    transcripts = [item.transcript for item in prepared if item.transcript]
    text = "\n\n".join(part for part in (inbound.text.strip(), *transcripts) if part)
    return Intake(text, prepared, tuple(notices), _echo(transcripts) if stt.echo else None)


async def _download(attachment: Attachment, limit: int) -> Incoming | str:
    """The file's bytes as `Incoming`, or what to tell the person instead."""
    try:
        # The adapter refuses by the declared size before downloading; a photo may come
        # in a smaller size that fits, so the declared size alone does not decide.
        data = await attachment.fetch(limit)
    except TooLarge:
        declared = attachment.size if attachment.size and attachment.size > limit else None
        return _too_large(attachment, declared, limit)
    except FetchFailed as exc:
        log.warning("attachment_fetch_failed", kind=attachment.kind, error=str(exc))
        return f"I could not download {attachment.name}: {exc}"
    except Exception:
        log.exception("attachment_fetch_crashed", kind=attachment.kind)
        return f"I could not download {attachment.name}; the details are in kioku's log."
    if len(data) > limit:  # an adapter's bound is checked again here, once for all
        return _too_large(attachment, len(data), limit)
    return Incoming(attachment.kind, attachment.name, attachment.mime, data, attachment.duration)


def _too_large(attachment: Attachment, size: int | None, limit: int) -> str:
    cap = f"{_megabytes(limit)} (media.max_bytes)"
    if size is None:
        return f"I did not read {attachment.name}: it is larger than the {cap} I read."
    return f"I did not read {attachment.name}: it is {_megabytes(size)}, and I read at most {cap}."


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size:,} bytes"


def _echo(transcripts: Sequence[str]) -> str | None:
    if not transcripts:
        return None
    heard = " ".join(" ".join(transcripts).split())
    if len(heard) > ECHO_CHARS:
        heard = heard[: ECHO_CHARS - 1].rstrip() + "…"
    return f"Heard: “{heard}”"


def turn_context(inbound: Inbound, when: datetime) -> TurnContext:
    """What the model is told of the message it answers: when, where, from whom."""
    return TurnContext(
        when=when.astimezone(),
        platform=inbound.platform,
        speaker_name=inbound.sender_name,
        is_group=not inbound.is_direct,
        reply_to=inbound.reply_to_text,
    )
