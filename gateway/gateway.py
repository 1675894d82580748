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
from functools import partial
from typing import TYPE_CHECKING

import structlog

from adapters.base import Changed, Event, Inbound, Missed
from agent.agent import Agent
from config.settings import Settings
from gateway.catch_up.cursors import Cursors
from gateway.catch_up.edits import Edits
from gateway.catch_up.missed import MissedMessages
from gateway.commands.dispatch import Commands
from gateway.commands.parsing import Command, parse
from gateway.outbound import Dispatcher, Outlets
from gateway.owner_claims import CLAIMED, OwnerClaims
from gateway.queues import ConversationQueues, LineState
from gateway.sessions import OpenSession, Sessions, conversation_for
from gateway.stats import GatewayStats, gateway_stats
from gateway.turns.deletions import ChatDeletions
from gateway.turns.pending import Delivery, Outcome, Pending
from gateway.turns.pipeline import STORE_FULL, Turns
from gateway.turns.waiting import to_waiting
from memory.store import deliveries
from memory.store.database import Store
from memory.store.errors import StoreFull
from memory.store.records import Conversation
from plumbing.meter import QUIET, Meter
from plumbing.tasks import Tasks

if TYPE_CHECKING:
    from gateway.identity import Identities

log = structlog.get_logger("kioku.gateway")

DRAINING = "kioku is restarting; please send that again in a minute."
HELD = "kioku is restarting; it will answer this as soon as it is back."
PRUNE_EVERY = 6 * 3600
TOO_MANY = "Too many messages are waiting here; I will answer the earlier ones first."


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
        meter: Meter = QUIET,
    ) -> None:
        self.store = store
        self.agent = agent
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
            meter,
        )
        self._accepting = True
        self._tasks = Tasks()
        self._pruning = False
        self.pending = Pending()
        self.cursors = Cursors(store, lambda: self.settings.gateway.catch_up)
        self.missed = MissedMessages(self, lambda: self.settings)
        self.edits = Edits(self)

    # -- the adapters' entry point ---------------------------------------------------------

    async def handle(self, event: Event) -> None:
        """Every adapter's `deliver`: a message, what a catch-up pass found, or an edit or
        deletion. It returns once what it was given is stored (or dropped), so the
        adapter may confirm it to its platform; never raises for a bad message, so one
        person's message cannot stop an adapter."""
        if isinstance(event, Missed):
            self._start()
            await self.missed.take(event)
        elif isinstance(event, Changed):
            await self.edits.take(event)
        else:
            await self._inbound(event)
            await self.cursors.seen(event)

    async def _inbound(self, inbound: Inbound) -> None:
        """Admit, route and queue one message (or answer its command).

        A message that becomes a turn is held in the delivery ledger (with its text)
        before this returns, and counts as delivered once its answer went out: a crash
        in between answers it at the next start (`resume`).
        """
        if not inbound.is_direct and not inbound.addressed:
            return  # group chatter not meant for kioku: nothing to look up, nothing stored
        if not self._accepting:
            await self._hold_for_restart(inbound)
            return
        # Before admission: the claimant is a stranger until `kioku setup` names them owner.
        if self.claims.take(inbound.platform, inbound.sender, inbound.text, inbound.is_direct):
            log.info("owner_claimed", platform=inbound.platform)
            await self.outbound.reply(inbound.address, CLAIMED)
            return
        delivery = _delivery(inbound)
        if delivery is not None and not self.pending.claim(delivery):
            log.info("duplicate_dropped", platform=inbound.platform, chat=inbound.chat)
            return
        outcome: Outcome | None = None
        try:
            if delivery is not None and await deliveries.known(self.store, *delivery):
                log.info("duplicate_dropped", platform=inbound.platform, chat=inbound.chat)
                return
            self._start()
            outcome = await self.route(inbound, delivery)
            if outcome == "handled" and delivery is not None:
                await deliveries.record(self.store, *delivery)
        finally:
            if delivery is not None and outcome != "queued":
                self.pending.release(delivery)

    async def _hold_for_restart(self, inbound: Inbound) -> None:
        """While stopping: a message its platform keeps is held in the ledger and answered
        at the next start; any other (the CLI socket's) must be sent again."""
        delivery = _delivery(inbound)
        if delivery is None or not inbound.kept_by_platform:
            await self.outbound.reply(inbound.address, DRAINING)
            return
        if delivery in self.pending or await deliveries.known(self.store, *delivery):
            return
        await deliveries.hold(self.store, *delivery, to_waiting(inbound))
        await self.outbound.reply(inbound.address, HELD)

    async def resume(self) -> int:
        """Answer what was taken in before kioku last stopped and never answered (the
        daemon calls it once the adapters serve); how many messages that is."""
        return await self.missed.resume()

    async def route(self, inbound: Inbound, delivery: Delivery | None) -> Outcome:
        """Where a message goes: a refusal, a command's answer, or a turn in its line."""
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
        if delivery is not None and inbound.kept_by_platform:
            try:
                await deliveries.hold(self.store, *delivery, to_waiting(inbound))
            except StoreFull as exc:
                log.error("store_full", conversation=conversation.key, error=str(exc))
                await self.outbound.reply(inbound.address, STORE_FULL)
                return "refused"
        if delivery is not None:
            self.pending.queued(delivery, conversation.key, inbound)
        queued = self.queues.submit(
            conversation.key,
            partial(self._turn, inbound, person, conversation, delivery, arrived),
            name=f"turn-{inbound.message_id or ''}",
        )
        if not queued:
            if delivery is not None and inbound.kept_by_platform:
                await deliveries.let_go(self.store, *delivery)
            await self.outbound.reply(inbound.address, TOO_MANY)
            return "refused"
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
        return gateway_stats(self.queues, self.sessions, self.missed.reports)

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
        """Cancel the turn in flight and drop the waiting ones: a redelivery may come in
        again, and they are not answered at the next start either."""
        dropped = self.pending.release_line(key)
        if dropped:
            self._tasks.spawn(self._let_go(dropped), f"let-go-{key}")
        return self.queues.stop(key)

    async def _let_go(self, dropped: list[Delivery]) -> None:
        for delivery in dropped:
            await deliveries.let_go(self.store, *delivery)

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
        """The message's turn, as the message reads when it begins (an edit before it
        counts; a deletion before it means no turn); its id stops being held once it is over."""
        try:
            if delivery is not None:
                current = self.pending.begin(delivery)
                if current is None:
                    await deliveries.record(self.store, *delivery)
                    return
                inbound = current
            await self.turns.message(inbound, person, conversation, delivery, arrived)
        finally:
            if delivery is not None:
                self.pending.release(delivery)

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
