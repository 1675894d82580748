"""The person's answer to a deletion waiting in their conversation (`agent.deletions`).

The gateway, not the model, shows the list: `/history forget` replies with it, and after
a turn in which the model called `history_delete` the gateway sends the tool's plan
itself, so the person reads what will go, not the model's account of it. The gateway
also reads the message that follows: exactly "yes" from the same person, sent after the
list was shown, deletes what it showed; any other message cancels it and is answered as
usual. So a deletion never happens on the model's word alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import structlog

from adapters.base import Inbound
from agent.deletions import CONFIRM_WORD, PendingDeletion, PendingDeletions, is_confirmation
from gateway.sessions import Sessions
from memory.history.erase import Erased, UnknownHistory, erase, survey
from memory.history.exchange import last_exchange
from memory.history.plan import Plan, counted
from memory.history.selection import NotAllowed, Selection
from memory.store.database import Store

log = structlog.get_logger("kioku.deletions")

CANCELLED = "(The deletion I listed is cancelled: nothing was deleted.)"


@dataclass(frozen=True)
class Settled:
    """What became of a message that may answer a waiting deletion: `reply` to send
    first, and whether the message was the answer (`consumed`) or goes on to the model."""

    reply: str | None = None
    consumed: bool = False


def ask_to_confirm(plan: Plan) -> str:
    """The list a person reads before deleting, and how to confirm."""
    lines = "\n".join(f"- {line}" for line in plan.describe())
    return (
        f"This deletes {plan.totals()}:\n{lines}\n"
        f"Reply {CONFIRM_WORD} to delete it for good; any other message keeps it."
    )


def deleted(erased: list[Erased]) -> str:
    sessions = sum(e.sessions for e in erased)
    turns = sum(e.turns for e in erased)
    ended = any(e.ended for e in erased)
    text = f"Deleted {counted(sessions, turns)}."
    if sessions or ended:
        text += " Your next message starts a new conversation."
    return text


class ChatDeletions:
    """Carries out or cancels the waiting deletion of a conversation."""

    def __init__(self, store: Store, sessions: Sessions, pending: PendingDeletions) -> None:
        self.store = store
        self.sessions = sessions
        self.pending = pending

    def show(self, key: str) -> str | None:
        """After a turn: the list of a deletion the model offered in it, to send now."""
        waiting = self.pending.show(key, time.monotonic())
        return None if waiting is None else ask_to_confirm(waiting.plan)

    def cancel(self, key: str) -> str | None:
        """Any message but the "yes" cancels: the notice to send, if one was waiting."""
        waiting = self.pending.take(key)
        if waiting is None:
            return None
        log.info("deletion_cancelled", conversation=key)
        return None if waiting.shown_at is None else CANCELLED

    async def settle(
        self, inbound: Inbound, person: str | None, key: str, arrived: float
    ) -> Settled:
        """Confirm or cancel the waiting deletion with this (non-command) message, which
        reached the gateway at `arrived` (`time.monotonic()`)."""
        waiting = self.pending.take(key)
        if waiting is None:
            return Settled()
        confirms = (
            person == waiting.person
            and waiting.shown_at is not None
            and arrived > waiting.shown_at
            and is_confirmation(inbound.text)
        )
        if not confirms:
            log.info("deletion_cancelled", conversation=key)
            return Settled(None if waiting.shown_at is None else CANCELLED)
        erased = await self._carry_out(waiting)
        await self.sessions.recheck(key)
        log.info(
            "history_deleted",
            by="chat",
            person=person,
            sessions=sum(e.sessions for e in erased),
            turns=sum(e.turns for e in erased),
            files=sum(e.files for e in erased),
        )
        return Settled(deleted(erased), consumed=True)

    async def _carry_out(self, waiting: PendingDeletion) -> list[Erased]:
        """The plan shown, then what is left of the exchange that asked for it (its turns
        noted first: the plan may take some of them, the request among them)."""
        session_id, exchange = await self._exchange(waiting)
        done = [await erase(self.store, waiting.plan)]
        if not exchange:
            return done
        left = {m.id for m in await self.store.messages(session_id, after=exchange[0] - 1)}
        remaining = tuple(turn for turn in exchange if turn in left)
        if not remaining:
            return done
        try:
            plan = await survey(self.store, waiting.plan.asker, Selection(messages=remaining))
        except (NotAllowed, UnknownHistory) as exc:
            log.warning("deletion_exchange_kept", session=session_id, error=str(exc))
            return done
        return [*done, await erase(self.store, plan)]

    async def _exchange(self, waiting: PendingDeletion) -> tuple[int, tuple[int, ...]]:
        """(session id, turns) of the asking exchange, if it is still the session's last."""
        if waiting.exchange is None:
            return 0, ()
        session_id, first = waiting.exchange
        turns = await last_exchange(self.store, session_id)
        return session_id, turns if turns and turns[0] == first else ()
