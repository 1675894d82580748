"""Which session a message belongs to, and when a session ends.

A group's session is keyed by (platform, chat, thread). A DM's by its chat (dm_scope
"chat"), or by its person alone (dm_scope "person": start on Telegram, go on in the
CLI). A session closes after `idle_timeout` without messages, at `daily_reset_hour`
(local time), on /new and at shutdown; each close goes through the agent, which stores
the title and summary and runs the final reflection.

Timers never close a session themselves: they ask the gateway (`expire`) to queue the
close behind the conversation's turns, so a session never closes under a running turn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from adapters.base import Inbound
from agent.agent import Agent
from config.settings import SessionSettings
from memory.store.database import Store
from memory.store.records import Conversation, Session

log = structlog.get_logger("kioku.gateway")

Expire = Callable[[str, str, int], None]
"""(conversation key, reason, session id): queue the close of that session."""


@dataclass
class OpenSession:
    key: str
    session: Session
    deadline: float
    timer: asyncio.TimerHandle | None = None


def conversation_for(inbound: Inbound, person: str | None, dm_scope: str) -> Conversation:
    """The conversation (and so the session key) an admitted message belongs to."""
    if not inbound.is_direct:
        return Conversation(inbound.platform, inbound.chat, "group", thread=inbound.thread)
    if person is None:
        raise ValueError("a direct message needs its person")
    key = f"dm:{person}" if dm_scope == "person" else ""
    return Conversation(inbound.platform, inbound.chat, "dm", person, inbound.thread, key)


def next_reset(now: datetime, hour: int) -> datetime:
    """The next local `hour`:00 strictly after `now` (an aware local datetime)."""
    candidate = now.replace(hour=hour, minute=0, second=0, microsecond=0)
    return candidate if candidate > now else candidate + timedelta(days=1)


def last_reset(now: datetime, hour: int) -> datetime:
    """The latest local `hour`:00 at or before `now`."""
    return next_reset(now, hour) - timedelta(days=1)


class Sessions:
    """The open sessions of this process, with their idle timers and the daily reset."""

    def __init__(
        self, store: Store, agent: Agent, settings: SessionSettings, expire: Expire
    ) -> None:
        self.store = store
        self.agent = agent
        self.settings = settings
        self._expire = expire
        self._open: dict[str, OpenSession] = {}
        self._daily: asyncio.Task[None] | None = None
        self._changed = asyncio.Condition()

    def start(self) -> None:
        """Start the daily reset timer if a reset hour is set."""
        if self.settings.daily_reset_hour is not None and self._daily is None:
            self._daily = asyncio.create_task(self._daily_reset(), name="sessions-daily-reset")

    def reload(self, settings: SessionSettings) -> None:
        """New limits apply from the next message on; the daily timer follows the new hour."""
        hour_changed = settings.daily_reset_hour != self.settings.daily_reset_hour
        self.settings = settings
        if hour_changed:
            if self._daily is not None:
                self._daily.cancel()
                self._daily = None
            self.start()

    def get(self, key: str) -> OpenSession | None:
        return self._open.get(key)

    def open_sessions(self) -> list[OpenSession]:
        return list(self._open.values())

    async def open(self, conversation: Conversation) -> Session:
        """The conversation's open session, or a new one; a stale one left by an earlier
        run (idle too long, or from before the daily reset) is closed first."""
        entry = self._open.get(conversation.key)
        if entry is not None and not await self._still_open(entry):
            entry = None
        if entry is None:
            session = await self.store.open_session(conversation)
            reason = await self._stale(session)
            if reason is not None:
                await self.agent.close_session(session.id, reason)
                session = await self.store.open_session(conversation)
            entry = self._open[conversation.key] = OpenSession(conversation.key, session, 0.0)
            async with self._changed:
                self._changed.notify_all()
        self.touch(conversation.key)
        return entry.session

    async def recheck(self, key: str) -> None:
        """After a deletion: drop the conversation's session (and the agent's live copy)
        if the deletion removed or ended it, so the next message starts afresh."""
        entry = self._open.get(key)
        if entry is not None and not await self._still_open(entry):
            async with self._changed:
                self._changed.notify_all()

    async def _still_open(self, entry: OpenSession) -> bool:
        """False once the session was ended or removed outside the daemon (`kioku people
        forget`): the conversation then starts afresh instead of writing to a ghost. The
        external id is compared too, since SQLite may give a removed session's id to a new one."""
        current = await self.store.get_session(entry.session.id)
        if (
            current is not None
            and current.ended_at is None
            and current.external_id == entry.session.external_id
        ):
            return True
        log.info("session_gone", session=entry.session.id)
        if entry.timer is not None:
            entry.timer.cancel()
        self._open.pop(entry.key, None)
        self.agent.forget(entry.session.id)
        return False

    def touch(self, key: str) -> None:
        """Activity in the conversation: the idle timeout starts again."""
        entry = self._open.get(key)
        if entry is None:
            return
        loop = asyncio.get_running_loop()
        entry.deadline = loop.time() + self.settings.idle_timeout
        if entry.timer is not None:
            entry.timer.cancel()
        entry.timer = loop.call_at(entry.deadline, self._idle, entry)

    def due(self, key: str, reason: str, session_id: int) -> bool:
        """Whether a queued close still applies when its turn comes (no newer activity)."""
        entry = self._open.get(key)
        if entry is None or entry.session.id != session_id:
            return False
        return reason != "idle" or entry.deadline <= asyncio.get_running_loop().time()

    async def close(self, key: str, reason: str) -> Session | None:
        """Close the conversation's open session (title, summary, reflection) if it has one."""
        entry = self._open.pop(key, None)
        if entry is None:
            return None
        if entry.timer is not None:
            entry.timer.cancel()
        try:
            await self.agent.close_session(entry.session.id, reason)
        finally:
            async with self._changed:
                self._changed.notify_all()
        return entry.session

    async def close_all(self, reason: str) -> None:
        """Close every open session (shutdown); one failure does not keep the others open."""
        keys = list(self._open)
        results = await asyncio.gather(
            *(self.close(key, reason) for key in keys), return_exceptions=True
        )
        for key, result in zip(keys, results, strict=True):
            if isinstance(result, BaseException):
                log.error("session_close_failed", conversation=key, error=repr(result))

    async def stop_timers(self) -> None:
        for entry in self._open.values():
            if entry.timer is not None:
                entry.timer.cancel()
                entry.timer = None
        if self._daily is not None:
            daily, self._daily = self._daily, None
            daily.cancel()
            await asyncio.gather(daily, return_exceptions=True)

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait until `predicate` holds after a session opens or closes (status, tests)."""
        async with self._changed:
            await self._changed.wait_for(predicate)

    async def _stale(self, session: Session) -> str | None:
        last = (await self.store.session_activity(session.id)).last_at or session.started_at
        now = datetime.now().astimezone()
        if (now - last).total_seconds() >= self.settings.idle_timeout:
            return "idle"
        hour = self.settings.daily_reset_hour
        if hour is not None and last < last_reset(now, hour):
            return "daily"
        return None

    def _idle(self, entry: OpenSession) -> None:
        entry.timer = None
        self._expire(entry.key, "idle", entry.session.id)

    async def _daily_reset(self) -> None:
        hour = self.settings.daily_reset_hour
        assert hour is not None
        while True:
            now = datetime.now().astimezone()
            await asyncio.sleep((next_reset(now, hour) - now).total_seconds())
            log.info("daily_reset", sessions=len(self._open), at=time.strftime("%H:%M"))
            for entry in list(self._open.values()):
                self._expire(entry.key, "daily", entry.session.id)
