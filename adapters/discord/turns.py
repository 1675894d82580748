"""Events of one Discord chat handed to the gateway in the order Discord sent them.

discord.py runs each event's handler in its own task, so a message and its edit, or two
messages of one chat, could reach the gateway out of order. `Turns` lets the events of a
chat (or thread) take turns on a FIFO lock; a lock lives only while someone waits on it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import structlog

from adapters.base import Event, EventHandler

log = structlog.get_logger("kioku.discord")


@dataclass
class _Line:
    """Events of one chat waiting to be handed over, first come first served."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class Turns:
    """Hands events to `deliver`, one chat's at a time in arrival order."""

    def __init__(self, deliver: EventHandler) -> None:
        self.deliver = deliver
        self._lines: dict[tuple[str, str], _Line] = {}

    async def hand_over(self, chat: str, thread: str, event: Event) -> None:
        """Deliver `event` once the events of its chat (or thread) that came before it have
        been: an edit never overtakes the message it edits. A failure is logged, not
        raised: discord.py would only log it less clearly."""
        key = (chat, thread)
        line = self._lines.setdefault(key, _Line())
        line.users += 1
        try:
            async with line.lock:
                await self.deliver(event)
        except Exception:
            log.exception("discord_deliver_failed", chat=chat, kind=type(event).__name__)
        finally:
            line.users -= 1
            if line.users == 0:
                del self._lines[key]
