"""The /sync loop: room events to the gateway, invites answered by the DM policy, the
device's keys kept in step, and the sync token moved only past what the gateway has.

Matrix keeps every room's history and a sync token says where a client left off, so
kioku restarted with its kept token is given what was sent while it was away: a message
dated before the adapter started is a missed one, handed over with the others of its
answer as one `Missed` (as Telegram's are). The first start of all has no token: the
rooms' old history is not kioku's to answer, and is skipped. Each sync after a restart
asks for the rooms' full state too: matrix-nio keeps no room state on disk, and without
it would not know which rooms are encrypted or who is in them.

A network error backs off and syncs again; a token the homeserver no longer accepts
is reported (`failed`) for the supervisor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import structlog
from nio import (
    AsyncClient,
    InviteMemberEvent,
    KeysClaimError,
    KeysQueryError,
    KeysUploadError,
    SyncError,
    SyncResponse,
)

from adapters.base import Event, EventHandler, Inbound, Missed
from adapters.catch_up import CatchUpPlan
from adapters.matrix.inbound import PLATFORM, Reader
from adapters.matrix.keep import save_sync_token, sync_token
from adapters.matrix.login import LoginFailed
from plumbing.backoff import Backoff

log = structlog.get_logger("kioku.matrix")

CLOCK_SKEW = timedelta(seconds=2)
TIMELINE_LIMIT = 50
"""Events of one room one sync gives at most; a catch-up of more reads the newest."""

Welcome = Callable[[str], bool]
"""Whether an invite from this Matrix user is accepted (the platform's DM policy)."""


class Syncing:
    """The loop, from `start` to `stop`, as one named task."""

    def __init__(
        self,
        client: AsyncClient,
        folder: Path,
        reader: Reader,
        deliver: EventHandler,
        *,
        plan: CatchUpPlan,
        started: datetime,
        welcome: Welcome,
        poll_timeout: float,
        failed: Callable[[BaseException], None],
    ) -> None:
        self.client = client
        self.folder = folder
        self.reader = reader
        self.deliver = deliver
        self.plan = plan
        self.welcome = welcome
        self.poll_ms = int(poll_timeout * 1000)
        self.failed = failed
        self._missed_before = started - CLOCK_SKEW
        self._pass_due = plan.enabled
        self._task: asyncio.Task[None] | None = None
        self._first: SyncResponse | None = None
        self.token: str | None = None
        self.synced = asyncio.Event()
        """Set after each sync whose events the gateway has: for whoever waits on one."""

    async def first(self) -> None:
        """The first sync of this start, before `start` returns: the rooms, their state
        and members are known from then on (a reply can be sent). What it brought is
        handed to the gateway by the loop, once the adapter serves."""
        self.token = await asyncio.to_thread(sync_token, self.folder)
        # What was missed is read up to `gateway.catch_up.max_messages` a room, as on the
        # other platforms; later syncs take what one sync gives.
        limit = self.plan.max_messages if self.plan.enabled else TIMELINE_LIMIT
        self._first = await self._fetch(wait_ms=0, full_state=True, limit=limit)
        await self._keys()

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="matrix-sync")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _loop(self) -> None:
        backoff = Backoff(base=1.0, cap=60.0)
        while True:
            try:
                if self._first is not None:
                    # The first start of all has no token: old history is not kioku's.
                    await self._settle(self._first, history=self.token is not None, first=True)
                    self._first = None
                else:
                    answer = await self._fetch(wait_ms=self.poll_ms, full_state=False)
                    await self._settle(answer, history=True)
                    await self._keys()
                backoff.reset()
            except LoginFailed as exc:
                self.failed(exc)
                return
            except Exception as exc:  # a network error, the homeserver's, the gateway's
                delay = backoff.next_delay()
                log.warning("matrix_sync_failed", error=repr(exc), retry_in=round(delay, 1))
                await asyncio.sleep(delay)

    async def _fetch(
        self, *, wait_ms: int, full_state: bool, limit: int = TIMELINE_LIMIT
    ) -> SyncResponse:
        answer = await self.client.sync(
            timeout=wait_ms,
            since=self.token,
            full_state=full_state,
            sync_filter={"room": {"timeline": {"limit": limit}}},
        )
        if isinstance(answer, SyncError) or not isinstance(answer, SyncResponse):
            if answer.status_code == "M_UNKNOWN_TOKEN":
                raise LoginFailed(f"the homeserver no longer accepts kioku's token: {answer}")
            raise SyncFailed(str(answer))
        return answer

    async def _settle(self, answer: SyncResponse, *, history: bool, first: bool = False) -> None:
        """Answer the invites, hand the events over, and only then move the token past
        them: a kioku stopped in between is given them again (the gateway drops what it
        already has)."""
        await self._invites(answer)
        if history:
            await self._take(answer, first=first)
        self.token = answer.next_batch
        await asyncio.to_thread(save_sync_token, self.folder, answer.next_batch)
        self.synced.set()
        self.synced.clear()

    async def _take(self, answer: SyncResponse, *, first: bool) -> None:
        """Hand the answer's room events to the gateway: the missed messages first, as one
        `Missed` (also when none were, on the catch-up pass), then the rest in order.
        Everything the first sync brings was sent before kioku listened, however close to
        its start: missed; later, a message dated before the start is."""
        read: list[Event] = []
        for room_id, info in answer.rooms.join.items():
            room = self.client.rooms.get(room_id)
            if room is None:
                continue
            if info.timeline.limited and self.token is not None:
                # More happened than one sync gives: the older events are not read.
                log.warning("matrix_timeline_gap", room=room_id, read=len(info.timeline.events))
            for event in info.timeline.events:
                try:
                    found = await self.reader.event(room, event)
                except Exception:
                    log.exception("matrix_event_failed", room=room_id)
                    continue
                if found is not None:
                    read.append(found)
        missed = [e for e in read if isinstance(e, Inbound) and self._missed(e, first)]
        if missed or self._pass_due:
            await self.deliver(Missed(PLATFORM, tuple(missed)))
            self._pass_due = False
            log.info("matrix_caught_up", missed=len(missed))
        for event in read:
            if not (isinstance(event, Inbound) and self._missed(event, first)):
                await self.deliver(event)

    def _missed(self, inbound: Inbound, first: bool) -> bool:
        return self.plan.enabled and (first or inbound.received_at < self._missed_before)

    async def _invites(self, answer: SyncResponse) -> None:
        """Join the rooms kioku is invited to by someone the DM policy lets in; decline
        the others (the inviter learns nothing more than a refused invite)."""
        me = self.client.user_id
        for room_id, info in answer.rooms.invite.items():
            inviter = _inviter(info.invite_state, me)
            if inviter is not None and self.welcome(inviter):
                joined: Any = await self.client.join(room_id)
                log.info("matrix_invite_accepted", room=room_id, ok=not _failed(joined))
            else:
                await self.client.room_leave(room_id)
                log.info("matrix_invite_declined", room=room_id, inviter=inviter)

    async def _keys(self) -> None:
        """Upload one-time keys, learn new devices, claim keys for new Olm sessions and
        send the to-device messages waiting: what matrix-nio's own loop does per sync."""
        client = self.client
        if client.should_upload_keys:
            _warn(await client.keys_upload(), KeysUploadError)
        if client.should_query_keys:
            _warn(await client.keys_query(), KeysQueryError)
        if client.should_claim_keys:
            _warn(await client.keys_claim(client.get_users_for_key_claiming()), KeysClaimError)
        await client.send_to_device_messages()


class SyncFailed(RuntimeError):
    """The homeserver answered /sync with an error that a later sync may not have."""


def _inviter(state: list[Any], me: str) -> str | None:
    for event in state:
        if (
            isinstance(event, InviteMemberEvent)
            and event.state_key == me
            and event.membership == "invite"
        ):
            return event.sender
    return None


def _failed(answer: object) -> bool:
    return type(answer).__name__.endswith("Error")


def _warn(answer: object, error: type) -> None:
    if isinstance(answer, error):
        log.warning("matrix_keys_failed", call=error.__name__, error=str(answer))
