"""The Discord adapter alone (real discord.py against the fake Discord): what it makes of
messages, where it refuses to listen, and how it reports failures."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import discord
import pytest
from structlog.testing import capture_logs

from adapters.base import AdapterFailed, Address, Outbound
from adapters.discord.adapter import DiscordAdapter
from config.platform_settings import DiscordSettings
from tests.fakes.discord import (
    ALICE,
    ALICE_DM_ID,
    ALICE_ID,
    BOT_ID,
    BOT_USER,
    CHANNEL_ID,
    GUILD_ID,
    OTHER_CHANNEL_ID,
    RECORDED,
    THREAD_ID,
    FakeDiscord,
    recorded_answer,
    user,
)
from tests.helpers.inbox import Inbox


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield server


@asynccontextmanager
async def adapter_for(
    fake: FakeDiscord, **settings: Any
) -> AsyncIterator[tuple[DiscordAdapter, Inbox]]:
    inbox = Inbox()
    adapter = DiscordAdapter(
        inbox.deliver,
        DiscordSettings(
            token="test-token", api_base=fake.api_base, gateway_url=fake.gateway_url, **settings
        ),
        ready_timeout=10.0,
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    try:
        yield adapter, inbox
    finally:
        await adapter.stop()


async def test_mention_is_stripped_and_other_mentions_become_names(fake: FakeDiscord):
    bob = user(int(ALICE["id"]) + 3, "bob")
    async with adapter_for(fake) as (_, inbox):
        await fake.push(
            fake.message(f"<@{BOT_ID}> ask <@{bob['id']}> about it", mentions=[BOT_USER, bob])
        )
        inbound = await inbox.next()
    assert inbound.text == "ask @Bob about it"
    assert inbound.addressed and not inbound.is_direct
    assert (inbound.sender, inbound.sender_name) == (f"discord:{ALICE['id']}", "Alice")
    assert (inbound.chat, inbound.thread) == (str(CHANNEL_ID), "")


async def test_reply_to_kioku_addresses_it_and_carries_the_replied_text(fake: FakeDiscord):
    async with adapter_for(fake) as (_, inbox):
        earlier = fake.bot_message("The meeting is at noon.")
        await fake.push(fake.message("which day though?", reply_to=earlier))
        inbound = await inbox.next()
    assert inbound.addressed
    assert inbound.reply_to_text == "The meeting is at noon."


async def test_thread_message_names_parent_channel_and_thread(fake: FakeDiscord):
    async with adapter_for(fake) as (_, inbox):
        await fake.push(fake.mention("in here", channel_id=THREAD_ID))
        inbound = await inbox.next()
    assert (inbound.chat, inbound.thread) == (str(CHANNEL_ID), str(THREAD_ID))


async def test_guild_not_allowed_is_not_listened_to(fake: FakeDiscord):
    async with adapter_for(fake, guilds=[str(GUILD_ID + 1)]) as (_, inbox):
        await fake.push(fake.mention("hello?"))
        await fake.push(fake.dm("a DM still counts"))
        inbound = await inbox.next()
    assert inbound.is_direct
    assert inbox.queue.empty()


async def test_channel_allowlist_covers_its_threads(fake: FakeDiscord):
    async with adapter_for(fake, channels=[str(CHANNEL_ID)]) as (_, inbox):
        await fake.push(fake.mention("elsewhere", channel_id=OTHER_CHANNEL_ID))
        await fake.push(fake.mention("in a thread", channel_id=THREAD_ID))
        inbound = await inbox.next()
    assert inbound.thread == str(THREAD_ID)
    assert inbox.queue.empty()


async def test_attachments_are_listed_in_order_and_none_is_unreadable(fake: FakeDiscord):
    files = [
        fake.attachment("a.png", "image/png"),
        fake.attachment("b.jpg", "image/jpeg"),
        fake.attachment("notes.pdf", "application/pdf"),
    ]
    async with adapter_for(fake) as (_, inbox):
        await fake.push(fake.dm("", attachments=files))
        inbound = await inbox.next()
    assert [(a.kind, a.name) for a in inbound.attachments] == [
        ("image", "a.png"),
        ("image", "b.jpg"),
        ("document", "notes.pdf"),
    ]
    assert inbound.unreadable == () and inbound.text == ""


async def test_refused_send_raises(fake: FakeDiscord):
    async with adapter_for(fake) as (adapter, _):
        fake.refuse(403)
        with pytest.raises(discord.Forbidden):
            await adapter.send(Outbound(Address("discord", str(CHANNEL_ID)), "hello"))


async def test_the_direct_chat_of_a_user_is_opened_through_the_api(fake: FakeDiscord):
    async with adapter_for(fake) as (adapter, _):
        chat = await adapter.direct_chat(str(ALICE_ID))
        assert chat == str(ALICE_DM_ID) and fake.opened_dms == [ALICE_ID]
        await adapter.send(Outbound(Address("discord", chat), "take the bread out"))
        post = await fake.next_post(5.0)
        assert (post.channel_id, post.content) == (str(ALICE_DM_ID), "take the bread out")


async def test_typing_stops_when_the_reply_is_sent(fake: FakeDiscord):
    address = Address("discord", str(ALICE_DM_ID), reply_to="1234567890123456789")
    async with adapter_for(fake) as (adapter, _):
        await adapter.working(address)
        assert await fake.next_typing() == str(ALICE_DM_ID)
        typing = [t for t in asyncio.all_tasks() if t.get_name().startswith("discord-typing")]
        await adapter.send(Outbound(address, "done"))
        await asyncio.gather(*typing, return_exceptions=True)
    assert len(typing) == 1 and typing[0].cancelled()


async def test_gateway_refusing_the_session_reports_failure(fake: FakeDiscord):
    async with adapter_for(fake) as (adapter, _):
        await fake.drop_connection(code=4004)
        error = await asyncio.wait_for(adapter.wait_failed(), 10.0)
    assert isinstance(error, discord.ConnectionClosed)
    assert error.code == 4004


async def test_wrong_token_fails_start_and_restores_endpoints(fake: FakeDiscord):
    base, gateway = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    adapter = DiscordAdapter(
        Inbox().deliver,
        DiscordSettings(token="wrong", api_base=fake.api_base, gateway_url=fake.gateway_url),
    )
    with pytest.raises(discord.LoginFailure):
        await adapter.start()
    assert discord.http.Route.BASE is base
    assert discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY is gateway


async def test_an_application_answer_discord_py_cannot_read_fails_start_saying_so(
    fake: FakeDiscord,
):
    fake.application = recorded_answer("application_docs_example.json")
    adapter = DiscordAdapter(
        Inbox().deliver,
        DiscordSettings(token="test-token", api_base=fake.api_base, gateway_url=fake.gateway_url),
    )
    with pytest.raises(AdapterFailed, match=r"/oauth2/applications/@me: KeyError: 'role'"):
        await adapter.start()
    assert fake.api_base != discord.http.Route.BASE


async def test_a_forwarded_message_is_read_as_its_quoted_text_and_files(fake: FakeDiscord):
    forward = fake.dm("")
    forward["flags"] = 1 << 14  # HAS_SNAPSHOT
    forward["message_reference"] = {
        "type": 1,  # FORWARD
        "channel_id": str(OTHER_CHANNEL_ID),
        "guild_id": str(GUILD_ID),
        "message_id": str(ALICE_ID + 11),
    }
    # A snapshot carries a subset of a message's fields (no author; here no mention_roles).
    forward["message_snapshots"] = [
        {
            "message": {
                "type": 0,
                "content": "The meeting moved to Friday.\nBring the slides.",
                "mentions": [],
                "attachments": [fake.attachment("slides.pdf", "application/pdf")],
                "embeds": [],
                "timestamp": "2024-07-23T21:45:30.875000+00:00",
                "edited_timestamp": None,
                "flags": 0,
                "components": [],
            }
        }
    ]
    async with adapter_for(fake) as (_, inbox):
        await fake.push(forward)
        inbound = await inbox.next()
    assert inbound.text == (
        "Forwarded message:\n> The meeting moved to Friday.\n> Bring the slides."
    )
    assert [(a.kind, a.name) for a in inbound.attachments] == [("document", "slides.pdf")]


async def test_an_event_kioku_does_not_read_and_discord_py_cannot_parse_is_a_debug_line(
    fake: FakeDiscord,
):
    # Recorded in 2020: the partial MESSAGE_UPDATE of a link preview, with no `type`.
    update = (RECORDED / "message_update_embeds_only.json").read_text()
    async with adapter_for(fake) as (_, inbox):
        with capture_logs() as logs:
            await fake.inject(update)
            await fake.push(fake.dm("and then this"))
            assert (await inbox.next()).text == "and then this"
    kioku = [(e["log_level"], e["event"], e.get("dispatch")) for e in logs]
    assert kioku == [("debug", "discord_event_unparsed", "MESSAGE_UPDATE")]


async def test_a_reply_to_kioku_that_arrives_empty_is_named_with_the_likely_reason(
    fake: FakeDiscord,
):
    """Without the Message Content intent Discord sends a reply that does not ping the bot
    with no text and no files."""
    async with adapter_for(fake) as (_, inbox):
        await fake.push(fake.message("", reply_to=fake.bot_message("The meeting is at noon.")))
        inbound = await inbox.next()
    assert inbound.addressed and inbound.text == ""
    assert len(inbound.unreadable) == 1 and "Message Content intent" in inbound.unreadable[0]


async def test_a_bare_mention_is_not_an_empty_message(fake: FakeDiscord):
    async with adapter_for(fake) as (_, inbox):
        await fake.push(fake.mention(""))
        inbound = await inbox.next()
    assert (inbound.text, inbound.unreadable) == ("", ())
