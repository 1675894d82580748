"""What was said to kioku on Discord while it was away, read from each channel's history.

Discord delivers a message to the bot's gateway connection once: what is sent while kioku
is stopped, or reconnecting with a session Discord would not resume, reaches nobody. After
each READY the adapter reads, for each cursor of the gateway's plan (a DM channel kioku
talks in, a channel or thread it was addressed in within `max_age`), the messages after the
last one kioku saw, with discord.py's own `history` (REST `GET /channels/{id}/messages
?after=`; discord.py waits out 429s). Each becomes the `Inbound` the live path makes
(`to_inbound`: kioku's own messages, other bots and system messages are left out), with
`received_at` the time Discord says it was sent.

A channel that refuses is skipped and the others are read: 403 Missing Access (kioku cannot
see the channel: no View Channel, or it left the server or thread), 404 Unknown Channel
(deleted). Each kind of refusal is logged once, as a warning naming what to fix. Without
Read Message History Discord refuses nothing: it answers with no messages
(developers/resources/message.mdx, Get Channel Messages).
"""

from __future__ import annotations

import discord
import structlog

from adapters.base import Inbound
from adapters.catch_up import CatchUpPlan, Cursor
from adapters.discord.inbound import to_inbound
from config.platform_settings import DiscordSettings

log = structlog.get_logger("kioku.discord")

# Discord's JSON error codes (developers/topics/opcodes-and-status-codes.mdx): what each
# refusal means for a history kioku reads, and what to do about it.
MEANING = {
    50001: "kioku cannot see the channel: give it View Channel there, or add it back",
    50013: "kioku lacks a permission there: give it View Channel and Read Message History",
    10003: "the channel no longer exists",
}


class HistoryReader:
    """Reads a plan's channels; remembers which kinds of refusal it has logged already."""

    def __init__(self, settings: DiscordSettings) -> None:
        self.settings = settings
        self._told: set[tuple[int, int]] = set()

    async def read(self, client: discord.Client, plan: CatchUpPlan) -> tuple[Inbound, ...]:
        """Every message after each cursor (at most `plan.max_messages` per cursor) that the
        live path would deliver, oldest first across all channels."""
        me = client.user
        if me is None:
            return ()
        found: list[Inbound] = []
        for cursor in plan.cursors:
            for message in await self._after(client, cursor, plan.max_messages):
                inbound = to_inbound(message, me, self.settings)
                if inbound is not None:
                    found.append(inbound)
        # Snowflakes rise with time: the id orders messages of different channels too.
        return tuple(sorted(found, key=lambda inbound: int(inbound.message_id or 0)))

    async def _after(
        self, client: discord.Client, cursor: Cursor, limit: int
    ) -> list[discord.Message]:
        channel_id = cursor.thread or cursor.chat
        if not (channel_id.isdigit() and cursor.message_id.isdigit()):
            log.warning("discord_cursor_unusable", channel=channel_id, message=cursor.message_id)
            return []
        try:
            channel = client.get_channel(int(channel_id)) or await client.fetch_channel(
                int(channel_id)
            )
            if not isinstance(channel, discord.abc.Messageable):
                return []
            after = discord.Object(int(cursor.message_id))
            return [
                message
                async for message in channel.history(after=after, limit=limit, oldest_first=True)
            ]
        except discord.HTTPException as refusal:
            self._refused(channel_id, refusal)
            return []

    def _refused(self, channel_id: str, refusal: discord.HTTPException) -> None:
        kind = (refusal.status, refusal.code)
        if kind in self._told:
            return
        self._told.add(kind)
        log.warning(
            "discord_history_refused",
            channel=channel_id,
            status=refusal.status,
            code=refusal.code,
            said=refusal.text,
            meaning=MEANING.get(refusal.code, "Discord would not give this channel's messages"),
        )
