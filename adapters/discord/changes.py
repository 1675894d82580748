"""Discord's edits and deletions as `Changed`: the message named as its `Inbound` named it.

MESSAGE_UPDATE carries the whole message as it is now (developers/events/gateway-events.mdx,
Message Update), and discord.py builds it (`RawMessageUpdateEvent.message`); it is made
into the `Inbound` the live path would make, so the chat, thread and text (kioku's mention
taken out) are those of the stored turn. Discord also sends MESSAGE_UPDATE when nothing was
edited: a link's preview unfurled (recorded: message_update_embed_on_reply.json, and the
older partial message_update_embeds_only.json with no `content` at all), a pin
(message_update_pinned.json). Only an update whose `content` is there and whose
`edited_timestamp` is set is an edit. MESSAGE_DELETE and MESSAGE_DELETE_BULK name the
channel and ids only: the chat and thread come from the channel as discord.py knows it.
"""

from __future__ import annotations

import discord

from adapters.base import Changed
from adapters.discord.inbound import PLATFORM, guild_place, to_inbound
from config.platform_settings import DiscordSettings


def edited(
    update: discord.RawMessageUpdateEvent, me: discord.ClientUser, settings: DiscordSettings
) -> Changed | None:
    """The edit, or None for an update that edits nothing or a message kioku would not
    have taken in (its own, a bot's, a place it does not listen)."""
    data = update.data
    if "content" not in data or data.get("edited_timestamp") is None:
        return None
    inbound = to_inbound(update.message, me, settings)
    if inbound is None or inbound.message_id is None:
        return None
    return Changed(PLATFORM, inbound.chat, inbound.message_id, inbound.text, inbound.thread)


def deleted(
    client: discord.Client,
    channel_id: int,
    guild_id: int | None,
    message_ids: list[int],
    settings: DiscordSettings,
) -> list[Changed]:
    """One deletion per id, in the chat (and thread) the messages were taken in."""
    chat, thread = str(channel_id), ""
    if guild_id is not None:
        channel = client.get_channel(channel_id) or discord.Object(channel_id)
        place = guild_place(channel, guild_id, settings)
        if place is None:
            return []
        chat, thread = place
    return [Changed(PLATFORM, chat, str(message_id), None, thread) for message_id in message_ids]
