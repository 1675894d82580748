"""A person's phone on the test homeserver: a real matrix-nio client with encryption on,
syncing in the background, that opens rooms, writes, and waits for kioku's answers.

Every room event it is given is kept in `seen` (decrypted where it could be; each with
the JSON Synapse sent as its `source`), so a test can wait for kioku's reply.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import aiohttp
from nio import (
    AsyncClient,
    AsyncClientConfig,
    Event,
    InviteMemberEvent,
    MatrixRoom,
    RoomCreateResponse,
    RoomSendResponse,
    TypingNoticeEvent,
    UploadResponse,
)

from tests.helpers.synapse import Account

WAIT = 60.0
ENCRYPTED = [
    {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}
]


@dataclass(frozen=True)
class Seen:
    room: str
    event: Event


class Phone:
    """One person's device; `async with` syncs from start to end."""

    def __init__(self, homeserver: str, account: Account, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.account = account
        config = AsyncClientConfig(encryption_enabled=True, store_sync_tokens=False)
        self.client = AsyncClient(
            homeserver, account.user_id, store_path=str(folder), config=config
        )
        self.client.restore_login(account.user_id, account.device_id, account.access_token)
        self.seen: list[Seen] = []
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self.client.add_event_callback(self._on_event, Event)
        self.client.add_event_callback(self._on_invite, InviteMemberEvent)
        self.typing: list[tuple[str, list[str]]] = []
        self.client.add_ephemeral_callback(self._on_typing, TypingNoticeEvent)

    async def __aenter__(self) -> Phone:
        self._task = asyncio.create_task(
            self.client.sync_forever(timeout=1000, full_state=True), name="phone-sync"
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.client.close()

    async def _on_event(self, room: MatrixRoom, event: Event) -> None:
        async with self._changed:
            self.seen.append(Seen(room.room_id, event))
            self._changed.notify_all()

    async def _on_typing(self, room: MatrixRoom, event: TypingNoticeEvent) -> None:
        self.typing.append((room.room_id, list(event.users)))

    async def _on_invite(self, room: MatrixRoom, event: InviteMemberEvent) -> None:
        """A person accepts every invite (kioku's invites are what the tests look at)."""
        if event.state_key == self.account.user_id and event.membership == "invite":
            await self.client.join(room.room_id)

    async def until(self, check: Callable[[], Any], within: float = WAIT) -> Any:
        """The first true value of `check()`, asked after each sync."""
        deadline = time.monotonic() + within
        async with self._changed:
            while not (found := check()):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"not seen within {within} s; seen: {self.texts()}")
                try:
                    await asyncio.wait_for(self._changed.wait(), left)
                except TimeoutError:
                    continue
            return found

    def texts(self) -> list[tuple[str, str]]:
        return [
            (s.event.sender, getattr(s.event, "body", type(s.event).__name__)) for s in self.seen
        ]

    async def synced_room(self, room_id: str) -> MatrixRoom:
        room: MatrixRoom = await self.until(lambda: self.client.rooms.get(room_id))
        return room

    async def open_room(self, *invite: str, encrypted: bool, name: str | None = None) -> str:
        """A new room with these people invited; returns once all of them have joined."""
        answer = await self.client.room_create(
            name=name,
            is_direct=name is None,
            invite=list(invite),
            initial_state=ENCRYPTED if encrypted else [],
        )
        assert isinstance(answer, RoomCreateResponse), answer
        room = await self.synced_room(answer.room_id)
        await self.until(
            lambda: all(u in room.users and u not in room.invited_users for u in invite)
        )
        return answer.room_id

    async def say(self, room_id: str, text: str, **extra: Any) -> str:
        """Send a text message (with more content fields: relations, mentions); its event id."""
        return await self.send(room_id, {"msgtype": "m.text", "body": text, **extra})

    async def send(
        self, room_id: str, content: dict[str, Any], kind: str = "m.room.message"
    ) -> str:
        answer = await self.client.room_send(room_id, kind, content, ignore_unverified_devices=True)
        assert isinstance(answer, RoomSendResponse), answer
        return answer.event_id

    async def send_raw(self, room_id: str, kind: str, content: dict[str, Any]) -> str:
        """Send an event as it is, never encrypted by the phone (an `m.room.encrypted` one
        made by hand stays what it is)."""
        url = f"{self.client.homeserver}/_matrix/client/v3/rooms/{room_id}/send/{kind}/{uuid4()}"
        headers = {"Authorization": f"Bearer {self.account.access_token}"}
        async with (
            aiohttp.ClientSession() as http,
            http.put(url, json=content, headers=headers) as answer,
        ):
            sent = await answer.json()
            assert answer.status == 200, sent
        return str(sent["event_id"])

    async def upload(self, data: bytes, mime: str, name: str, *, encrypt: bool) -> tuple[str, Any]:
        """Upload a file; its mxc URI and, encrypted, the keys to put in the event's `file`."""
        answer, keys = await self.client.upload(
            lambda *_: data, content_type=mime, filename=name, encrypt=encrypt, filesize=len(data)
        )
        assert isinstance(answer, UploadResponse), answer
        return answer.content_uri, keys

    def said_by(self, sender: str, room_id: str) -> list[Event]:
        """The messages (events with a body) `sender` sent in the room, as seen so far."""
        return [
            s.event
            for s in self.seen
            if s.room == room_id and s.event.sender == sender and hasattr(s.event, "body")
        ]

    async def reply_from(self, sender: str, room_id: str, after: int) -> Event:
        """The first message `sender` sent in the room among the events seen from `after` on."""

        def found() -> Event | None:
            for seen in self.seen[after:]:
                if (
                    seen.room == room_id
                    and seen.event.sender == sender
                    and hasattr(seen.event, "body")
                ):
                    return seen.event
            return None

        event: Event = await self.until(found)
        return event
