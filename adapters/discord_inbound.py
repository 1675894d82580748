"""Discord messages as `Inbound`: who spoke, where, whether to kioku, and what it cannot read.

Identity is `discord:<user id>`. A DM's chat is its DM channel; a guild channel's chat
is the channel; a thread is its own conversation: chat = the parent channel, thread =
the thread (the gateway keys group sessions by platform, chat and thread). Each file
is an `Attachment` fetched with discord.py's own `Attachment.read()`; a sticker, which
has no file kioku reads, is named in `unreadable`. A message whose texts or names are of
the wrong type is dropped with a log line.
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
from config.settings import DiscordSettings

log = structlog.get_logger("kioku.discord")

PLATFORM = "discord"
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
    thread = ""
    chat = str(channel.id)
    if guild is not None:
        if settings.guilds and str(guild.id) not in settings.guilds:
            return None
        if isinstance(channel, discord.Thread):
            chat, thread = str(channel.parent_id), str(channel.id)
        if settings.channels and not {chat, thread} & set(settings.channels):
            return None
    roles = _own_roles(guild)
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
        attachments=tuple(_attachment(file) for file in message.attachments),
        received_at=message.created_at,
    )


def _check(message: discord.Message) -> None:
    """The fields kioku reads have Discord's types: discord.py converts ids, not texts."""
    if not hasattr(message, "author"):  # discord.py leaves it unset if it cannot build it
        raise Malformed("the message has no author discord.py could read")
    try:
        message.created_at  # noqa: B018 - its time comes from the id
    except (ValueError, OverflowError, OSError):
        raise Malformed(f"the id {message.id} is no snowflake of a time") from None
    replied = _replied(message)
    require(str, message, "content")
    if replied is not None:
        require(str, replied, "content")
    people = [message.author, *message.mentions, *([replied.author] if replied else [])]
    for person in people:
        require(str, person, "name")
        require(str, person, "global_name", optional=True)
        if isinstance(person, discord.Member):
            require(str, person, "nick", optional=True)
    for attachment in message.attachments:
        require(str, attachment, "filename")
        require(int, attachment, "size")
        require(str, attachment, "content_type", optional=True)
        require(int, attachment, "width", "height", optional=True)
        require(int, attachment.flags, "value")
        duration = attachment.duration
        if duration is not None and (
            not isinstance(duration, int | float) or isinstance(duration, bool)
        ):
            raise Malformed(f"Attachment.duration is {type(duration).__name__}, not a number")


def readable_text(message: discord.Message, bot_id: int, bot_roles: set[int]) -> str:
    """The text without kioku's own mention; other people's mentions become @names."""
    text = re.sub(rf"<@!?{bot_id}>[ \t]?", "", message.content)
    for role in bot_roles:
        text = re.sub(rf"<@&{role}>[ \t]?", "", text)
    for user in message.mentions:
        if user.id != bot_id:
            # Plain replacement: a name is not a template (re.sub would read its backslashes).
            name = f"@{user.display_name}"
            text = text.replace(f"<@{user.id}>", name).replace(f"<@!{user.id}>", name)
    return text.strip()


def unreadable(message: discord.Message) -> tuple[str, ...]:
    """What is on the message with no file kioku reads: stickers."""
    return ("a sticker",) if message.stickers else ()


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
