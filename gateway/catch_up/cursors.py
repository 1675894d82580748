"""The gateway's side of where each chat was last read: it moves the cursors on as
messages come in, and tells each adapter what its next catch-up pass may read."""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from adapters.base import Inbound
from adapters.catch_up import OFF, CatchUpPlan, Cursor
from config.settings import CatchUpSettings
from memory.store import cursors
from memory.store.database import Store
from memory.store.errors import StoreError

log = structlog.get_logger("kioku.gateway")


class Cursors:
    """Moves the cursor of each chat kioku talks in; `settings` gives `gateway.catch_up`
    as now configured."""

    def __init__(self, store: Store, settings: Callable[[], CatchUpSettings]) -> None:
        self.store = store
        self._settings = settings
        self._watched: set[tuple[str, str, str]] | None = None

    async def seen(self, inbound: Inbound) -> None:
        """`inbound` was taken in (or was not meant for kioku): reading after it is enough.
        Chatter in a chat with no cursor writes nothing."""
        if inbound.message_id is None or not inbound.kept_by_platform:
            return
        watched = await self._watched_chats()
        key = (inbound.platform, inbound.chat, inbound.thread)
        addressed = inbound.is_direct or inbound.addressed
        if not addressed and key not in watched:
            return
        seen = cursors.Seen(
            *key, inbound.message_id, inbound.is_direct, inbound.received_at.timestamp(), addressed
        )
        try:
            await cursors.advance(self.store, seen)
        except StoreError as exc:
            # A cursor left behind only means the next pass reads a little more again.
            log.warning("cursor_not_moved", platform=inbound.platform, error=str(exc))
            return
        watched.add(key)

    async def plan(self, platform: str) -> CatchUpPlan:
        """What `platform`'s next pass may read: off when `max_age` is 0."""
        settings = self._settings()
        max_age = settings.max_age_seconds
        if max_age <= 0:
            return OFF
        rows = await cursors.due(self.store, platform, time.time() - max_age)
        found = tuple(Cursor(r.chat, r.thread, r.message_id, r.is_direct) for r in rows)
        return CatchUpPlan(found, max_age, settings.max_messages)

    async def _watched_chats(self) -> set[tuple[str, str, str]]:
        if self._watched is None:
            self._watched = await cursors.watched(self.store)
        return self._watched
