"""The router between adapters and the agent: admission, sessions, queues, slash commands.

`handle` is every adapter's `deliver`. It returns once the message is queued (or
answered, for a command), so a slow model never holds up a platform's event loop.
Turns run in their conversation's FIFO line (gateway/turns/pipeline.py); every reply
leaves through the one way out (gateway/outbound.py): one that cannot be delivered is
logged with its session id, the turn stays stored, and the line goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import structlog

from adapters.base import Inbound
from agent.agent import Agent
from config.settings import Settings
from gateway.commands.dispatch import Commands
from gateway.commands.parsing import Command, parse
from gateway.outbound import Dispatcher, Outlets
from gateway.owner_claims import CLAIMED, OwnerClaims
from gateway.queues import ConversationQueues, LineState
from gateway.sessions import OpenSession, Sessions, conversation_for
from gateway.turns.deletions import ChatDeletions
from gateway.turns.pipeline import Delivery, Turns
from memory.store import deliveries
from memory.store.database import Store
from memory.store.records import Conversation
from plumbing.tasks import Tasks

if TYPE_CHECKING:
    from gateway.identity import Identities

log = structlog.get_logger("kioku.gateway")

DRAINING = "kioku is restarting; please send that again in a minute."
PRUNE_EVERY = 6 * 3600
# What became of an incoming message: only "handled" ones are recorded as delivered at
# once; "queued" ones when their turn is stored; "refused" ones never.
Outcome = Literal["handled", "queued", "refused"]
TOO_MANY = "Too many messages are waiting here; I will answer the earlier ones first."


@dataclass(frozen=True)
class ConversationStats:
    key: str
    session_id: int | None
    queued: int
    busy: bool


@dataclass(frozen=True)
class GatewayStats:
    open_sessions: int
    in_flight: int
    queued: int
    conversations: list[ConversationStats] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "open_sessions": self.open_sessions,
            "in_flight": self.in_flight,
            "queued": self.queued,
            "conversations": [
                {"key": c.key, "session_id": c.session_id, "queued": c.queued, "busy": c.busy}
                for c in self.conversations
            ],
        }


class Gateway:
    """Owns the way in for every message: admission (who, and may they), duplicate drops,
    slash commands, the per-conversation queues and the live sessions; it hands turns to
    the agent, a message's and a scheduled prompt's alike, and sends every reply through
    the one way out (`outbound`). `async with` closes it."""

    def __init__(
        self,
        store: Store,
        agent: Agent,
        identities: Identities,
        settings: Settings,
        outlets: Outlets,
    ) -> None:
        self.store = store
        self.identities = identities
        self.settings = settings
        self.outbound = Dispatcher(outlets, lambda: self.settings.media.long_replies_as_file)
        self.queues = ConversationQueues(
            settings.gateway.max_parallel_turns, settings.gateway.max_queued_per_conversation
        )
        self.sessions = Sessions(store, agent, settings.sessions, self._expire)
        self.commands = Commands(store, agent, identities, self)
        self.deletions = ChatDeletions(store, self.sessions, agent.services.deletions)
        self.claims = OwnerClaims()
        self.turns = Turns(
            store,
            agent,
            lambda: self.settings,
            self.sessions,
            self.queues,
            self.deletions,
            self.outbound,
        )
        self._accepting = True
        self._tasks = Tasks()
        self._pruning = False
        # Platform message ids taken in but not yet stored, and the conversation they wait in.
        self._pending: dict[Delivery, str] = {}

    # -- the adapters' entry point ---------------------------------------------------------

    async def handle(self, inbound: Inbound) -> None:
        """Admit, route and queue one message (or answer its command); never raises for
        a bad message, so one person's message cannot stop an adapter.

        A message that becomes a turn counts as delivered once the agent has stored it
        (`Turn.on_stored`): a crash before that lets the platform's redelivery through
        instead of losing the message. Until then its id is held in `_pending`.
        """
        if not inbound.is_direct and not inbound.addressed:
            return  # group chatter not meant for kioku: nothing to look up, nothing stored
        if not self._accepting:
            await self.outbound.reply(inbound.address, DRAINING)
            return
        # Before admission: the claimant is a stranger until `kioku setup` names them owner.
        if self.claims.take(inbound.platform, inbound.sender, inbound.text, inbound.is_direct):
            log.info("owner_claimed", platform=inbound.platform)
            await self.outbound.reply(inbound.address, CLAIMED)
            return
        delivery = _delivery(inbound)
        if delivery is not None:
            if delivery in self._pending:
                log.info("duplicate_dropped", platform=inbound.platform, chat=inbound.chat)
                return
            self._pending[delivery] = ""
        outcome: Outcome | None = None
        try:
            if delivery is not None and await deliveries.known(self.store, *delivery):
                log.info("duplicate_dropped", platform=inbound.platform, chat=inbound.chat)
                return
            self._start()
            outcome = await self._route(inbound, delivery)
            if outcome == "handled" and delivery is not None:
                await deliveries.record(self.store, *delivery)
        finally:
            if delivery is not None and outcome != "queued":
                self._pending.pop(delivery, None)

    async def _route(self, inbound: Inbound, delivery: Delivery | None) -> Outcome:
        admission = await self.identities.admit(inbound)
        if not admission.admitted:
            if admission.reply:
                await self.outbound.reply(inbound.address, admission.reply)
            return "handled"
        if inbound.unreadable:
            await self.outbound.reply(inbound.address, _unreadable(inbound.unreadable))
            if not inbound.text.strip() and not inbound.attachments:
                return "handled"
        person = admission.person
        conversation = conversation_for(inbound, person, self.settings.sessions.dm_scope)
        self.sessions.touch(conversation.key)
        command = parse(inbound.text)
        if command is not None:
            await self._command(inbound, person, conversation.key, command)
            return "handled"
        arrived = time.monotonic()
        queued = self.queues.submit(
            conversation.key,
            partial(self._turn, inbound, person, conversation, delivery, arrived),
            name=f"turn-{inbound.message_id or ''}",
        )
        if not queued:
            await self.outbound.reply(inbound.address, TOO_MANY)
            return "refused"
        if delivery is not None:
            self._pending[delivery] = conversation.key
        return "queued"

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def reload(self, settings: Settings) -> None:
        """Apply session and queue limits that can change while running (SIGHUP)."""
        self.settings = settings
        self.sessions.reload(settings.sessions)
        self._tasks.spawn(
            self.queues.resize(
                settings.gateway.max_parallel_turns, settings.gateway.max_queued_per_conversation
            ),
            "gateway-resize",
        )

    def stats(self) -> GatewayStats:
        lines = {state.key: state for state in self.queues.states()}
        open_ = {entry.key: entry for entry in self.sessions.open_sessions()}
        conversations = [
            ConversationStats(
                key,
                open_[key].session.id if key in open_ else None,
                lines[key].queued if key in lines else 0,
                lines[key].busy if key in lines else False,
            )
            for key in sorted(set(lines) | set(open_))
        ]
        return GatewayStats(
            open_sessions=len(open_),
            in_flight=self.queues.in_flight,
            queued=sum(state.queued for state in lines.values()),
            conversations=conversations,
        )

    async def drain(self, grace: float) -> bool:
        """Refuse new messages and let accepted ones finish; False if `grace` cut them short."""
        self._accepting = False
        finished = await self.queues.drain(grace)
        log.info("gateway_drained", finished=finished)
        return finished

    async def close(self) -> None:
        """Stop its tasks, timers and lines, then close every open session with reason
        "shutdown"."""
        self._accepting = False
        await self._tasks.cancel()
        await self.sessions.stop_timers()
        await self.queues.close()
        await self.sessions.close_all("shutdown")

    # -- what the commands may ask (commands.Control) ---------------------------------------

    def new_session(self, key: str, inbound: Inbound) -> bool:
        """Queue the close behind the conversation's earlier messages, then confirm."""

        async def job() -> None:
            closed = await self.sessions.close(key, "new")
            text = "New session started." if closed else "No session was open; starting fresh."
            await self.outbound.reply(inbound.address, text)

        return self.queues.submit(key, job, name="new-session")

    def stop(self, key: str) -> tuple[bool, int]:
        """Cancel the turn in flight and drop the waiting ones: a redelivery may come in again."""
        for delivery in [d for d, line in self._pending.items() if line == key]:
            del self._pending[delivery]
        return self.queues.stop(key)

    def later(self, key: str, inbound: Inbound, work: Callable[[], Awaitable[str]]) -> bool:
        """Run a command's `work` in the conversation's line (after the turns before it,
        never beside one) and send its reply; False if the line is full."""

        async def job() -> None:
            try:
                text = await work()
            except Exception:
                log.exception("command_failed", conversation=key)
                text = "That command failed; the details are in kioku's log."
            await self.outbound.reply(inbound.address, text)

        return self.queues.submit(key, job, name="command-later")

    async def refresh_session(self, key: str) -> None:
        await self.sessions.recheck(key)

    def line(self, key: str) -> LineState:
        return self.queues.state(key)

    def open_session(self, key: str) -> OpenSession | None:
        return self.sessions.get(key)

    # -- internals ---------------------------------------------------------------------------

    def _start(self) -> None:
        """Timers start with the first message, inside the running loop."""
        self.sessions.start()
        if not self._pruning:
            self._pruning = True
            self._tasks.spawn(self._prune(), "gateway-prune")

    async def _prune(self) -> None:
        """Forget old delivery ids now and every few hours; a failure waits for the next round."""
        while True:
            try:
                removed = await deliveries.prune(self.store)
                log.info("deliveries_pruned", removed=removed)
            except Exception as exc:
                log.warning("deliveries_prune_failed", error=repr(exc))
            await asyncio.sleep(PRUNE_EVERY)

    async def _command(
        self, inbound: Inbound, person: str | None, key: str, command: Command
    ) -> None:
        cancelled = self.deletions.cancel(key)
        if cancelled is not None:
            await self.outbound.reply(inbound.address, cancelled)
        try:
            reply = await self.commands.run(inbound, person, key, command)
        except Exception:
            log.exception("command_failed", command=command.name, platform=inbound.platform)
            reply = f"/{command.name} failed; the details are in kioku's log."
        if reply is not None:
            await self.outbound.reply(inbound.address, reply)

    async def _turn(
        self,
        inbound: Inbound,
        person: str | None,
        conversation: Conversation,
        delivery: Delivery | None,
        arrived: float,
    ) -> None:
        """The message's turn; its id stops being held once the turn is over."""
        try:
            await self.turns.message(inbound, person, conversation, delivery, arrived)
        finally:
            if delivery is not None:
                self._pending.pop(delivery, None)

    def _expire(self, key: str, reason: str, session_id: int) -> None:
        async def job() -> None:
            if self.sessions.due(key, reason, session_id):
                await self.sessions.close(key, reason)

        self.queues.submit(key, job, name=f"close-{reason}", force=True)


def _delivery(inbound: Inbound) -> Delivery | None:
    if inbound.message_id is None:
        return None
    return (inbound.platform, inbound.chat, inbound.message_id)


def _unreadable(kinds: tuple[str, ...]) -> str:
    what = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + f" and {kinds[-1]}"
    return f"I can't read {what}; text, photos, voice notes and documents I can."
