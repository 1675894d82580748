"""Edits and deletions on Discord (real discord.py against the fake Discord) handed over as
`Changed`, naming the message as its `Inbound` did; updates that edit nothing are not."""

from __future__ import annotations

import json

from structlog.testing import capture_logs

from adapters.base import Changed, Inbound
from tests.fakes.discord import (
    ALICE_DM_ID,
    BOT_ID,
    CHANNEL_ID,
    GUILD_ID,
    RECORDED,
    THREAD_ID,
    FakeDiscord,
)
from tests.helpers.discord_rig import discord_recorded


async def test_an_edit_is_handed_over_with_the_text_as_kioku_reads_it(fake: FakeDiscord):
    async with discord_recorded(fake) as (_, events):
        asked = await fake.push(fake.mention("what is 2+2?", channel_id=THREAD_ID))
        await fake.edit(asked, f"<@{BOT_ID}> what is 2+3?")
        inbound = await events.next(Inbound)
        change = await events.next(Changed)
    assert change == Changed(
        "discord", inbound.chat, inbound.message_id or "", "what is 2+3?", inbound.thread
    )
    assert (change.chat, change.thread) == (str(CHANNEL_ID), str(THREAD_ID))


async def test_a_recorded_edit_is_handed_over(fake: FakeDiscord):
    async with discord_recorded(fake) as (_, events):
        await fake.inject((RECORDED / "message_update_edit_reply.json").read_text())
        change = await events.next(Changed)
    # The recorded guild's first channel is the guild's own id, as in guilds of that age.
    assert change == Changed("discord", str(GUILD_ID), "1128084851279536279", "Edit", "")


async def test_updates_that_edit_nothing_are_not_handed_over(fake: FakeDiscord):
    async with discord_recorded(fake) as (_, events):
        for name in (
            "message_update_embed_on_reply.json",  # a link preview: content, never edited
            "message_update_embeds_only.json",  # an older, partial link preview
            "message_update_pinned.json",  # a pin
        ):
            await fake.inject((RECORDED / name).read_text())
        own = await fake.push(fake.bot_message("kioku's answer"))
        await fake.edit(own, "kioku's answer, edited")
        probe = await fake.push(fake.mention("probe"))
        first = await events.next(Inbound)
    assert first.message_id == probe["id"]
    assert events.queue.empty()


async def test_a_deletion_is_handed_over_without_text(fake: FakeDiscord):
    async with discord_recorded(fake) as (_, events):
        said = await fake.push(fake.dm("forget I said this"))
        await fake.delete(said)
        await events.next(Inbound)
        change = await events.next(Changed)
    assert change == Changed("discord", str(ALICE_DM_ID), said["id"], None, "")
    assert change.deleted


async def test_a_bulk_deletion_is_one_change_per_message_in_its_thread(fake: FakeDiscord):
    async with discord_recorded(fake) as (_, events):
        said = [await fake.push(fake.mention(f"number {n}", channel_id=THREAD_ID)) for n in (1, 2)]
        await fake.delete_bulk(said)
        await events.next(Inbound)
        await events.next(Inbound)
        changes = [await events.next(Changed), await events.next(Changed)]
    assert changes == [
        Changed("discord", str(CHANNEL_ID), message["id"], None, str(THREAD_ID)) for message in said
    ]


async def test_an_edit_discord_py_cannot_parse_is_a_warning_and_the_connection_goes_on(
    fake: FakeDiscord,
):
    frame = json.loads((RECORDED / "message_update_edit_reply.json").read_text())
    del frame["d"]["type"]  # discord.py indexes it: the edit cannot be read
    async with discord_recorded(fake) as (_, events):
        with capture_logs() as logs:
            await fake.inject(json.dumps(frame))
            probe = await fake.push(fake.dm("and then this"))
            assert (await events.next(Inbound)).message_id == probe["id"]
    kioku = [(e["log_level"], e["event"], e.get("dispatch")) for e in logs]
    assert kioku == [("warning", "discord_frame_malformed", "MESSAGE_UPDATE")]
