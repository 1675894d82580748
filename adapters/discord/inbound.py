"""Discord messages as `Inbound`: who spoke, where, whether to kioku, and what it cannot read.

Identity is `discord:<user id>`. A DM's chat is its DM channel; a guild channel's chat
is the channel; a thread is its own conversation: chat = the parent channel, thread =
the thread (the gateway keys group sessions by platform, chat and thread). Each file
is an `Attachment` fetched with discord.py's own `Attachment.read()`; a sticker, which
has no file kioku reads, is named in `unreadable`. A forwarded message (Discord's
`message_snapshots`: the forward itself has no content) is read as its quoted text and its
files. A message whose texts or names are of the wrong type is dropped with a log line.

Each check in `_check` is on a field kioku reads, against Discord's schema (developers/
resources/message.mdx and user.mdx, the OpenAPI spec discord/discord-api-spec) and what
discord.py keeps of it: nullable fields may be None, anything kioku does not read may be
absent, null or unknown.
"""

from __future__ import annotations

import re

import aiohttp
import discord
import structlog

from adapters.base import (
    Attachment,
    AttachmentKind,
    Fetch,
    FetchFailed,
    Inbound,
    TooLarge,
    kind_by_type,
)
from adapters.shapes import Malformed, require
from config.platform_settings import DiscordSettings

log = structlog.get_logger("kioku.discord")

PLATFORM = "discord"
EMPTY = "an empty message"
EMPTY_IN_SERVER = (
    "an empty message (Discord sends a bot the text of server messages that do not mention "
    "it only with the Message Content intent)"
)
# Message types a person writes; joins, pins, thread announcements and the like are not.
_SPOKEN = (discord.MessageType.default, discord.MessageType.reply)


def to_inbound(
    message: discord.Message, me: discord.ClientUser, settings: DiscordSettings
) -> Inbound | None:
    """The message as kioku sees it, or None for bots, system messages and places not allowed."""
    try:
        _check(message)
    except Malformed as problem:
        log.warning("discord_message_malformed", message=str(message.id), problem=str(problem))
        return None
    author = message.author
    if author.id == me.id or author.bot or message.webhook_id is not None:
        return None
    if message.type not in _SPOKEN:
        return None
    guild = message.guild
    channel = message.channel
    if guild is None and not isinstance(channel, discord.DMChannel):
        # A guild discord.py holds no state for (left, or not yet created): not a DM, and
        # neither the allowlist nor kioku's roles can be checked.
        return None
    chat, thread = str(channel.id), ""
    if guild is not None:
        place = guild_place(channel, guild.id, settings)
        if place is None:
            return None
        chat, thread = place
    roles = _own_roles(guild)
    files = _attachments(message)
    replied = _replied(message)
    addressed = guild is None or (
        any(user.id == me.id for user in message.mentions)
        or any(role.id in roles for role in message.role_mentions)
        or (replied is not None and replied.author.id == me.id)
    )
    return Inbound(
        PLATFORM,
        chat,
        f"{PLATFORM}:{author.id}",
        readable_text(message, me.id, roles),
        guild is None,
        thread=thread,
        sender_name=author.display_name,
        addressed=addressed,
        message_id=str(message.id),
        reply_to_text=replied.content if replied is not None else None,
        unreadable=unreadable(message),
        attachments=tuple(_attachment(file) for file in files),
        received_at=message.created_at,
    )


def guild_place(
    channel: discord.abc.Snowflake, guild_id: int, settings: DiscordSettings
) -> tuple[str, str] | None:
    """The chat and thread of a server channel (a thread is its parent channel's chat, and
    its own thread), or None where kioku does not listen (`guilds`, `channels`)."""
    if settings.guilds and str(guild_id) not in settings.guilds:
        return None
    chat, thread = str(channel.id), ""
    if isinstance(channel, discord.Thread):
        chat, thread = str(channel.parent_id), str(channel.id)
    if settings.channels and not {chat, thread} & set(settings.channels):
        return None
    return chat, thread


def _check(message: discord.Message) -> None:
    """The fields kioku reads have Discord's types: discord.py converts ids, not texts."""
    # `author` is required; discord.py leaves it unset when it cannot build the user.
    if not hasattr(message, "author"):
        raise Malformed("the message has no author discord.py could read")
    try:
        message.created_at  # noqa: B018 - a snowflake id holds its time
    except (ValueError, OverflowError, OSError):
        raise Malformed(f"the id {message.id} is no snowflake of a time") from None
    replied = _replied(message)
    # `content`: string, "" without the Message Content intent or for a forward.
    require(str, message, "content")
    if replied is not None:
        require(str, replied, "content")
    for snapshot in message.message_snapshots:
        require(str, snapshot, "content")
    people = [message.author, *message.mentions, *([replied.author] if replied else [])]
    for person in people:
        require(str, person, "name")  # user `username`: string
        require(str, person, "global_name", optional=True)  # `?string`: null if never set
        if isinstance(person, discord.Member):
            require(str, person, "nick", optional=True)  # member `nick?`: `?string`
    for attachment in _attachments(message):
        require(str, attachment, "filename")  # string
        require(int, attachment, "size")  # integer
        require(str, attachment, "content_type", optional=True)  # `content_type?`: string
        require(int, attachment, "width", "height", optional=True)  # `?integer`, images only
        require(int, attachment.flags, "value")  # `flags?`: integer, 0 when absent
        duration = attachment.duration  # `duration_secs?`: float, voice messages only
        if duration is not None and (
            not isinstance(duration, int | float) or isinstance(duration, bool)
        ):
            raise Malformed(f"Attachment.duration is {type(duration).__name__}, not a number")


def readable_text(message: discord.Message, bot_id: int, bot_roles: set[int]) -> str:
    """The text without kioku's own mention; other people's mentions become @names; a
    forwarded message follows, quoted."""
    text = re.sub(rf"<@!?{bot_id}>[ \t]?", "", message.content)
    for role in bot_roles:
        text = re.sub(rf"<@&{role}>[ \t]?", "", text)
    for user in message.mentions:
        if user.id != bot_id:
            # Plain replacement: a name is not a template (re.sub would read its backslashes).
            name = f"@{user.display_name}"
            text = text.replace(f"<@{user.id}>", name).replace(f"<@!{user.id}>", name)
    parts = [text.strip()] if text.strip() else []
    for snapshot in message.message_snapshots:
        if snapshot.content.strip():
            quoted = "\n".join(f"> {line}" for line in snapshot.content.strip().splitlines())
            parts.append(f"Forwarded message:\n{quoted}")
    return "\n\n".join(parts)


def unreadable(message: discord.Message) -> tuple[str, ...]:
    """What is on the message (or the one it forwards) with no file kioku reads: stickers;
    or the message itself when it came with no text and no files. Discord leaves a server
    message's text and files out for a bot without the Message Content intent
    (developers/events/gateway.mdx, Message Content Intent): a reply to kioku that does not
    ping it arrives like that."""
    snapshots = message.message_snapshots
    if message.stickers or any(snapshot.stickers for snapshot in snapshots):
        return ("a sticker",)
    said = [message.content, *(snapshot.content for snapshot in snapshots)]
    if any(text.strip() for text in said) or _attachments(message):
        return ()
    return (EMPTY,) if message.guild is None else (EMPTY_IN_SERVER,)


def _attachments(message: discord.Message) -> list[discord.Attachment]:
    """The message's files, then those of the message it forwards."""
    forwarded = (file for snapshot in message.message_snapshots for file in snapshot.attachments)
    return [*message.attachments, *forwarded]


def _attachment(file: discord.Attachment) -> Attachment:
    mime = (file.content_type or "application/octet-stream").partition(";")[0].strip()
    return Attachment(
        kind=_kind(file, mime),
        name=file.filename,
        mime=mime,
        size=file.size,
        fetch=_fetcher(file),
        duration=float(file.duration) if file.duration is not None else None,
        width=file.width,
        height=file.height,
    )


def _kind(file: discord.Attachment, mime: str) -> AttachmentKind:
    if file.is_voice_message():
        return "voice"
    return kind_by_type(mime, file.filename)


def _fetcher(file: discord.Attachment) -> Fetch:
    """The declared size is checked first; `read()` then downloads through discord.py's
    HTTP session, which reads the whole answer, so its length is checked after."""

    async def fetch(limit: int) -> bytes:
        if file.size > limit:
            raise TooLarge(f"the file is {file.size:,} bytes, over the limit of {limit:,}")
        try:
            data = await file.read()
        except discord.HTTPException as exc:
            raise FetchFailed(f"Discord would not hand the file over ({exc!s:.200})") from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise FetchFailed(f"the download from Discord failed ({exc!r:.200})") from None
        if len(data) > limit:
            raise TooLarge(f"the file is {len(data):,} bytes, over the limit of {limit:,}")
        return data

    return fetch


def _own_roles(guild: discord.Guild | None) -> set[int]:
    """The roles kioku holds in `guild` (not @everyone): mentioning one addresses kioku."""
    if guild is None or guild.me is None:
        return set()
    return {role.id for role in guild.me.roles if not role.is_default()}


def _replied(message: discord.Message) -> discord.Message | None:
    reference = message.reference
    if reference is None:
        return None
    resolved = reference.resolved or reference.cached_message
    return resolved if isinstance(resolved, discord.Message) else None
