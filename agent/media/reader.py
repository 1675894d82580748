"""`MediaReader`: every file of one message read into what the turn uses (`Prepared`),
each on its own, so one unreadable file never keeps the others from the model."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog

from agent.media.decoding import DecodeSlots
from agent.media.describe import Describer, describer_settings
from agent.media.documents import ANTHROPIC_PDF_REQUEST, DocumentLimits, read_document
from agent.media.images import CleanImage, clean_image, image_limit
from agent.media.items import Incoming, KeptFile, Prepared
from agent.media.naming import dimensions, shown_name
from agent.media.stored import file_stand_in
from agent.media.transcribers import Transcriber, build_transcriber
from agent.media.unreadable import Unreadable
from agent.media.vision import sees_images
from agent.media.voice import read_audio
from agent.providers import Document, Image, Text
from agent.untrusted import fenced
from agent.usage import Charger
from config.settings import Settings

log = structlog.get_logger("kioku.media")

NO_VIDEO = "Videos are not read: send a photo, a voice note or a document instead"


class MediaReader:
    """Reads images, voice notes, audio and documents for `provider_name`'s model
    ("anthropic", "openai"). Holds the transcriber's and describer's clients and the
    daemon's image decode slots: `aclose` them on shutdown."""

    def __init__(self, settings: Settings, provider_name: str) -> None:
        self._settings = settings
        self._provider_name = provider_name
        self._sees = sees_images(settings.llm)
        describe = settings.media.describe_with
        self._describer = (
            Describer(describer_settings(settings.llm, settings.media))
            if describe is not None and not self._sees
            else None
        )
        self._transcriber: Transcriber | None = None
        self._transcriber_built = False
        self._decoding = DecodeSlots(settings.media.decode_slots)

    async def read(self, items: Sequence[Incoming], charged: Charger) -> list[Prepared]:
        """One `Prepared` per item, in order; a failure becomes that item's notice. PDFs
        sent whole share half of Anthropic's request limit (the rest is the conversation).
        A model call made to read them (an image described) is recorded by `charged`."""
        pdf_room = ANTHROPIC_PDF_REQUEST // 2
        prepared: list[Prepared] = []
        for item in items:
            try:
                result = await self._read_one(item, pdf_room, charged)
            except Unreadable as exc:
                result = Prepared(
                    _stand_in(item), notice=f"I couldn't read {_what(item)}: {exc.notice}."
                )
            except Exception:
                # A reader's bug must not cost the person the rest of the message.
                log.exception("media_read_failed", kind=item.kind, mime=item.mime)
                result = Prepared(
                    _stand_in(item),
                    notice=f"Something went wrong reading {_what(item)}; it was not read.",
                )
            prepared.append(result)
            pdf_room -= sum(
                (len(block.data) + 2) // 3 * 4
                for block in result.blocks
                if isinstance(block, Document)
            )
        return prepared

    async def _read_one(self, item: Incoming, pdf_room: int, charged: Charger) -> Prepared:
        if item.kind == "image":
            return await self._read_image(item, charged)
        if item.kind in ("voice", "audio"):
            return await read_audio(item, self._settings.stt, self._stt())
        if item.kind == "video":
            return Prepared(_stand_in(item), notice=f"{NO_VIDEO} ({_what(item)} was not read).")
        limits = DocumentLimits(
            chars=self._settings.media.document_chars,
            native_pdf=self._provider_name == "anthropic",
            pdf_bytes=pdf_room,
        )
        return await asyncio.to_thread(read_document, item, limits)

    async def _read_image(self, item: Incoming, charged: Charger) -> Prepared:
        image = await self._decoding.run(
            clean_image,
            item.data,
            max_side=self._settings.media.image_max_side,
            limit=image_limit(self._provider_name),
            max_pixels=self._settings.media.image_max_pixels,
        )
        name = shown_name(item.name)
        stand_in = f"[photo {dimensions(image.width, image.height)}{f': {name}' if name else ''}]"
        keep = KeptFile("image", _kept_name(item.name, image), image.media_type, image.data)
        if self._sees:
            return Prepared(
                stand_in, blocks=(Image(image.media_type, image.data, stand_in),), keep=keep
            )
        if self._describer is None:
            return Prepared(
                stand_in,
                notice=(
                    f"I can't see images with this model ({self._settings.llm.model}): the "
                    "owner can name a vision model that describes them (media.describe_with)."
                ),
                keep=keep,
            )
        try:
            description = await self._describer.describe(image, name or "photo", charged)
        except Unreadable as exc:
            return Prepared(
                stand_in, notice=f"I couldn't see {_what(item)}: {exc.notice}.", keep=keep
            )
        return Prepared(
            stand_in, blocks=(Text(fenced("image", name or "photo", description)),), keep=keep
        )

    def _stt(self) -> Transcriber | None:
        if not self._transcriber_built:
            self._transcriber = build_transcriber(self._settings.stt)
            self._transcriber_built = True
        return self._transcriber

    async def aclose(self) -> None:
        self._decoding.close()
        if self._transcriber is not None:
            await self._transcriber.aclose()
        if self._describer is not None:
            await self._describer.aclose()


def _stand_in(item: Incoming) -> str:
    return file_stand_in(item.kind, item.name)


def _what(item: Incoming) -> str:
    name = shown_name(item.name)
    if name:
        return name
    return {
        "image": "the photo",
        "voice": "your voice note",
        "audio": "the audio",
        "video": "the video",
    }.get(item.kind, "the document")


def _kept_name(name: str, image: CleanImage) -> str:
    """The kept file is the cleaned image: its name ends in the type it now has."""
    stem = name.rsplit(".", 1)[0] if "." in name else (name or "photo")
    return f"{stem}.{image.extension}"
