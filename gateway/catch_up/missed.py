"""Messages sent while kioku was away: one answer per person and conversation.

A catch-up pass hands over what it found (`Missed`); what kioku already has (by message
id, in this process or in the delivery ledger) is dropped, the rest is held in the
ledger before `take` returns, and each person's messages in one conversation are queued
in its line as one turn. What was held but never stored when kioku stopped is answered
the same way at start (`resume`). A message older than `gateway.catch_up.max_age`, or
beyond `max_messages` of one conversation, is stored unanswered.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol

import structlog

from adapters.base import Inbound, Missed
from config.settings import Settings
from gateway.catch_up.cursors import Cursors
from gateway.commands.parsing import parse
from gateway.identity import Identities
from gateway.outbound import Dispatcher
from gateway.queues import ConversationQueues
from gateway.sessions import conversation_for
from gateway.turns.pending import Delivery, Outcome, Pending
from gateway.turns.pipeline import Taken, Turns
from gateway.turns.waiting import from_waiting, to_waiting
from memory.store import deliveries
from memory.store.database import Store
from memory.store.records import Conversation

log = structlog.get_logger("kioku.gateway")


class Front(Protocol):
    """What of the gateway catching up uses: its store, admission, lines and way out."""

    store: Store
    identities: Identities
    pending: Pending
    queues: ConversationQueues
    turns: Turns
    outbound: Dispatcher
    cursors: Cursors

    async def route(self, inbound: Inbound, delivery: Delivery | None) -> Outcome: ...


@dataclass(frozen=True)
class CatchUpReport:
    """The last catch-up of one platform, for `kioku status`."""

    at: datetime
    messages: int
    answered: int
    unanswered: int
    already_had: int

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at.isoformat(),
            "messages": self.messages,
            "answered": self.answered,
            "unanswered": self.unanswered,
            "already_had": self.already_had,
        }


@dataclass
class _Group:
    """One person's messages in one conversation."""

    conversation: Conversation
    person: str | None
    held: bool
    """Held over a restart (`resume`): some may be stored already."""
    items: list[tuple[Inbound, Delivery]] = field(default_factory=list)


@dataclass
class _Counts:
    answered: int = 0
    unanswered: int = 0


class MissedMessages:
    """Takes in catch-up passes and answers what was held over a restart."""

    def __init__(self, front: Front, settings: Callable[[], Settings]) -> None:
        self.front = front
        self._settings = settings
        self.reports: dict[str, CatchUpReport] = {}

    async def take(self, missed: Missed) -> None:
        """Hold what is new among `missed.messages` and queue its answers."""
        front = self.front
        messages = sorted(missed.messages, key=lambda inbound: inbound.received_at)
        fresh: list[tuple[Inbound, Delivery]] = []
        for inbound in messages:
            if not (inbound.is_direct or inbound.addressed) or inbound.message_id is None:
                continue
            delivery = (inbound.platform, inbound.chat, inbound.message_id)
            if not front.pending.claim(delivery):
                continue
            if await deliveries.known(front.store, *delivery):
                front.pending.release(delivery)
                continue
            fresh.append((inbound, delivery))
        counts = await self._answer(fresh, held=False)
        for inbound in messages:
            await front.cursors.seen(inbound)
        report = CatchUpReport(
            datetime.now(UTC),
            len(messages),
            counts.answered,
            counts.unanswered,
            sum(1 for m in messages if m.is_direct or m.addressed) - len(fresh),
        )
        self.reports[missed.platform] = report
        front.turns.meter.caught_up(
            missed.platform, report.answered, report.unanswered, report.already_had
        )
        log.info("caught_up", platform=missed.platform, **report.to_json())

    async def resume(self) -> int:
        """Queue the answers to every message held in the ledger and never stored."""
        held: list[tuple[Inbound, Delivery]] = []
        for row in await deliveries.waiting_rows(self.front.store):
            delivery = (row.platform, row.chat, row.message_id)
            try:
                inbound = from_waiting(row.waiting)
            except ValueError as exc:
                log.warning("waiting_message_unreadable", platform=row.platform, error=str(exc))
                await deliveries.record(self.front.store, *delivery)
                continue
            if self.front.pending.claim(delivery):
                held.append((inbound, delivery))
        if held:
            log.info("resuming_unanswered", messages=len(held))
            await self._answer(held, held=True)
        return len(held)

    async def _answer(self, taken: Sequence[tuple[Inbound, Delivery]], *, held: bool) -> _Counts:
        """Group by person and conversation and queue each group's turn; commands and
        refusals go the way a live message's would."""
        groups: dict[tuple[str, str], _Group] = {}
        for inbound, delivery in taken:
            group = await self._group_of(inbound, delivery, held=held)
            if group is None:
                continue
            key = (group.conversation.key, inbound.sender)
            groups.setdefault(key, group).items.append((inbound, delivery))
        counts = _Counts()
        for group in groups.values():
            await self._queue(group, counts)
        return counts

    async def _group_of(self, inbound: Inbound, delivery: Delivery, *, held: bool) -> _Group | None:
        """The group `inbound` is answered in, or None once it was handled on its own."""
        front = self.front
        admission = await front.identities.admit(inbound)
        alone = parse(inbound.text) is not None or (
            inbound.unreadable and not inbound.text.strip() and not inbound.attachments
        )
        if admission.admitted and not alone:
            settings = self._settings().sessions
            conversation = conversation_for(inbound, admission.person, settings.dm_scope)
            return _Group(conversation, admission.person, held)
        outcome: Outcome | None = None
        try:
            if not admission.admitted:
                if admission.reply:
                    await front.outbound.reply(inbound.address, admission.reply)
                outcome = "handled"
            else:
                outcome = await front.route(inbound, delivery)
            if outcome == "handled":
                await deliveries.record(front.store, *delivery)
        finally:
            if outcome != "queued":
                front.pending.release(delivery)
        return None

    async def _queue(self, group: _Group, counts: _Counts) -> None:
        front = self.front
        settings = self._settings().gateway.catch_up
        if not group.held:
            for inbound, delivery in group.items:
                await deliveries.hold(front.store, *delivery, to_waiting(inbound))
        for inbound, delivery in group.items:
            front.pending.queued(delivery, group.conversation.key, inbound)
        oldest = time.time() - settings.max_age_seconds if settings.max_age_seconds else None

        def too_old(item: tuple[Inbound, Delivery]) -> bool:
            return oldest is not None and item[0].received_at.timestamp() < oldest

        unanswered = [item for item in group.items if too_old(item)]
        answered = [item for item in group.items if not too_old(item)]
        unanswered += answered[: -settings.max_messages]
        answered = answered[-settings.max_messages :]
        counts.answered += len(answered)
        counts.unanswered += len(unanswered)
        job = partial(self._turn, group, unanswered, answered)
        front.queues.submit(group.conversation.key, job, name="caught-up-turn", force=True)

    async def _turn(
        self,
        group: _Group,
        unanswered: list[tuple[Inbound, Delivery]],
        answered: list[tuple[Inbound, Delivery]],
    ) -> None:
        """In the conversation's line: the old ones stored, the others answered as one turn,
        each as it reads now (edits count; deleted ones are gone)."""
        front, person, conversation = self.front, group.person, group.conversation
        try:
            keep = await self._current(unanswered)
            answer = await self._current(answered)
            if group.held:
                await front.turns.held(answer, person, conversation, keep)
            elif answer:
                await front.turns.missed(answer, person, conversation, keep)
            elif keep:
                await front.turns.unanswered(keep, person, conversation)
        finally:
            for _, delivery in (*unanswered, *answered):
                front.pending.release(delivery)

    async def _current(self, items: Sequence[tuple[Inbound, Delivery]]) -> list[Taken]:
        current: list[Taken] = []
        for _, delivery in items:
            inbound = self.front.pending.begin(delivery)
            if inbound is None:
                await deliveries.record(self.front.store, *delivery)
            else:
                current.append((inbound, delivery))
        return current
