"""Recorded messages of people (tests/fixtures/recorded/discord/, see PROVENANCE.md) as the
Discord adapter reads them: files of each kind fetched from their recorded `url` (pointed at
the fake), the length of a voice message, a sticker, a thread, a forward. The replay test
(test_discord_recorded.py) shows a running kioku answers or ignores them; this shows what
it reads of them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio

from adapters.base import Inbound
from tests.fakes.discord import CHANNEL_ID, GUILD_ID, RECORDED, THREAD_ID, FakeDiscord, recorded
from tests.helpers.discord_rig import discord_alone
from tests.helpers.inbox import Inbox, loopback_unproxied
from tests.helpers.media import media
from tests.helpers.media_files import gif, png_with_alpha

pytestmark = pytest.mark.asyncio(loop_scope="module")

VOICE = media("voice.ogg")
LIMIT = 10_000_000


@dataclass
class Served:
    fake: FakeDiscord
    inbox: Inbox

    async def read(self, name: str, files: dict[str, bytes] | None = None) -> Inbound:
        """What the adapter delivers of recorded `name`, its files served as `files`."""
        await self.fake.inject(self.fake.on_this_cdn((RECORDED / name).read_text(), files))
        inbound = await self.inbox.next()
        assert inbound.message_id == recorded(name)["d"]["id"]
        return inbound


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served() -> AsyncIterator[Served]:
    inbox = Inbox()
    with loopback_unproxied():
        async with discord_alone(inbox) as fake:
            await fake.wait_ready(1)
            yield Served(fake, inbox)


async def test_a_recorded_voice_message_is_voice_of_its_recorded_length(served: Served):
    inbound = await served.read(
        "message_create_voice_message_dm_shape.json", {"1112476845502365786": VOICE}
    )
    [voice] = inbound.attachments
    assert (inbound.text, inbound.unreadable) == ("", ())
    assert (voice.kind, voice.name, voice.mime) == ("voice", "voice-message.ogg", "audio/ogg")
    assert voice.duration == 3.9600000381469727
    assert await voice.fetch(LIMIT) == VOICE


async def test_a_recorded_image_without_text_is_an_image_of_its_size(served: Served):
    image = png_with_alpha(466, 85)
    inbound = await served.read(
        "message_create_image_dm_shape.json", {"1124628646431297546": image}
    )
    [file] = inbound.attachments
    assert (inbound.text, inbound.unreadable) == ("", ())
    assert (file.kind, file.name, file.mime) == ("image", "image.png", "image/png")
    assert (file.width, file.height, file.size) == (466, 85, 12919)
    assert await file.fetch(LIMIT) == image


async def test_a_recorded_text_file_is_a_document_with_its_message(served: Served):
    data = b"services: {}\n"
    inbound = await served.read(
        "message_create_document_dm_shape.json", {"1174514575220158545": data}
    )
    [file] = inbound.attachments
    assert inbound.text == "final final final revised draft"
    assert (file.kind, file.name, file.mime) == ("document", "the.yml", "text/plain")
    assert await file.fetch(LIMIT) == data


async def test_a_recorded_sticker_is_named_unreadable_beside_its_image(served: Served):
    inbound = await served.read("message_create_sticker_dm_shape.json")
    assert inbound.text == "can have attachments too"
    assert inbound.unreadable == ("a sticker",)
    assert [file.kind for file in inbound.attachments] == ["image"]


async def test_a_recorded_message_in_a_thread_is_the_threads_conversation(served: Served):
    inbound = await served.read("message_create_in_thread.json")
    assert (inbound.chat, inbound.thread) == (str(CHANNEL_ID), str(THREAD_ID))
    assert (inbound.is_direct, inbound.addressed) == (False, False)
    assert inbound.text == "don't mind me, posting something for cadence"


async def test_a_recorded_forward_by_a_person_is_read_as_the_quoted_message(served: Served):
    inbound = await served.read("message_create_forward_by_person.json")
    assert (inbound.chat, inbound.is_direct, inbound.addressed) == (str(GUILD_ID), False, False)
    assert inbound.text.startswith(
        "Forwarded message:\n> If some folks have spare bandwidth then helping out ArchiveTeam"
    )
    assert inbound.sender_name == "Amelia 🍄"


async def test_a_recorded_forward_of_an_image_is_read_as_the_forwarded_image(served: Served):
    animation = gif(300, 300)
    inbound = await served.read(
        "message_create_forward_image_dm_shape.json", {"1296237494987133070": animation}
    )
    [file] = inbound.attachments
    assert (inbound.text, inbound.unreadable) == ("", ())
    assert (file.kind, file.name, file.mime) == ("image", "100km.gif", "image/gif")
    assert (file.width, file.height, file.size) == (300, 300, 2965649)
    assert await file.fetch(LIMIT) == animation
