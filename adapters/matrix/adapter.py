"""Matrix through matrix-nio: /sync in, `m.room.message` out, end-to-end encrypted where
the room is.

The login, the device's keys and the sync token are kept in `$KIOKU_HOME/matrix/`
(`keep`), so a restart is the same device (every room key still held) reading on from
where it stopped. Replies are sent to every device in an encrypted room, verified or not
(kioku trusts the people its owner lets in, not their devices' cross-signing); rate
limits (`M_LIMIT_EXCEEDED`) are waited out for their `retry_after_ms` by matrix-nio.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import structlog
from nio import (
    AsyncClient,
    ErrorResponse,
    MatrixRoom,
    MegolmEvent,
    ProfileGetDisplayNameResponse,
    RoomCreateResponse,
    RoomSendResponse,
)
from nio.exceptions import LocalProtocolError

from adapters.base import Adapter, Address, EventHandler, Outbound
from adapters.catch_up import CatchUpSource, no_catch_up
from adapters.matrix.inbound import Me, Reader, is_direct
from adapters.matrix.keep import matrix_dir, note_undecryptable
from adapters.matrix.login import sign_in
from adapters.matrix.outbound import content, pieces
from adapters.matrix.sync import Syncing
from config.platform_settings import MatrixSettings

log = structlog.get_logger("kioku.matrix")

TYPING_FOR_MS = 30_000
TYPING_EVERY = 20.0
TYPING_AT_MOST = 600.0
NEW_ROOM_WITHIN = 60.0


class SendFailed(RuntimeError):
    """The homeserver refused a reply."""


class MatrixAdapter(Adapter):
    name = "matrix"

    def __init__(
        self,
        deliver: EventHandler,
        settings: MatrixSettings,
        home: Path,
        *,
        owners: Sequence[str] = (),
        catch_up: CatchUpSource = no_catch_up,
    ) -> None:
        super().__init__(deliver, catch_up)
        if settings.user_id is None:
            raise ValueError("the Matrix adapter needs KIOKU_MATRIX__USER_ID")
        self.settings = settings
        self.home = home
        self.owners = frozenset(owners)
        self._client: AsyncClient | None = None
        self._syncing: Syncing | None = None
        self._typing: dict[str, asyncio.Task[None]] = {}

    @property
    def client(self) -> AsyncClient:
        if self._client is None:
            raise RuntimeError("the Matrix adapter is not started")
        return self._client

    @property
    def syncing(self) -> Syncing:
        if self._syncing is None:
            raise RuntimeError("the Matrix adapter is not started")
        return self._syncing

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        started = datetime.now(UTC)
        plan = await self.catch_up()
        folder = await asyncio.to_thread(matrix_dir, self.home)
        client = await sign_in(self.settings, folder)
        self._client = client
        try:
            name = await client.get_displayname()
            display = name.displayname if isinstance(name, ProfileGetDisplayNameResponse) else None
            me = Me(client.user_id, client.device_id or "", display)
            reader = Reader(client, me, self._undecryptable)
            self._syncing = Syncing(
                client,
                folder,
                reader,
                self.deliver,
                plan=plan,
                started=started,
                welcome=self._welcome,
                poll_timeout=self.settings.poll_timeout,
                failed=self.failed,
            )
            await self._syncing.first()
        except BaseException:
            await self.stop()
            raise
        log.info("matrix_connected", user=me.user_id, device=me.device_id)
        self._syncing.start()

    async def stop(self) -> None:
        if self._syncing is not None:
            await self._syncing.stop()
            self._syncing = None
        tasks = list(self._typing.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._typing.clear()
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _welcome(self, inviter: str) -> bool:
        """An invite is accepted by the DM policy: from anyone under `pairing` and `open`
        (a stranger then gets a pairing code), from `allow` and the owner under
        `allowlist`, from the owner alone under `disabled`."""
        identity = f"matrix:{inviter}"
        policy = self.settings.dm_policy
        if identity in self.owners or policy in ("pairing", "open"):
            return True
        return policy == "allowlist" and identity in self.settings.allow

    async def _undecryptable(self, room: MatrixRoom, event: MegolmEvent) -> None:
        """Said in the log and kept for `kioku doctor`; the keys are asked of the sender's
        devices, which send them if they trust kioku's device."""
        log.warning(
            "matrix_message_undecryptable",
            room=room.room_id,
            sender=event.sender,
            session=event.session_id,
            hint="ask the sender to verify kioku's device, or to send the message again",
        )
        folder = matrix_dir(self.home)
        await asyncio.to_thread(
            note_undecryptable, folder, room.room_id, event.sender, event.event_id, event.session_id
        )
        with contextlib.suppress(LocalProtocolError):  # its key was asked for already
            await self.client.request_room_key(event)

    # -- sending --------------------------------------------------------------------------------

    async def send(self, message: Outbound) -> None:
        address = message.address
        self._stop_typing(address.chat)
        room = self.client.rooms.get(address.chat)
        direct = room is not None and is_direct(room)
        for index, piece in enumerate(pieces(message.text)):
            body = content(piece, address, first=index == 0, direct=direct)
            answer = await self.client.room_send(
                address.chat, "m.room.message", body, ignore_unverified_devices=True
            )
            if not isinstance(answer, RoomSendResponse):
                raise SendFailed(f"the homeserver refused the reply: {answer}")
        await self._typing_off(address.chat)

    async def working(self, address: Address) -> None:
        self._stop_typing(address.chat)
        self._typing[address.chat] = asyncio.create_task(
            self._type(address.chat), name=f"matrix-typing-{address.chat}"
        )

    async def _type(self, room_id: str) -> None:
        """Keep "typing…" shown until the reply goes out (the task is cancelled then)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + TYPING_AT_MOST
        while loop.time() < until:
            answer = await self.client.room_typing(room_id, True, timeout=TYPING_FOR_MS)
            if isinstance(answer, ErrorResponse):
                log.info("matrix_typing_failed", room=room_id, error=str(answer))
            await asyncio.sleep(TYPING_EVERY)
        self._typing.pop(room_id, None)

    def _stop_typing(self, room_id: str) -> None:
        task = self._typing.pop(room_id, None)
        if task is not None:
            task.cancel()

    async def _typing_off(self, room_id: str) -> None:
        answer = await self.client.room_typing(room_id, False)
        if isinstance(answer, ErrorResponse):
            log.info("matrix_typing_failed", room=room_id, error=str(answer))

    async def direct_chat(self, user: str) -> str:
        """The direct room with `user` (`@name:server`): the one kioku shares with them
        alone, else a new encrypted one it invites them to."""
        for room in self.client.rooms.values():
            if is_direct(room) and user in room.users:
                return room.room_id
        answer = await self.client.room_create(
            is_direct=True,
            invite=[user],
            initial_state=[
                {
                    "type": "m.room.encryption",
                    "state_key": "",
                    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
                }
            ],
        )
        if not isinstance(answer, RoomCreateResponse):
            raise SendFailed(f"could not open a direct room with {user}: {answer}")
        async with asyncio.timeout(NEW_ROOM_WITHIN):
            while answer.room_id not in self.client.rooms:  # known from the next sync on
                await self.syncing.synced.wait()
        return answer.room_id
