"""A long reply as one `reply.md` file on Discord (`Outbound.long_as_file`), through the
real discord.py against the fake Discord's multipart message post."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.base import Address, Outbound
from adapters.discord.adapter import MESSAGE_LIMIT, DiscordAdapter
from config.platform_settings import DiscordSettings
from tests.fakes.discord import CHANNEL_ID, FakeDiscord
from tests.helpers.inbox import ignore

ASKED = "1234567890123456789"
LONG = "**Lease summary**\n\n" + "\n\n".join(
    f"Clause {n}: rent, deposit, 退去. " * 12 for n in range(8)
)


@pytest.fixture
async def adapter() -> AsyncIterator[tuple[DiscordAdapter, FakeDiscord]]:
    async with FakeDiscord() as fake:
        running = DiscordAdapter(
            ignore,
            DiscordSettings(
                token="test-token", api_base=fake.api_base, gateway_url=fake.gateway_url
            ),
            ready_timeout=10.0,
            guild_ready_timeout=0.05,
        )
        await running.start()
        try:
            yield running, fake
        finally:
            await running.stop()


def in_channel(text: str, *, long_as_file: bool = True) -> Outbound:
    address = Address("discord", str(CHANNEL_ID), reply_to=ASKED)
    return Outbound(address, text, long_as_file=long_as_file)


async def test_a_long_reply_goes_as_one_markdown_file_replying_to_the_message(
    adapter: tuple[DiscordAdapter, FakeDiscord],
) -> None:
    discord_adapter, fake = adapter
    assert len(LONG) > MESSAGE_LIMIT
    await discord_adapter.send(in_channel(LONG))
    post = await fake.next_post()
    assert [(upload.filename, upload.data.decode()) for upload in post.files] == [
        ("reply.md", LONG)
    ]
    assert post.content == "**Lease summary**"
    assert post.reply_to == ASKED
    assert fake.pending_posts() == 0


async def test_a_reply_that_fits_is_a_plain_message(
    adapter: tuple[DiscordAdapter, FakeDiscord],
) -> None:
    discord_adapter, fake = adapter
    await discord_adapter.send(in_channel("short"))
    post = await fake.next_post()
    assert (post.content, post.files) == ("short", [])


async def test_without_the_setting_a_long_reply_is_split(
    adapter: tuple[DiscordAdapter, FakeDiscord],
) -> None:
    discord_adapter, fake = adapter
    await discord_adapter.send(in_channel(LONG, long_as_file=False))
    first = await fake.next_post()
    assert first.files == [] and fake.pending_posts() >= 1


async def test_without_the_attach_files_permission_the_reply_goes_as_messages(
    adapter: tuple[DiscordAdapter, FakeDiscord],
) -> None:
    discord_adapter, fake = adapter
    fake.refuse(403)  # the file post: Missing Permissions
    await discord_adapter.send(in_channel(LONG))
    first = await fake.next_post()
    assert first.files == [] and first.content.startswith("**Lease summary**")
    assert first.reply_to == ASKED
