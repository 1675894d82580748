"""Files on Telegram messages: the real python-telegram-bot asks the fake Bot API for each
file (`getFile`) and downloads its bytes from the file endpoint, within the limit given."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from adapters.base import Attachment, FetchFailed, Inbound, TooLarge
from adapters.telegram.adapter import TelegramAdapter
from config.platform_settings import TelegramSettings
from tests.fakes.telegram import TOKEN, FakeTelegram, Fault
from tests.helpers.inbox import Inbox, loopback_unproxied
from tests.helpers.media import media

pytestmark = pytest.mark.asyncio(loop_scope="module")

AIKO = 42
RECEIPT, VOICE, LEASE = media("receipt.jpg"), media("voice.ogg"), media("lease.pdf")
THUMB = b"a small version of the photo " * 40


@dataclass
class Served:
    tg: FakeTelegram
    inbox: Inbox

    async def sent(self, **fields: Any) -> Inbound:
        """Aiko's DM carrying `fields` (a file and maybe a caption), as delivered."""
        await self.tg.dm(AIKO, None, **fields)
        return await self.inbox.next()

    async def attachment(self, **fields: Any) -> Attachment:
        [attachment] = (await self.sent(**fields)).attachments
        return attachment

    def calls(self, method: str) -> int:
        return len(self.tg.sent(method))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served() -> AsyncIterator[Served]:
    inbox = Inbox()
    with loopback_unproxied():
        async with FakeTelegram() as tg:
            settings = TelegramSettings(
                token=TOKEN,
                base_url=tg.base_url,
                base_file_url=tg.base_file_url,
                poll_timeout=0.2,
                silence_limit=1.0,
            )
            adapter = TelegramAdapter(inbox.deliver, settings, retry_base=0.05)
            await adapter.start()
            try:
                yield Served(tg, inbox)
            finally:
                await adapter.stop()


async def test_a_photo_is_its_largest_size_and_fetch_gives_its_exact_bytes(served: Served):
    photo = served.tg.photo((THUMB, 320, 240), (RECEIPT, 2400, 1800))
    inbound = await served.sent(photo=photo, caption="what did I spend?")
    [attachment] = inbound.attachments
    assert inbound.text == "what did I spend?" and inbound.unreadable == ()
    assert (attachment.kind, attachment.name, attachment.mime) == (
        "image",
        "photo.jpg",
        "image/jpeg",
    )
    assert (attachment.width, attachment.height, attachment.size) == (2400, 1800, len(RECEIPT))
    assert await attachment.fetch(len(RECEIPT)) == RECEIPT


async def test_a_photo_over_the_limit_falls_back_to_the_largest_size_within_it(served: Served):
    attachment = await served.attachment(
        photo=served.tg.photo((THUMB, 320, 240), (RECEIPT, 2400, 1800))
    )
    assert await attachment.fetch(len(RECEIPT) - 1) == THUMB


async def test_a_photo_with_no_size_within_the_limit_is_too_large_before_any_call(
    served: Served,
):
    attachment = await served.attachment(
        photo=served.tg.photo((THUMB, 320, 240), (RECEIPT, 2400, 1800))
    )
    asked = served.calls("getFile")
    with pytest.raises(TooLarge, match="at its smallest"):
        await attachment.fetch(len(THUMB) - 1)
    assert served.calls("getFile") == asked


async def test_a_voice_note_without_a_caption_is_an_inbound_with_its_duration(served: Served):
    inbound = await served.sent(voice=served.tg.voice(VOICE, duration=3))
    [attachment] = inbound.attachments
    assert inbound.text == "" and inbound.is_direct
    assert (attachment.kind, attachment.name, attachment.mime) == (
        "voice",
        "voice.ogg",
        "audio/ogg",
    )
    assert attachment.duration == 3.0
    assert await attachment.fetch(10 * 1024 * 1024) == VOICE


async def test_an_audio_file_is_downloaded_from_the_file_endpoint_with_its_name(
    served: Served,
):
    audio = served.tg.audio(VOICE, 3, "standup.ogg", "audio/ogg")
    attachment = await served.attachment(audio=audio, caption="minutes please")
    assert (attachment.kind, attachment.name, attachment.mime) == (
        "audio",
        "standup.ogg",
        "audio/ogg",
    )
    assert (attachment.duration, attachment.size) == (3.0, len(VOICE))
    assert await attachment.fetch(len(VOICE)) == VOICE
    assert served.tg.downloads[-1].startswith("music/file")


async def test_a_document_keeps_its_name_and_type(served: Served):
    document = served.tg.document(LEASE, "lease.pdf", "application/pdf")
    attachment = await served.attachment(document=document, caption="summarise")
    assert (attachment.kind, attachment.name, attachment.mime) == (
        "document",
        "lease.pdf",
        "application/pdf",
    )
    assert await attachment.fetch(len(LEASE)) == LEASE


async def test_an_image_sent_as_a_file_is_an_image(served: Served):
    document = served.tg.document(RECEIPT, "receipt.jpg", "image/jpeg")
    attachment = await served.attachment(document=document)
    assert (attachment.kind, attachment.name) == ("image", "receipt.jpg")
    assert await attachment.fetch(len(RECEIPT)) == RECEIPT


async def test_a_declared_size_over_the_limit_is_refused_before_downloading(served: Served):
    attachment = await served.attachment(
        document=served.tg.document(LEASE, "lease.pdf", "application/pdf")
    )
    asked, downloads = served.calls("getFile"), len(served.tg.downloads)
    with pytest.raises(TooLarge, match=f"{len(LEASE):,} bytes, over the limit of 1,000"):
        await attachment.fetch(1000)
    assert (served.calls("getFile"), len(served.tg.downloads)) == (asked, downloads)


@pytest.mark.parametrize(
    ("chunked", "says"),
    [(False, r"\(70,005 bytes\)"), (True, r"\(more than 1,000 bytes\)")],
    ids=["content-length", "chunked"],
)
async def test_more_bytes_than_declared_are_cut_off_while_they_arrive(
    served: Served, chunked: bool, says: str
):
    """The answer's Content-Length, or else the bytes counted as they stream in."""
    document = served.tg.document(
        b"%PDF-" + bytes(70_000), "big.pdf", "application/pdf", declared=100, chunked=chunked
    )
    attachment = await served.attachment(document=document)
    with pytest.raises(TooLarge, match=f"over the limit of 1,000 bytes {says}"):
        await attachment.fetch(1000)


async def test_a_file_telegram_says_is_too_big_is_too_large(served: Served):
    document = served.tg.document(
        b"%PDF-", "huge.pdf", "application/pdf", declared=30 * 1024 * 1024
    )
    attachment = await served.attachment(document=document)
    with pytest.raises(TooLarge, match="refused it as too big"):
        await attachment.fetch(64 * 1024 * 1024)


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        (Fault("error", 500, "Internal Server Error"), "Internal Server Error"),
        (Fault("drop"), "httpx.RemoteProtocolError"),
    ],
    ids=["500", "dropped"],
)
async def test_a_failed_download_says_why_without_the_token(
    served: Served, fault: Fault, says: str
):
    attachment = await served.attachment(voice=served.tg.voice(VOICE, duration=3))
    served.tg.fail("download", fault)
    with pytest.raises(FetchFailed) as failed:
        await attachment.fetch(len(VOICE))
    assert not isinstance(failed.value, TooLarge)
    assert "the download from Telegram failed" in str(failed.value) and says in str(failed.value)
    assert TOKEN not in str(failed.value)


async def test_a_file_telegram_no_longer_has_fails_with_its_reason(served: Served):
    voice = {**served.tg.voice(VOICE, duration=3), "file_id": "gone"}
    attachment = await served.attachment(voice=voice)
    with pytest.raises(FetchFailed, match=r"would not hand the file over .*Wrong file_id"):
        await attachment.fetch(len(VOICE))
