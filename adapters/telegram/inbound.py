"""A Telegram update as the gateway's neutral `Inbound` (who, where, and whether kioku
was addressed), or an edit of one as `Changed`.

In groups kioku is addressed by an @mention of its username (or a text mention of the
bot), a reply to one of its messages, or `/command@itsname`; the mention is taken out
of the text. Forum topics are threads. A file on the message is an `Attachment`
(`files`), its caption the text; a sticker, which has no file kioku reads, is
named in `unreadable`. python-telegram-bot keeps whatever types
arrive, so a message whose fields kioku reads are of the wrong type is dropped with a
log line (`telegram_update_malformed`) instead of failing further in.
"""

from __future__ import annotations

import re

import structlog
from telegram import Message, MessageEntity, Update

from adapters.base import Changed, Inbound
from adapters.shapes import Malformed, require
from adapters.telegram.files import attachments
from adapters.telegram.files import check as check_files

log = structlog.get_logger("kioku.telegram")


def to_inbound(update: Update, bot_id: int, username: str) -> Inbound | None:
    """The message in `update`, or None for what kioku never answers (bots, service
    messages, updates that are not new messages)."""
    return _inbound(update.message, update.update_id, bot_id, username)


def to_changed(update: Update, bot_id: int, username: str) -> Changed | None:
    """The edit in `update` (an `edited_message`) as the gateway's `Changed`, or None for
    what is no edit of a message kioku could have stored. The edited message is read as
    `to_inbound` reads a new one (the same checks, the @mention taken out), so the chat,
    thread and id name the stored turn and the text is what that turn would now say."""
    edited = _inbound(update.edited_message, update.update_id, bot_id, username)
    if edited is None or edited.message_id is None:
        return None
    return Changed(edited.platform, edited.chat, edited.message_id, edited.text, edited.thread)


def _inbound(message: Message | None, update_id: int, bot_id: int, username: str) -> Inbound | None:
    user = message.from_user if message else None
    # Message.from is "Optional. Sender... empty for messages sent to channels" and absent
    # from Telegram's empty message (recorded: private-empty-message); a bot, including
    # an anonymous admin's GroupAnonymousBot (recorded: supergroup-anonymous-admin-forward)
    # and kioku itself, starts no conversation.
    if message is None or user is None or user.is_bot:
        return None
    try:
        _check(message)
    except Malformed as problem:
        log.warning("telegram_update_malformed", update_id=update_id, problem=str(problem))
        return None
    text = message.text or message.caption or ""
    files = attachments(message)
    unreadable = ("a sticker",) if message.sticker else ()
    if not text.strip() and not unreadable and not files:
        return None  # a service message: someone joined, a title changed
    is_direct = message.chat.type == "private"
    text, mentioned = _strip_mention(message, text, bot_id, username)
    replied = message.reply_to_message
    if replied is not None and replied.forum_topic_created is not None:
        # In a topic every message "replies" to the topic's first message (recorded:
        # forum-topic-message, forum-topic-edited-by-the-bot), even one the bot opened.
        replied = None
    author = replied.from_user if replied is not None else None
    to_bot = author is not None and author.id == bot_id
    command = _command_target(text)
    addressed = (
        is_direct
        or mentioned
        or to_bot
        or (command is not None and command.lower() == username.lower())
    )
    thread = message.message_thread_id if message.is_topic_message else None
    return Inbound(
        platform="telegram",
        chat=str(message.chat.id),
        sender=f"telegram:{user.id}",
        text=text,
        is_direct=is_direct,
        thread=str(thread) if thread else "",
        sender_name=user.full_name,
        addressed=addressed,
        message_id=str(message.message_id),
        reply_to_text=(replied.text or replied.caption) if replied else None,
        unreadable=unreadable,
        attachments=files,
    )


def _check(message: Message) -> None:
    """The fields kioku reads have the Bot API's types (core.telegram.org/bots/api, the
    Message, Chat, User and MessageEntity tables); optional ones may be absent or null."""
    if message.chat is None:  # Message.chat: Chat, required
        raise Malformed("Message.chat is missing")
    users = [message.from_user]
    require(int, message, "message_id")  # Message.message_id: Integer
    require(int, message, "message_thread_id", optional=True)  # Optional. Integer
    require(int, message.chat, "id")  # Chat.id: Integer
    require(str, message.chat, "type")  # Chat.type: String
    require(str, message, "text", "caption", optional=True)  # Optional. String
    if message.reply_to_message is not None:  # Optional. Message
        replied = message.reply_to_message
        users.append(replied.from_user)
        require(str, replied, "text", "caption", optional=True)
    for user in users:
        if user is not None:
            require(int, user, "id")  # User.id: Integer
            require(str, user, "first_name")  # User.first_name: String
            require(str, user, "last_name", "username", optional=True)  # Optional. String
    check_files(message)
    for entity in (*(message.entities or ()), *(message.caption_entities or ())):
        require(int, entity, "offset", "length")  # MessageEntity.offset, length: Integer
        require(str, entity, "type")  # MessageEntity.type: String (new types keep coming)
        if entity.user is not None:  # Optional. User, for "text_mention"
            require(int, entity.user, "id")


def _strip_mention(message: Message, text: str, bot_id: int, username: str) -> tuple[str, bool]:
    """Remove @thisbot from the text; whether it was there (as a mention entity)."""
    entities = message.entities if message.text else message.caption_entities
    username = username.lower()
    units = text.encode("utf-16-le", "surrogatepass")  # a lone surrogate is one unit too
    found = False
    for entity in sorted(entities or (), key=lambda e: e.offset, reverse=True):
        start, end = 2 * entity.offset, 2 * (entity.offset + entity.length)
        word = units[start:end].decode("utf-16-le", errors="replace")
        is_us = entity.type == MessageEntity.MENTION and word.lower() == f"@{username}"
        is_us = is_us or (
            entity.type == MessageEntity.TEXT_MENTION
            and entity.user is not None
            and entity.user.id == bot_id
        )
        if is_us:
            found = True
            if entity.type == MessageEntity.MENTION:
                units = units[:start] + units[end:]
    cleaned = units.decode("utf-16-le", errors="replace")
    return re.sub(r"[ \t]{2,}", " ", cleaned).strip() if found else text, found


def _command_target(text: str) -> str | None:
    """ "/cmd@thisbot ..." -> "thisbot"; "" for a bare /cmd; None when not a command."""
    match = re.match(r"/[A-Za-z][A-Za-z0-9_]*(?:@(\w+))?(?:\s|$)", text)
    if match is None:
        return None
    return match.group(1) or ""
