"""Telegram updates handed to the gateway, and confirmed to Telegram only once it has them.

Telegram keeps a bot's updates (up to 24 hours) until a getUpdates call asks for an offset
past them: that offset is the only receipt Telegram gets. So `Intake.offset` moves past an
update only after `deliver` returned for it, which the gateway does once the update is
stored; a kioku killed in between is given the update again by the next getUpdates.

What waited on Telegram's server while kioku was away is caught up: in a getUpdates answer,
a message dated before the adapter started is a missed one, and the missed messages of one
answer go to the gateway together, as one `Missed` (each built as a live message is, dated
when it was sent), before the answer's other updates, one by one. The first answer after
start makes a catch-up pass even when nothing was missed (an empty `Missed`), so the gateway
knows when Telegram was last caught up. Telegram has no history to read, so the plan's
cursors are unused; a plan that is off (`gateway.catch_up.max_age = "0"`) delivers
everything live. An edit (`edited_message`) goes to the gateway as `Changed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

import structlog
from telegram import Update

from adapters.base import Event, EventHandler, Inbound, Missed
from adapters.catch_up import CatchUpPlan
from adapters.telegram.inbound import to_changed, to_inbound

log = structlog.get_logger("kioku.telegram")

CLOCK_SKEW = timedelta(seconds=2)
"""How far before the adapter's start a message may be dated and still count as sent
while it ran: Telegram dates messages in whole seconds, by its own clock."""


class Intake:
    """One start of the adapter's updates on their way to the gateway: what each is to
    the gateway, and the offset that confirms to Telegram what the gateway has."""

    def __init__(
        self,
        deliver: EventHandler,
        bot_id: int,
        username: str,
        started: datetime,
        plan: CatchUpPlan,
    ) -> None:
        self.deliver = deliver
        self.bot_id = bot_id
        self.username = username
        self.plan = plan
        self.offset: int | None = None
        self._missed_before = started - CLOCK_SKEW
        self._pass_due = plan.enabled

    @property
    def catching_up(self) -> bool:
        """The catch-up pass of this start is still to be made (its first getUpdates)."""
        return self._pass_due

    async def take(self, updates: Sequence[Update]) -> None:
        """Hand one getUpdates answer to the gateway: its missed messages as one `Missed`,
        then each other update; the offset moves past each once the gateway has it. A
        delivery that fails raises, the offset left before it."""
        read = [(update, self.event(update)) for update in updates]
        missed: dict[int, Inbound] = {}
        for update, event in read:
            sent = self._missed_at(update)
            if isinstance(event, Inbound) and sent is not None:
                missed[update.update_id] = replace(event, received_at=sent)
        if missed or self._pass_due:
            await self.deliver(Missed("telegram", tuple(missed.values())))
            self._pass_due = False
            log.info("telegram_caught_up", missed=len(missed))
        for update, event in read:
            if event is not None and update.update_id not in missed:
                await self.deliver(event)
            self.offset = update.update_id + 1

    def event(self, update: Update) -> Event | None:
        """What `update` is to the gateway: a message, an edit of one, or None (an update
        kioku does not read, or one it could not: logged)."""
        try:
            if update.edited_message is not None:
                return to_changed(update, self.bot_id, self.username)
            return to_inbound(update, self.bot_id, self.username)
        except Exception:
            log.exception("telegram_update_failed", update_id=update.update_id)
            return None

    def _missed_at(self, update: Update) -> datetime | None:
        """When the message of `update` was sent, if that was before the adapter started
        and the plan asks for catch-up: it was missed."""
        message = update.message
        if not self.plan.enabled or message is None or message.date >= self._missed_before:
            return None
        return message.date
