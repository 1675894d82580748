"""Recorded Discord traffic, raw through the fake gateway into a running `kioku serve`.

Each payload of tests/fixtures/recorded/discord/ (see PROVENANCE.md) is sent byte for byte
but for its attachments' CDN addresses, pointed at the fake (which serves them); then a
probe message goes into the same conversation (the payload's channel, or Alice's DM for
events that are no message). kioku answers in order within a conversation, so once the
probe is answered every answer to the payload has been posted: the test counts them (one
for what a person would expect an answer to, a notice before it when kioku cannot read
part of the message, none for the rest), checks the files of an answered message were
downloaded, and reads the daemon's log since the payload: no `*_malformed` line, nothing
at ERROR, nothing unhandled.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from itertools import count
from typing import Any, Literal

import pytest
import pytest_asyncio

from tests.fakes.discord import (
    ALICE,
    ALICE_DM_ID,
    ALICE_ID,
    BOT_ID,
    BOT_USER,
    CHANNEL_ID,
    RECORDED,
    THREAD_ID,
    FakeDiscord,
    Post,
)
from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.door_daemon import DoorLog, door_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.media import media
from tests.helpers.media_files import gif, png_with_alpha

pytestmark = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")

Outcome = Literal["answered", "noticed", "ignored", "private"]

# What a person expects of each recorded payload: "private" is an interaction answered to
# its asker alone (none of the recorded commands is kioku's: it says so), never in the channel;
# "noticed" is told what kioku cannot read on the message, then answered.
EXPECTED: dict[str, Outcome] = {
    "message_create_reply_to_bot.json": "answered",  # a reply to kioku's message
    "message_create_dm_docs_example.json": "answered",  # a stranger's DM: a pairing code
    "message_create_dm_userdoccers_example.json": "answered",
    # Real messages kept without `guild_id` (out-of-your-element's test data), so read as
    # DMs, from people kioku lets in (`READERS`): it fetches and reads their files.
    "message_create_image_dm_shape.json": "answered",
    "message_create_document_dm_shape.json": "answered",
    "message_create_voice_message_dm_shape.json": "answered",
    "message_create_forward_image_dm_shape.json": "answered",  # a person forwards a GIF
    "message_create_sticker_dm_shape.json": "noticed",  # a sticker beside text and an image
    "message_create_guild_unaddressed.json": "ignored",  # guild chatter, no mention
    "message_create_in_thread.json": "ignored",  # chatter in a thread, no mention
    "message_create_forward_by_person.json": "ignored",  # a forward into a guild channel
    "message_create_pin_notice.json": "ignored",  # a system message
    "message_create_forward_by_bot.json": "ignored",  # another bot's message
    "message_create_crosspost_webhook.json": "ignored",  # a followed channel's webhook
    "message_update_embeds_only.json": "ignored",
    "message_update_pinned.json": "ignored",
    # An edit and deletions of messages kioku never took in: nothing to change, no answer.
    "message_update_edit_reply.json": "ignored",
    "message_update_embed_on_reply.json": "ignored",  # a link preview, not an edit
    "message_delete.json": "ignored",
    "message_delete_dm.json": "ignored",
    "message_delete_bulk_guild.json": "ignored",
    "message_reaction_add.json": "ignored",
    "typing_start_guild.json": "ignored",
    "typing_start_no_guild.json": "ignored",
    "guild_create_unavailable.json": "ignored",
    "guild_member_add.json": "ignored",
    "guild_member_update.json": "ignored",
    "guild_members_chunk_presences.json": "ignored",
    "presence_update_activities.json": "ignored",
    "presence_update_idle.json": "ignored",
    "guild_audit_log_entry_create.json": "ignored",
    "channel_pins_update.json": "ignored",
    "webhooks_update.json": "ignored",
    "thread_create_docs_example.json": "ignored",
    "resumed_with_trace.json": "ignored",
    "unknown_dispatch_docs_example.json": "ignored",
    "interaction_slash_command.json": "private",
    "interaction_subcommand_group.json": "private",
    "interaction_slash_command_docs.json": "private",
    "interaction_user_command_docs.json": "private",
    "interaction_message_command_docs.json": "private",
    "interaction_slash_command_userdoccers.json": "private",
    "interaction_user_command_userdoccers.json": "private",
    "interaction_message_command_userdoccers.json": "private",
    # Their token was blanked when published: no answer can reach Discord (kioku warns).
    "interaction_slash_command_guild.json": "ignored",
    "interaction_slash_command_private_channel.json": "ignored",
}
# Sent by the fake itself at every connection: what the whole module runs on.
AT_CONNECT = ("ready.json", "guild_create.json")
# Sent by the fake when it refuses a RESUME (tests/adapters/discord/test_catch_up.py).
ON_RESUME = ("invalid_session.json",)
# The authors of the `*_dm_shape.json` messages, on kioku's Discord allow list.
READERS = ["discord:320067006521147393", "discord:142843483923677184", "discord:113340068197859328"]
# What the fake serves for their attachments (by id): the recorded files were never published.
FILES = {
    "1124628646431297546": png_with_alpha(466, 85),  # image.png
    "1174514575220158545": b"final:\n  revised: draft\n",  # the.yml
    "1112476845502365786": media("voice.ogg"),  # voice-message.ogg
    "1106366167486038016": png_with_alpha(333, 287),  # image.png beside the sticker
    "1296237494987133070": gif(300, 300),  # 100km.gif, in a forwarded message
}


@dataclass
class Served:
    """The daemon connected to the fake, and a probe that waits out a conversation."""

    daemon: Daemon
    discord: FakeDiscord
    numbers: count[int]

    async def probe(self, payload: dict[str, Any]) -> tuple[list[Post], Post]:
        """Ask in the payload's conversation (as its author, when kioku lets them in); the
        posts made before the probe's answer (since `payload` was sent), and that answer."""
        fake = self.discord
        before = len(fake.posts)
        text = f"probe {next(self.numbers)}"
        data = payload["d"] if payload["t"] == "MESSAGE_CREATE" else {}
        channel = int(data.get("channel_id", ALICE_DM_ID))
        if "guild_id" in data:
            asked = fake.message(f"<@{BOT_ID}> {text}", channel_id=channel, mentions=[BOT_USER])
        else:
            # kioku takes turns per person: a person it lets in asks after their own message.
            author = data.get("author", {})
            known = f"discord:{author.get('id')}" in READERS
            asked = fake.message(
                text, channel_id=channel, guild=False, author=author if known else ALICE
            )
        await fake.push(asked)
        while True:
            post = await fake.next_post(WAIT)
            if post.reply_to == asked["id"]:
                break
        earlier = [p for p in fake.posts[before:] if p is not post]
        return earlier, post

    def check_log(self, log: DoorLog) -> None:
        text = log.text()
        malformed = [line for line in text.splitlines() if "_malformed" in line]
        assert malformed == []
        assert '"level": "error"' not in text
        assert log.unhandled() == []


@module_fixture
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    async with GatedAnthropic() as api, FakeDiscord(heartbeat_interval_ms=1000) as fake:
        settings = {
            **fake.env(),
            "KIOKU_OWNER__IDENTITIES": f'["discord:{ALICE_ID}"]',
            "KIOKU_DISCORD__ALLOW": json.dumps(READERS),
        }
        async with door_daemon(tmp_path_factory.mktemp("discord"), api, **settings) as daemon:
            await fake.wait_ready(1, within=WAIT)
            yield Served(daemon, fake, count(1))


def recorded_text(name: str) -> str:
    return (RECORDED / name).read_text()


async def test_every_recorded_payload_has_an_expectation() -> None:
    files = {path.name for path in RECORDED.glob("*.json")}
    assert files == set(EXPECTED) | set(AT_CONNECT) | set(ON_RESUME)


async def test_every_recorded_payload_names_its_source() -> None:
    provenance = (RECORDED / "PROVENANCE.md").read_text()
    assert [path.name for path in RECORDED.glob("*.json") if path.name not in provenance] == []


async def test_recorded_ready_and_guild_create_bring_kioku_up(served: Served) -> None:
    ready = json.loads(recorded_text("ready.json"))["d"]
    log = DoorLog(served.daemon.log)
    assert log.event("discord_ready")["guilds"] == len(ready["guilds"])
    asked = await served.discord.push(
        served.discord.message(
            f"<@{BOT_ID}> in the recorded thread", channel_id=THREAD_ID, mentions=[BOT_USER]
        )
    )
    post = await served.discord.next_post(WAIT)
    assert (post.channel_id, post.reply_to) == (str(THREAD_ID), asked["id"])
    served.check_log(log)


@pytest.mark.parametrize("name", EXPECTED)
async def test_a_recorded_payload_is_answered_once_or_ignored_without_complaint(
    served: Served, name: str
) -> None:
    text = served.discord.on_this_cdn(recorded_text(name), FILES)
    payload = json.loads(text)
    log = DoorLog(served.daemon.log)
    log.begin()
    await served.discord.inject(text)
    earlier, _ = await served.probe(payload)
    if EXPECTED[name] == "noticed":
        notice, *earlier = earlier
        assert (notice.reply_to, notice.channel_id) == (
            payload["d"]["id"],
            payload["d"]["channel_id"],
        )
        assert notice.content.startswith("I can't read a sticker")
    if EXPECTED[name] in ("answered", "noticed"):
        assert [post.reply_to for post in earlier] == [payload["d"]["id"]]
        assert earlier[0].channel_id == payload["d"]["channel_id"]
        data = payload["d"]
        forwarded = [snapshot["message"] for snapshot in data.get("message_snapshots", [])]
        files = [file["id"] for message in [data, *forwarded] for file in message["attachments"]]
        assert [file for file in files if file not in served.discord.downloads] == []
    else:
        assert earlier == []
    if EXPECTED[name] == "private":
        answer = await served.discord.next_answer(WAIT)
        assert (answer.interaction, answer.ephemeral) == (payload["d"]["id"], True)
    assert served.discord.pending_answers() == 0
    served.check_log(log)


async def test_a_message_from_the_recorded_shape_reaches_kioku_in_a_guild_channel(
    served: Served,
) -> None:
    """The fake's own messages start from a recorded MESSAGE_CREATE: a mention is answered."""
    asked = await served.discord.push(
        served.discord.message(f"<@{BOT_ID}> hello", author=ALICE, mentions=[BOT_USER])
    )
    post = await served.discord.next_post(WAIT)
    assert (post.channel_id, post.reply_to) == (str(CHANNEL_ID), asked["id"])
