"""The Discord adapter end to end: real discord.py against the fake Discord, through the
real gateway (store, identities, agent) with a fake model that echoes."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import discord

from adapters.discord.adapter import DiscordAdapter
from tests.fakes.discord import (
    ALICE_DM_ID,
    ALICE_ID,
    BOT_ROLE_ID,
    CHANNEL_ID,
    THREAD_ID,
    FakeDiscord,
    user,
)
from tests.helpers.discord_rig import discord_served
from tests.helpers.gateway_rig import GatewayRig

# discord.py's intent bits: guilds, guild messages, DM messages, message content.
INTENTS = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15)


@asynccontextmanager
async def served(
    home: Path, fake: FakeDiscord, *, silence_limit: float = 60.0, **settings: Any
) -> AsyncIterator[tuple[GatewayRig, DiscordAdapter]]:
    async with discord_served(home, fake, silence_limit=silence_limit, **settings) as running:
        yield running


async def test_identifies_with_message_intents_and_gets_ready(home: Path, fake: FakeDiscord):
    base = discord.http.Route.BASE
    async with served(home, fake):
        assert fake.api_base == discord.http.Route.BASE
        assert len(fake.identifies) == 1
        identify = fake.identifies[0]
        assert identify["token"] == "test-token"
        assert identify["intents"] & INTENTS == INTENTS
    assert base == discord.http.Route.BASE


async def test_dm_round_trip_replies_to_the_message_with_typing(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        asked = await fake.push(fake.dm("hello there"))
        post = await fake.next_post()
    assert post.content == "echo: hello there"
    assert post.channel_id == str(ALICE_DM_ID)
    assert post.reply_to == asked["id"]
    assert post.body["message_reference"]["fail_if_not_exists"] is False
    assert str(ALICE_DM_ID) in fake.typing


async def test_guild_mention_round_trip(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        asked = await fake.push(fake.mention("what's up?"))
        post = await fake.next_post()
    assert post.content == "echo: what's up?"
    assert (post.channel_id, post.reply_to) == (str(CHANNEL_ID), asked["id"])


async def test_role_mention_addresses_kioku(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        message = fake.message(f"<@&{BOT_ROLE_ID}> status?", mention_roles=[BOT_ROLE_ID])
        await fake.push(message)
        assert (await fake.next_post()).content == "echo: status?"


async def test_guild_message_without_mention_gets_no_answer(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        await fake.push(fake.message("just chatting among ourselves"))
        asked = await fake.push(fake.mention("and now you"))
        post = await fake.next_post()
    assert post.reply_to == asked["id"]
    assert len(fake.posts) == 1


async def test_thread_is_its_own_session(home: Path, fake: FakeDiscord):
    async with served(home, fake) as (rig, _):
        await fake.push(fake.mention("in the channel"))
        in_channel = await fake.next_post()
        await fake.push(fake.mention("in the thread", channel_id=THREAD_ID))
        in_thread = await fake.next_post()
        sessions = {c.session_id for c in rig.gateway.stats().conversations}
    assert in_channel.channel_id == str(CHANNEL_ID)
    assert in_thread.channel_id == str(THREAD_ID)
    assert len(sessions) == 2 and None not in sessions


async def test_long_reply_is_split_at_2000_with_code_fences_intact(home: Path, fake: FakeDiscord):
    code = "\n".join(f"print({n})  # line {n}" for n in range(150))
    text = f"Here is the code:\n\n```python\n{code}\n```\nThat's all."
    async with served(home, fake):
        asked = await fake.push(fake.dm(text))
        posts = [await fake.next_post()]
        while "That's all." not in posts[-1].content:
            posts.append(await fake.next_post())
    assert len(posts) >= 2
    assert all(len(post.content) <= 2000 for post in posts)
    assert all(post.content.count("```") % 2 == 0 for post in posts)
    assert posts[1].content.startswith("```python")
    assert posts[0].reply_to == asked["id"]
    assert all(post.reply_to is None for post in posts[1:])


async def test_everyone_in_a_reply_does_not_ping(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        await fake.push(fake.dm("tell @everyone and @here"))
        post = await fake.next_post()
    assert "@everyone" in post.content
    assert post.body["allowed_mentions"] == {"parse": ["users"], "replied_user": True}


async def test_mass_mentions_ping_when_allowed(home: Path, fake: FakeDiscord):
    async with served(home, fake, allow_mass_mentions=True):
        await fake.push(fake.dm("tell @everyone"))
        post = await fake.next_post()
    assert set(post.body["allowed_mentions"]["parse"]) == {"users", "roles", "everyone"}


async def test_closed_socket_resumes_and_keeps_answering(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        await fake.drop_connection()
        await fake.wait_ready(2)
        await fake.push(fake.dm("still there?"))
        post = await fake.next_post()
    assert post.content == "echo: still there?"
    assert fake.resumes == 1
    assert len(fake.identifies) == 1


async def test_silent_gateway_is_replaced_by_the_watchdog(home: Path, fake: FakeDiscord):
    async with served(home, fake, silence_limit=0.6):
        fake.go_silent()
        await fake.wait_ready(2)
        await fake.push(fake.dm("are you back?"))
        post = await fake.next_post()
    assert post.content == "echo: are you back?"
    assert len(fake.identifies) == 2


async def test_rate_limited_send_waits_and_is_delivered(home: Path, fake: FakeDiscord):
    loop = asyncio.get_running_loop()
    async with served(home, fake):
        fake.rate_limit(times=1, retry_after=0.3)
        await fake.push(fake.dm("slowly"))
        limited_at = loop.time()
        post = await fake.next_post()
        waited = loop.time() - limited_at
    assert post.content == "echo: slowly"
    assert fake.rate_limited == 1
    assert waited >= 0.3


async def test_duplicate_message_create_is_answered_once(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        first = fake.dm("only once")
        await fake.push(first)
        await fake.push(first)
        last = await fake.push(fake.dm("and then this"))
        replies = [await fake.next_post(), await fake.next_post()]
    assert [post.reply_to for post in replies] == [first["id"], last["id"]]
    assert len(fake.posts) == 2


async def test_messages_of_a_chat_are_answered_in_the_order_sent(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        asked = [await fake.push(fake.dm(f"message {n}")) for n in range(5)]
        replies = [await fake.next_post() for _ in asked]
    assert [post.reply_to for post in replies] == [message["id"] for message in asked]


async def test_strangers_dm_gets_a_pairing_code(home: Path, fake: FakeDiscord):
    stranger = user(ALICE_ID + 7, "mallory")
    async with served(home, fake):
        await fake.push(fake.dm("hi, who are you?", author=stranger))
        post = await fake.next_post()
    assert re.search(r"kioku pairing approve \S+", post.content)


async def test_other_bots_and_own_messages_are_ignored(home: Path, fake: FakeDiscord):
    other_bot = user(ALICE_ID + 9, "otherbot", bot=True)
    async with served(home, fake):
        await fake.push(fake.bot_message("echo: loop?"))
        await fake.push(fake.dm("hello bot", author=other_bot))
        await fake.push(fake.message("hey", author=other_bot, mentions=[other_bot]))
        asked = await fake.push(fake.dm("and me"))
        post = await fake.next_post()
    assert post.reply_to == asked["id"]
    assert len(fake.posts) == 1
