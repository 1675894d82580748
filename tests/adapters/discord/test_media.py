"""Files on Discord messages: real discord.py reads each attachment (`Attachment.read()`)
from its `url` on the fake Discord, within the limit given."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from adapters.base import Attachment, FetchFailed, Inbound, TooLarge
from tests.fakes.discord import FakeDiscord
from tests.helpers.discord_rig import discord_alone
from tests.helpers.inbox import Inbox, loopback_unproxied
from tests.helpers.media import media

pytestmark = pytest.mark.asyncio(loop_scope="module")

RECEIPT, VOICE, LEASE = media("receipt.jpg"), media("voice.ogg"), media("lease.pdf")


@dataclass
class Served:
    fake: FakeDiscord
    inbox: Inbox

    async def sent(self, *files: dict[str, Any], text: str = "") -> Inbound:
        await self.fake.push(self.fake.dm(text, attachments=list(files)))
        return await self.inbox.next()

    async def attachment(self, file: dict[str, Any]) -> Attachment:
        [attachment] = (await self.sent(file)).attachments
        return attachment


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served() -> AsyncIterator[Served]:
    inbox = Inbox()
    with loopback_unproxied():
        async with discord_alone(inbox) as fake:
            yield Served(fake, inbox)


async def test_every_attachment_is_one_with_its_kind_and_exact_bytes(served: Served):
    fake = served.fake
    files = [
        fake.attachment("receipt.jpg", "image/jpeg", RECEIPT),
        fake.attachment("lease.pdf", "application/pdf", LEASE),
        fake.attachment("song.mp3", "audio/mpeg", b"ID3" + bytes(200)),
        fake.attachment("clip.mp4", "video/mp4", bytes(300)),
        fake.attachment("notes.txt", "text/plain; charset=utf-8", b"buy milk\n"),
        fake.attachment("blob", None, b"\x00\x01"),
        fake.attachment("logo.svg", "image/svg+xml", b"<svg/>"),
    ]
    inbound = await served.sent(*files, text="have a look")
    assert inbound.text == "have a look" and inbound.unreadable == ()
    assert [(a.kind, a.name, a.mime) for a in inbound.attachments] == [
        ("image", "receipt.jpg", "image/jpeg"),
        ("document", "lease.pdf", "application/pdf"),
        ("audio", "song.mp3", "audio/mpeg"),
        ("video", "clip.mp4", "video/mp4"),
        ("document", "notes.txt", "text/plain"),
        ("document", "blob", "application/octet-stream"),
        ("document", "logo.svg", "image/svg+xml"),
    ]
    receipt, lease = inbound.attachments[:2]
    assert receipt.size == len(RECEIPT)
    assert await receipt.fetch(len(RECEIPT)) == RECEIPT
    assert await lease.fetch(len(LEASE)) == LEASE


async def test_a_voice_message_without_text_is_an_inbound_with_its_duration(served: Served):
    inbound = await served.sent(served.fake.voice_message(VOICE, 3.01))
    [voice] = inbound.attachments
    assert inbound.text == "" and inbound.is_direct
    assert (voice.kind, voice.mime, voice.duration) == ("voice", "audio/ogg", 3.01)
    assert await voice.fetch(len(VOICE)) == VOICE


async def test_a_declared_size_over_the_limit_is_refused_before_downloading(served: Served):
    attachment = await served.attachment(
        served.fake.attachment("lease.pdf", "application/pdf", LEASE)
    )
    downloads = len(served.fake.downloads)
    with pytest.raises(TooLarge, match=f"{len(LEASE):,} bytes, over the limit of 1,000"):
        await attachment.fetch(1000)
    assert len(served.fake.downloads) == downloads


async def test_more_bytes_than_declared_are_too_large(served: Served):
    file = served.fake.attachment("big.pdf", "application/pdf", bytes(5000), declared=100)
    attachment = await served.attachment(file)
    with pytest.raises(TooLarge, match="5,000 bytes, over the limit of 1,000"):
        await attachment.fetch(1000)


@pytest.mark.parametrize(("status", "says"), [(404, "404 Not Found"), (500, "500")])
async def test_a_failed_download_says_why(served: Served, status: int, says: str):
    attachment = await served.attachment(served.fake.attachment("a.png", "image/png"))
    served.fake.refuse_downloads(status)
    with pytest.raises(FetchFailed) as failed:
        await attachment.fetch(10_000)
    assert not isinstance(failed.value, TooLarge)
    assert "Discord would not hand the file over" in str(failed.value)
    assert says in str(failed.value)
