"""discord.py's gateway connection with each frame read within limits, one at a time.

discord.py decodes every gateway frame with `json.loads` and runs the event's parser inside
its connection loop, so a frame it cannot decode or parse (nested past Python's recursion
limit, not JSON, a MESSAGE_CREATE whose fields have the wrong types) raises out of that loop
and ends the connection. `BoundedGateway` checks each frame's size and nesting before
discord.py decodes it, and drops a frame whose decoding or parsing fails with a log line;
the connection goes on with the next. The line is a warning (`discord_frame_malformed`) only
for what kioku reads: a frame that is no JSON, an event in `READ_EVENTS`, or a
MESSAGE_UPDATE that carries `content` (an edit). Any other event discord.py fails to parse
is logged at debug (`discord_event_unparsed`): Discord sends shapes older or newer than
discord.py's parsers (recorded: a link preview's partial MESSAGE_UPDATE without `type` or
`content`, TYPING_START and reactions whose member has no `flags`), and none of them is
kioku's business. discord.py records the frame's sequence number before it parses, so a
resume after a dropped frame does not replay it. A TEXT frame that is not UTF-8 never gets
here: aiohttp closes the socket (1007) and discord.py resumes the session.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import discord
import structlog

from inputs.limits import MAX_JSON_DEPTH, InputRefused, json_depth

log = structlog.get_logger("kioku.discord")

MAX_FRAME_CHARS = 8 * 1024 * 1024
"""One gateway frame at most (characters, decompressed). The largest real ones are a big
guild's GUILD_CREATE (up to 500 channels, 250 roles, its active threads: about a megabyte)
and a GUILD_MEMBERS_CHUNK (1,000 members: 438 KB in Discord4J's recorded
GuildMembersChunk.json); eight times that leaves room for what Discord adds."""

# What discord.py raises for a frame it cannot decode (JSONDecodeError, UnicodeDecodeError,
# zlib.error) or an event whose fields do not have the shape its parser expects.
FRAME_ERRORS = (ValueError, LookupError, TypeError, AttributeError, ArithmeticError, zlib.error)
PROBLEM_CHARS = 200

READ_EVENTS = frozenset(
    {
        "READY",  # kioku's own user, its guilds
        "GUILD_CREATE",  # a guild's channels, threads, roles and kioku's member (its roles)
        "GUILD_UPDATE",
        "GUILD_DELETE",
        "GUILD_ROLE_CREATE",
        "GUILD_ROLE_UPDATE",
        "GUILD_ROLE_DELETE",
        "GUILD_MEMBER_UPDATE",  # kioku's own member: the roles whose mention addresses it
        "CHANNEL_CREATE",
        "CHANNEL_UPDATE",
        "CHANNEL_DELETE",
        "THREAD_CREATE",  # a thread's parent channel: its chat
        "THREAD_UPDATE",
        "THREAD_DELETE",
        "THREAD_LIST_SYNC",
        "MESSAGE_CREATE",  # what people say
        "MESSAGE_DELETE",  # what they take back (adapters/discord/changes.py)
        "MESSAGE_DELETE_BULK",
        "INTERACTION_CREATE",  # slash commands (adapters/discord/commands.py)
    }
)
"""Dispatches whose data kioku uses, directly or through discord.py's state (Discord's
gateway events, developers/events/gateway-events.mdx); a failure to parse one of them loses
something kioku needed."""


class BoundedGateway(discord.gateway.DiscordWebSocket):
    """The client's websocket (discord.py makes one per connection from this class)."""

    async def received_message(self, msg: Any, /) -> None:
        try:
            if type(msg) is bytes:
                msg = self._decompressor.decompress(msg)
                if msg is None:
                    return  # a partial message: the rest comes in the next frames
            check_frame(msg)
        except FRAME_ERRORS as exc:
            log.warning("discord_frame_malformed", dispatch=None, problem=_problem(exc))
            return
        try:
            await super().received_message(msg)
        except FRAME_ERRORS as exc:
            event, edit = _event_name(msg)
            if event is None or event in READ_EVENTS or edit:
                log.warning("discord_frame_malformed", dispatch=event, problem=_problem(exc))
            else:
                log.debug("discord_event_unparsed", dispatch=event, problem=_problem(exc))


def _problem(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:PROBLEM_CHARS]


def _event_name(frame: str) -> tuple[str | None, bool]:
    """The dispatch name of a frame within limits that discord.py could not handle (decoded
    again: only a failed frame pays for it), or None: not JSON, not an object, no dispatch;
    and whether it is a MESSAGE_UPDATE with `content`, an edit kioku would have read."""
    try:
        payload = json.loads(frame)
    except ValueError:
        return None, False
    name = payload.get("t") if isinstance(payload, dict) else None
    if not isinstance(name, str):
        return None, False
    data = payload.get("d")
    return name, name == "MESSAGE_UPDATE" and isinstance(data, dict) and "content" in data


def check_frame(frame: str) -> None:
    """Refuse a frame over MAX_FRAME_CHARS or nested deeper than MAX_JSON_DEPTH."""
    if len(frame) > MAX_FRAME_CHARS:
        raise InputRefused(
            f"a gateway frame of {len(frame):,} characters is over the limit of {MAX_FRAME_CHARS:,}"
        )
    if json_depth(frame, stop_at=MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise InputRefused(f"a gateway frame nests deeper than {MAX_JSON_DEPTH} levels")
