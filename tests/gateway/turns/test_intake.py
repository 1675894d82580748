"""A message's files through the gateway: downloaded within the caps, read, answered,
and the person told plainly what was not read and why — the caption answered all the same."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image as PILImage

from adapters.base import Attachment, FetchFailed, Inbound
from memory.store import deliveries
from tests.fakes.openai_api import FakeOpenAI
from tests.helpers.attachments import attached
from tests.helpers.gateway_rig import GatewayRig, gateway_rig
from tests.helpers.media_files import jpeg_with_gps, wav_tone

AIKO = "telegram:1"


def broken(name: str) -> Attachment:
    async def fetch(limit: int) -> bytes:
        raise FetchFailed("the platform answered 502")

    return Attachment("document", name, "application/pdf", 1000, fetch)


@pytest.fixture
async def transcriber() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def rig(
    home: Path, monkeypatch: pytest.MonkeyPatch, transcriber: FakeOpenAI
) -> AsyncIterator[GatewayRig]:
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    monkeypatch.setenv("KIOKU_MEDIA__MAX_FILES", "2")
    monkeypatch.setenv("KIOKU_MEDIA__MAX_BYTES", "2000000")
    monkeypatch.setenv("KIOKU_STT__PROVIDER", "openai")
    monkeypatch.setenv("KIOKU_STT__BASE_URL", transcriber.base_url)
    monkeypatch.setenv("KIOKU_STT__API_KEY", "sk-stt")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        yield rig


def photo_message(rig: GatewayRig, text: str, message_id: str, *files: Attachment) -> Inbound:
    return rig.dm(AIKO, text, message_id, attachments=files)


async def stored_texts(rig: GatewayRig) -> list[str]:
    entry = rig.gateway.sessions.get("dm:aiko:telegram:1")
    assert entry is not None
    return [m.content for m in await rig.store.messages(entry.session.id) if m.role == "user"]


async def test_a_photo_reaches_the_model_downscaled_and_without_its_location(
    rig: GatewayRig,
) -> None:
    photo = attached("image", "receipt.jpg", jpeg_with_gps(3000, 2000), mime="image/jpeg")
    reply = await rig.ask(photo_message(rig, "what is the total?", "m1", photo))
    assert reply.endswith("what is the total?")
    assert rig.api is not None
    content = rig.api.last.json["messages"][-1]["content"]
    images = [block for block in content if block["type"] == "image"]
    assert len(images) == 1
    sent = PILImage.open(io.BytesIO(base64.b64decode(images[0]["source"]["data"])))
    assert max(sent.size) <= 1568
    assert not sent.getexif() and "exif" not in sent.info
    [text] = await stored_texts(rig)
    assert text.startswith("[photo ") and "receipt.jpg]" in text and "what is the total?" in text


async def test_over_the_caps_and_failed_downloads_are_named_and_the_caption_answered(
    rig: GatewayRig,
) -> None:
    huge = attached("document", "scan.tiff", b"x" * 10, size=30_000_000)
    message = photo_message(rig, "here you go", "m1", huge, broken("lease.pdf"), huge)
    await rig.gateway.handle(message)
    notice = await rig.telegram.next_text()
    assert "I read only the first 2 files of a message (media.max_files)" in notice
    assert "scan.tiff: it is 30.0 MB, and I read at most 2.0 MB (media.max_bytes)" in notice
    assert "I could not download lease.pdf: the platform answered 502" in notice
    assert (await rig.telegram.next_text()).endswith("here you go")


async def test_a_file_that_grows_past_the_cap_while_downloading_is_refused(
    rig: GatewayRig,
) -> None:
    liar = attached("document", "notes.txt", b"a" * 2_500_000, size=10)
    await rig.gateway.handle(photo_message(rig, "read this", "m1", liar))
    assert "I did not read notes.txt: it is larger than the 2.0 MB" in (
        await rig.telegram.next_text()
    )
    assert (await rig.telegram.next_text()).endswith("read this")


async def test_a_video_alone_is_told_not_read_and_nothing_is_stored(rig: GatewayRig) -> None:
    video = attached("video", "clip.mp4", b"\x00\x00\x00\x18ftypmp42", mime="video/mp4")
    await rig.gateway.handle(photo_message(rig, "", "m1", video))
    assert "Videos are not read" in await rig.telegram.next_text()
    assert rig.gateway.sessions.get("dm:aiko:telegram:1") is None
    assert await deliveries.known(rig.store, "telegram", "1", "m1")
    assert rig.api is not None and not rig.api.requests


async def test_a_voice_note_is_transcribed_echoed_stored_and_answered(
    rig: GatewayRig, transcriber: FakeOpenAI
) -> None:
    transcriber.transcribe("remind me to buy oat milk")
    voice = attached("voice", "voice.wav", wav_tone(1.0), mime="audio/wav", duration=21)
    await rig.gateway.handle(photo_message(rig, "", "m1", voice))
    assert await rig.telegram.next_text() == "Heard: “remind me to buy oat milk”"
    assert (await rig.telegram.next_text()).endswith("remind me to buy oat milk")
    assert transcriber.transcriptions[0].authorization == "Bearer sk-stt"
    [text] = await stored_texts(rig)
    assert text == "[voice 0:21, transcribed]\nremind me to buy oat milk"


async def test_without_transcription_a_voice_note_asks_to_type(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_STT__PROVIDER", "off")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        voice = attached("voice", "voice.ogg", b"OggS" + bytes(60), mime="audio/ogg")
        await rig.gateway.handle(photo_message(rig, "", "m1", voice))
        notice = await rig.telegram.next_text()
        assert "type" in notice and "voice" in notice
        assert rig.gateway.sessions.get("dm:aiko:telegram:1") is None


async def test_with_echo_off_the_transcript_is_not_shown_back_but_is_stored(
    home: Path, monkeypatch: pytest.MonkeyPatch, transcriber: FakeOpenAI
) -> None:
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    monkeypatch.setenv("KIOKU_STT__PROVIDER", "openai")
    monkeypatch.setenv("KIOKU_STT__BASE_URL", transcriber.base_url)
    monkeypatch.setenv("KIOKU_STT__ECHO", "false")
    transcriber.transcribe("remind me to buy oat milk")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        voice = attached("voice", "voice.wav", wav_tone(1.0), mime="audio/wav", duration=21)
        await rig.gateway.handle(photo_message(rig, "", "m1", voice))
        assert (await rig.telegram.next_text()).endswith("remind me to buy oat milk")
        assert [reply.text for reply in rig.telegram.replies if "Heard" in reply.text] == []
        [text] = await stored_texts(rig)
        assert text == "[voice 0:21, transcribed]\nremind me to buy oat milk"
