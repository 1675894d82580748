"""A Matrix room event as the gateway's `Inbound` (a message), or `Changed` (an edit,
`m.replace`, or a redaction, `m.room.redaction`).

A room of two members (kioku and one person) is a direct chat; in a bigger room kioku is
addressed by a mention (`m.mentions`, a matrix.to pill, its user id or display name in
the text) or a reply to one of its messages. A thread (`m.thread`) is its own
conversation, named by its root event. Notices (`m.notice`, what bots send) and kioku's
own events are not a person writing. An encrypted message matrix-nio could not decrypt
is never dropped in silence: it is recorded (for `kioku doctor`), its keys asked for,
and in a direct chat the sender is told to verify kioku's device or send it again.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import structlog
from nio import (
    AsyncClient,
    Event,
    MatrixRoom,
    MegolmEvent,
    RedactionEvent,
    RoomEncryptedMedia,
    RoomGetEventResponse,
    RoomMessageEmote,
    RoomMessageMedia,
    RoomMessageText,
    StickerEvent,
)

from adapters.base import Changed, Inbound
from adapters.matrix.files import attachment, caption

log = structlog.get_logger("kioku.matrix")

PLATFORM = "matrix"
THREAD = "m.thread"
EDIT = "m.replace"


def unreadable_notice(device_id: str) -> str:
    """What a person is told of an encrypted message kioku could not decrypt."""
    return (
        "your encrypted message (I had no key for it: verify my session "
        f"{device_id} in your client's security settings, or send the message again)"
    )


@dataclass(frozen=True)
class Me:
    """Who kioku is on the homeserver, to see itself mentioned or replied to."""

    user_id: str
    device_id: str
    display_name: str | None = None


Undecryptable = Callable[[MatrixRoom, MegolmEvent], Awaitable[None]]


def _relation(content: dict[str, Any]) -> dict[str, Any]:
    relation = content.get("m.relates_to")
    return relation if isinstance(relation, dict) else {}


def sent_at(event: Event) -> datetime:
    return datetime.fromtimestamp(event.server_timestamp / 1000, UTC)


def is_direct(room: MatrixRoom) -> bool:
    """A room of kioku and one other member (joined or invited)."""
    return room.member_count <= 2


class Reader:
    """Reads one client's room events; `undecryptable` is told of each one it could not read."""

    def __init__(self, client: AsyncClient, me: Me, undecryptable: Undecryptable) -> None:
        self.client = client
        self.me = me
        self.undecryptable = undecryptable

    async def event(self, room: MatrixRoom, event: Event) -> Inbound | Changed | None:
        if event.sender == self.me.user_id:
            return None
        if isinstance(event, RedactionEvent):
            return Changed(PLATFORM, room.room_id, event.redacts, None)
        if isinstance(event, MegolmEvent):
            await self.undecryptable(room, event)
            if not is_direct(room):
                return None
            return self._base(room, event, "", addressed=False, unreadable=True)
        if isinstance(event, StickerEvent):  # no file kioku reads: named, in a direct chat
            if not is_direct(room):
                return None
            inbound = self._base(room, event, "", addressed=False)
            return replace(inbound, unreadable=("a sticker",))
        if not isinstance(event, RoomMessageText | RoomMessageEmote | RoomMessageMedia) and (
            not isinstance(event, RoomEncryptedMedia)
        ):
            return None
        content: dict[str, Any] = event.source.get("content", {})
        relation = _relation(content)
        if relation.get("rel_type") == EDIT:
            edit = _edit(room, content, relation)
            if edit is not None and edit.text is not None:
                edit = replace(edit, text=self._unmentioned(edit.text, content)[0])
            return edit
        if isinstance(event, RoomMessageMedia | RoomEncryptedMedia):
            text, files = caption(event), (attachment(self.client, event),)
        else:
            # A leading space keeps a client from taking "/help" for its own command.
            text, files = event.body.lstrip(), ()
        text, mentioned = self._unmentioned(text, content)
        replied_to, replied_text = await self._replied(room, relation)
        inbound = self._base(room, event, text, addressed=mentioned or replied_to)
        return replace(inbound, reply_to_text=replied_text, attachments=files)

    def _base(
        self,
        room: MatrixRoom,
        event: Event,
        text: str,
        *,
        addressed: bool,
        unreadable: bool = False,
    ) -> Inbound:
        content: dict[str, Any] = event.source.get("content", {})
        relation = _relation(content)
        thread = relation.get("event_id") if relation.get("rel_type") == THREAD else ""
        direct = is_direct(room)
        return Inbound(
            platform=PLATFORM,
            chat=room.room_id,
            sender=f"{PLATFORM}:{event.sender}",
            text=text,
            is_direct=direct,
            thread=thread if isinstance(thread, str) else "",
            sender_name=room.user_name(event.sender),
            addressed=addressed and not direct,
            message_id=event.event_id,
            unreadable=(unreadable_notice(self.me.device_id),) if unreadable else (),
            received_at=sent_at(event),
        )

    def _unmentioned(self, text: str, content: dict[str, Any]) -> tuple[str, bool]:
        """The text without kioku's mention in it, and whether kioku was mentioned."""
        me = self.me
        mentions = content.get("m.mentions")
        users = mentions.get("user_ids") if isinstance(mentions, dict) else None
        mentioned = isinstance(users, list) and me.user_id in users
        formatted = content.get("formatted_body")
        if isinstance(formatted, str) and f"matrix.to/#/{me.user_id}" in formatted:
            mentioned = True
        names = [re.escape(me.user_id)]
        if me.display_name:
            names.append(re.escape(me.display_name))
        pattern = re.compile(rf"(?<![\w@])(?:{'|'.join(names)})(?![\w])[:,]?", re.IGNORECASE)
        cleaned, found = pattern.subn("", text)
        if not found and not mentioned:
            return text, False
        return re.sub(r"[ \t]{2,}", " ", cleaned).strip(), True

    async def _replied(self, room: MatrixRoom, relation: dict[str, Any]) -> tuple[bool, str | None]:
        """Whether the message answers one of kioku's, and the text it answers. A thread's
        `m.in_reply_to` marked `is_falling_back` is no reply, only where it sits."""
        reply = relation.get("m.in_reply_to")
        if not isinstance(reply, dict) or relation.get("is_falling_back") is True:
            return False, None
        event_id = reply.get("event_id")
        if not isinstance(event_id, str):
            return False, None
        answer = await self.client.room_get_event(room.room_id, event_id)
        if not isinstance(answer, RoomGetEventResponse):
            log.info("matrix_reply_target_unknown", room=room.room_id, error=str(answer))
            return False, None
        replied = answer.event
        if isinstance(replied, MegolmEvent):
            decrypted = self.client.decrypt_event(replied)
            replied = decrypted if isinstance(decrypted, Event) else replied
        body = getattr(replied, "body", None)
        return replied.sender == self.me.user_id, body if isinstance(body, str) else None


def _edit(room: MatrixRoom, content: dict[str, Any], relation: dict[str, Any]) -> Changed | None:
    """An edit names its message by `event_id`; its new text is `m.new_content`'s body."""
    new = content.get("m.new_content")
    target = relation.get("event_id")
    if not isinstance(new, dict) or not isinstance(target, str):
        return None
    body = new.get("body")
    if not isinstance(body, str):
        return None
    return Changed(PLATFORM, room.room_id, target, body)
