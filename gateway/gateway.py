"""The router between adapters and the agent: admission, sessions, queues, slash commands.

`handle` is every adapter's `deliver`. It returns once the message is queued (or
answered, for a command), so a slow model never holds up a platform's event loop.
Turns run in their conversation's FIFO line; a reply that cannot be delivered is
logged with its session id and the turn stays stored, and the line goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import structlog

from adapters.base import Adapter, Address, Delta, Inbound, Outbound
from agent.agent import Agent
from agent.prompt import TurnContext
from agent.providers import OnText
from agent.tools.context import Origin
from agent.turn import Turn
from config.settings import Settings
from gateway.commands.dispatch import Commands
from gateway.commands.parsing import Command, parse
from gateway.deletions import ChatDeletions
from gateway.intake import Intake, take_in
from gateway.owner_claims import CLAIMED, OwnerClaims
from gateway.queues import ConversationQueues, LineState
from gateway.sessions import OpenSession, Sessions, conversation_for
from memory.store import deliveries
from memory.store.database import Store
from memory.store.errors import StoreFull
from memory.store.records import Conversation

if TYPE_CHECKING:
    from gateway.identity import Identities

log = structlog.get_logger("kioku.gateway")

DRAINING = "kioku is restarting; please send that again in a minute."
TURN_FAILED = "Something went wrong while answering; the details are in kioku's log."
STORE_FULL = (
    "I can't answer right now: the disk where I keep our conversations is full, so I "
    "could not save your message. Please send it again once there is space (kioku's "
    "log says where)."
)
PRUNE_EVERY = 6 * 3600
# (platform, chat, platform message id)
Delivery = tuple[str, str, str]
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
    the agent and replies to the adapter that brought the message."""

    def __init__(
        self,
        store: Store,
        agent: Agent,
        identities: Identities,
        settings: Settings,
        outlets: Callable[[str], Adapter | None],
    ) -> None:
        self.store = store
        self.agent = agent
        self.identities = identities
        self.settings = settings
        self.outlets = outlets
        self.queues = ConversationQueues(
            settings.gateway.max_parallel_turns, settings.gateway.max_queued_per_conversation
        )
        self.sessions = Sessions(store, agent, settings.sessions, self._expire)
        self.commands = Commands(store, agent, identities, self)
        self.deletions = ChatDeletions(store, self.sessions, agent.services.deletions)
        self.claims = OwnerClaims()
        self._accepting = True
        self._tasks: set[asyncio.Task[Any]] = set()
        self._housekeeping: asyncio.Task[None] | None = None
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
            await self._send(inbound.address, DRAINING)
            return
        # Before admission: the claimant is a stranger until `kioku setup` names them owner.
        if self.claims.take(inbound.platform, inbound.sender, inbound.text, inbound.is_direct):
            log.info("owner_claimed", platform=inbound.platform)
            await self._send(inbound.address, CLAIMED)
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
                await self._send(inbound.address, admission.reply)
            return "handled"
        if inbound.unreadable:
            await self._send(inbound.address, _unreadable(inbound.unreadable))
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
            lambda: self._turn(inbound, person, conversation, delivery, arrived),
            name=f"turn-{inbound.message_id or ''}",
        )
        if not queued:
            await self._send(inbound.address, TOO_MANY)
            return "refused"
        if delivery is not None:
            self._pending[delivery] = conversation.key
        return "queued"

    # -- lifecycle ---------------------------------------------------------------------------

    def reload(self, settings: Settings) -> None:
        """Apply session and queue limits that can change while running (SIGHUP)."""
        self.settings = settings
        self.sessions.reload(settings.sessions)
        self._spawn(
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
        """Stop timers and lines, then close every open session with reason "shutdown"."""
        self._accepting = False
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            await asyncio.gather(self._housekeeping, return_exceptions=True)
        await self.sessions.stop_timers()
        await self.queues.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.sessions.close_all("shutdown")

    # -- what the commands may ask (commands.Control) ---------------------------------------

    def new_session(self, key: str, inbound: Inbound) -> bool:
        """Queue the close behind the conversation's earlier messages, then confirm."""

        async def job() -> None:
            closed = await self.sessions.close(key, "new")
            text = "New session started." if closed else "No session was open; starting fresh."
            await self._send(inbound.address, text)

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
            await self._send(inbound.address, text)

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
        if self._housekeeping is None:
            self._housekeeping = asyncio.create_task(self._prune(), name="gateway-prune")

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
            await self._send(inbound.address, cancelled)
        try:
            reply = await self.commands.run(inbound, person, key, command)
        except Exception:
            log.exception("command_failed", command=command.name, platform=inbound.platform)
            reply = f"/{command.name} failed; the details are in kioku's log."
        if reply is not None:
            await self._send(inbound.address, reply)

    async def _turn(
        self,
        inbound: Inbound,
        person: str | None,
        conversation: Conversation,
        delivery: Delivery | None,
        arrived: float,
    ) -> None:
        try:
            settled = await self.deletions.settle(inbound, person, conversation.key, arrived)
            if settled.reply is not None:
                await self._send(inbound.address, settled.reply)
            if settled.consumed:
                if delivery is not None:
                    await deliveries.record(self.store, *delivery)
                return
            await self._answer(inbound, person, conversation, delivery)
        except StoreFull as exc:
            log.error("store_full", conversation=conversation.key, error=str(exc))
            await self._send(inbound.address, STORE_FULL)
        except Exception:
            log.exception("turn_failed", conversation=conversation.key)
            await self._send(inbound.address, TURN_FAILED)
        finally:
            if delivery is not None:
                self._pending.pop(delivery, None)

    async def _answer(
        self,
        inbound: Inbound,
        person: str | None,
        conversation: Conversation,
        delivery: Delivery | None,
    ) -> None:
        address = inbound.address
        outlet = self.outlets(inbound.platform)
        if outlet is not None:
            try:
                await outlet.working(address)
            except Exception as exc:
                log.warning("working_failed", platform=inbound.platform, error=repr(exc))
        intake = await self._take_in(inbound)
        if not intake.has_content and delivery is not None:
            await deliveries.record(self.store, *delivery)
        await self._tell(address, intake, more=intake.has_content)
        if not intake.has_content:
            return
        session = await self.sessions.open(conversation)
        turn = Turn(
            session=session,
            speaker=person,
            text=intake.text,
            media=intake.media,
            context=TurnContext(
                when=inbound.received_at.astimezone(),
                platform=inbound.platform,
                speaker_name=inbound.sender_name,
                is_group=not inbound.is_direct,
                reply_to=inbound.reply_to_text,
            ),
            platform_message_id=inbound.message_id,
            origin=Origin(inbound.platform, inbound.chat, inbound.thread, inbound.sender),
            on_stored=None
            if delivery is None
            else lambda: deliveries.record(self.store, *delivery),
        )
        outcome = await self.agent.respond(turn, on_text=self._streamer(outlet, address))
        self.sessions.touch(conversation.key)
        listing = self.deletions.show(conversation.key)
        await self._send(address, outcome.text, session.id, more=listing is not None)
        if listing is not None:
            await self._send(address, listing, session.id)
        try:
            await self.agent.after_turn(session.id, person)
        except Exception:
            log.exception("after_turn_failed", session=session.id)

    async def _take_in(self, inbound: Inbound) -> Intake:
        if not inbound.attachments:
            return Intake(inbound.text, (), (), None)
        return await take_in(inbound, self.agent.media, self.settings.media, self.settings.stt)

    async def _tell(self, address: Address, intake: Intake, *, more: bool) -> None:
        """What was not read and why, then what a voice note was heard as; `more`: the
        answer follows."""
        if intake.notices:
            await self._send(address, "\n".join(intake.notices), more=more or bool(intake.echo))
        if intake.echo:
            await self._send(address, intake.echo, more=more)

    def _streamer(self, outlet: Adapter | None, address: Address) -> OnText | None:
        if outlet is None or not outlet.streams:
            return None
        broken = False

        async def on_text(text: str) -> None:
            nonlocal broken
            if broken:
                return
            try:
                await outlet.stream(Delta(address, text))
            except Exception as exc:
                broken = True
                log.warning("stream_failed", platform=address.platform, error=repr(exc))

        return on_text

    async def _send(
        self, address: Address, text: str, session_id: int | None = None, *, more: bool = False
    ) -> None:
        """Deliver a reply; a failure is logged (the turn is already stored), never raised."""
        outlet = self.outlets(address.platform)
        if outlet is None:
            log.warning("outlet_down", platform=address.platform, session=session_id)
            return
        try:
            long_as_file = self.settings.media.long_replies_as_file
            await outlet.send(Outbound(address, text, long_as_file=long_as_file, more=more))
        except Exception as exc:
            log.warning(
                "send_failed", platform=address.platform, session=session_id, error=repr(exc)
            )

    def _expire(self, key: str, reason: str, session_id: int) -> None:
        async def job() -> None:
            if self.sessions.due(key, reason, session_id):
                await self.sessions.close(key, reason)

        self.queues.submit(key, job, name=f"close-{reason}", force=True)

    def _spawn(self, work: Any, name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _delivery(inbound: Inbound) -> Delivery | None:
    if inbound.message_id is None:
        return None
    return (inbound.platform, inbound.chat, inbound.message_id)


def _unreadable(kinds: tuple[str, ...]) -> str:
    what = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + f" and {kinds[-1]}"
    return f"I can't read {what}; text, photos, voice notes and documents I can."
