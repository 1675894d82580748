"""The turn pipeline: what a queued message becomes, and a scheduled prompt the same way.

A message's turn, in its conversation's line: the answer to a waiting deletion is
settled first (`deletions`), the attachments are taken in (`intake`), the agent answers
in the conversation's session and the reply leaves through the one way out. A scheduled
prompt (`answer_job`) is queued in the same line and goes through the same session and
agent path (`_respond`); only its answer is handed back to the scheduler instead of sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

import structlog

from adapters.base import Address, Inbound
from agent.agent import Agent
from agent.prompt import TurnContext
from agent.providers import OnText
from agent.tools.context import Origin
from agent.turn import Said, Turn, TurnOutcome
from agent.usage import Payer, charger, payer_in
from config.settings import Settings
from gateway.outbound import Dispatcher
from gateway.queues import ConversationQueues
from gateway.sessions import Sessions, conversation_for
from gateway.turns.budget_gate import BudgetGate, scheduled_refusal
from gateway.turns.deletions import ChatDeletions
from gateway.turns.intake import Intake, take_in, turn_context
from gateway.turns.measured import OVER_BUDGET, measure, outcome_of
from gateway.turns.pending import Delivery
from gateway.turns.scheduled_answer import TurnStopped, settle
from gateway.turns.unanswered import keep_unanswered, unanswered_text
from memory.budgets.standing import Allowance
from memory.history.said import Said as StoredSaid
from memory.history.said import answered, find_said
from memory.store import deliveries
from memory.store.database import Store
from memory.store.errors import StoreFull
from memory.store.records import Conversation, Session
from plumbing.meter import QUIET, Meter

log = structlog.get_logger("kioku.gateway")

TURN_FAILED = "Something went wrong while answering; the details are in kioku's log."
STORE_FULL = (
    "I can't answer right now: the disk where I keep our conversations is full, so I "
    "could not save your message. Please send it again once there is space (kioku's "
    "log says where)."
)
Taken = tuple[Inbound, Delivery | None]
"""A message taken in, with its place in the delivery ledger (None: a platform without ids)."""

LONGEST_WAIT = 3600.0
"""How long a scheduled prompt's turn may wait in its line and run before it counts as failed."""
MakeTurn = Callable[[Session], Turn]
"""A turn, once its conversation's session is open."""


class Turns:
    """Runs the turns of the gateway's conversations; `settings` gives the settings as
    now configured (SIGHUP replaces them)."""

    def __init__(
        self,
        store: Store,
        agent: Agent,
        settings: Callable[[], Settings],
        sessions: Sessions,
        queues: ConversationQueues,
        deletions: ChatDeletions,
        outbound: Dispatcher,
        meter: Meter = QUIET,
    ) -> None:
        self.store = store
        self.meter = meter
        self.agent = agent
        self._settings = settings
        self.sessions = sessions
        self.queues = queues
        self.deletions = deletions
        self.outbound = outbound
        self.budgets = BudgetGate(store, agent.budgets, outbound)

    async def answer_job(self, inbound: Inbound, person: str, context: TurnContext) -> str:
        """A scheduled prompt as a turn of `person` in its chat's conversation: queued in
        that conversation's line like a message and answered through the same session and
        agent path, stored as every turn is (in a group, as the group's). The answer is
        returned, not sent: the scheduler records its attempt right before it sends, so a
        model that fails or a turn stopped (/stop, shutdown) raises, a failed try."""
        conversation = conversation_for(inbound, person, self._settings().sessions.dm_scope)
        make = partial(Turn, speaker=person, text=inbound.text, context=context, kind="schedule")
        answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        queued = time.monotonic()

        async def job() -> None:
            if answered.done():
                return  # the scheduler stopped waiting: this try already counts as failed
            began = time.monotonic()
            reached = await self.budgets.reached(person)
            if reached is not None:
                settle(answered, scheduled_refusal(reached))
                measure(self.meter, inbound.platform, OVER_BUDGET, None, queued, began)
                await self.budgets.tell_owner(reached)
                return
            try:
                session, outcome = await self._respond(conversation, make, None)
            except Exception as exc:
                measure(self.meter, inbound.platform, "failed", None, queued, began)
                settle(answered, error=exc)
                return
            except BaseException:
                measure(self.meter, inbound.platform, "stopped", None, queued, began)
                settle(answered, error=TurnStopped("the scheduled turn was stopped"))
                raise
            measure(self.meter, inbound.platform, outcome_of(outcome), outcome, queued, began)
            if answered.done():
                return  # the scheduler gave up waiting meanwhile
            if outcome.error is not None:
                settle(answered, error=RuntimeError(f"the model did not answer: {outcome.error}"))
                return
            settle(answered, outcome.text)
            await self._after(session, person)

        self.sessions.start()
        self.queues.submit(conversation.key, job, name="scheduled-turn", force=True)
        try:
            return await asyncio.wait_for(answered, LONGEST_WAIT)
        except TimeoutError:
            raise TurnStopped(
                f"the scheduled turn did not finish within {LONGEST_WAIT:g} s"
            ) from None

    async def message(
        self,
        inbound: Inbound,
        person: str | None,
        conversation: Conversation,
        delivery: Delivery | None,
        arrived: float,
    ) -> None:
        """A queued message's turn; whatever fails, the person hears of it and the line
        goes on."""

        async def work() -> TurnOutcome | None:
            settled = await self.deletions.settle(inbound, person, conversation.key, arrived)
            if settled.reply is not None:
                await self.outbound.reply(inbound.address, settled.reply)
            if settled.consumed:
                return None
            return await self._answer([(inbound, delivery)], person, conversation)

        await self._answered([(inbound, delivery)], conversation, work, arrived)

    async def missed(
        self,
        messages: Sequence[Taken],
        person: str | None,
        conversation: Conversation,
        unanswered: Sequence[Taken] = (),
    ) -> None:
        """One person's messages missed in one conversation, oldest first: answered once,
        as one turn, each stored as its own message at its own time; `unanswered` (older,
        past `gateway.catch_up.max_age`) are stored before them, not shown to the model."""
        await self._answered(
            [*unanswered, *messages],
            conversation,
            partial(self._answer, messages, person, conversation, unanswered),
        )

    async def held(
        self,
        messages: Sequence[Taken],
        person: str | None,
        conversation: Conversation,
        unanswered: Sequence[Taken] = (),
    ) -> None:
        """Messages held over a restart, some maybe stored before kioku stopped. Those
        stored in the conversation's open session are in its history already (answered
        if kioku's reply to them is stored: it went out, or was a moment from it); the
        others (stored in a session closed since, or not at all) are answered as missed
        ones. With none of those but one cut off, the model answers the history as it
        stands. Unanswered ones are stored unless they are already."""
        if not messages and not unanswered:
            return
        session = await self.sessions.open(conversation)
        new: list[Taken] = []
        cut_off = False
        for message, delivery in messages:
            said = await self._said(delivery)
            if said is None or said.session_id != session.id:
                new.append((message, delivery))
            elif not await answered(self.store, said):
                cut_off = True
        keep = [(m, d) for m, d in unanswered if await self._said(d) is None]
        if new:
            await self.missed(new, person, conversation, keep)
        elif cut_off:
            work = partial(self._answer_history, messages[-1][0], person, conversation, keep)
            await self._answered(messages, conversation, work)
        elif keep:
            await self.unanswered(keep, person, conversation)
        await _record_all(self.store, [d for _, d in (*unanswered, *messages) if d is not None])

    async def unanswered(
        self, messages: Sequence[Taken], person: str | None, conversation: Conversation
    ) -> None:
        """Store missed messages too old to answer (`gateway.catch_up.max_age`): history
        and search have them, the model is not asked about them."""
        work = partial(self._keep_unanswered, messages, person, conversation)
        await self._answered(messages, conversation, work)

    async def _answer_history(
        self,
        inbound: Inbound,
        person: str | None,
        conversation: Conversation,
        unanswered: Sequence[Taken],
    ) -> TurnOutcome | str:
        """The model answers the session's history as it stands (`Turn.stored`)."""
        reached = await self.budgets.reached(person)
        if reached is not None:
            await self._refuse(reached, inbound, unanswered, person, conversation)
            return OVER_BUDGET
        await self.outbound.working(inbound.address)
        await self._keep_unanswered(unanswered, person, conversation)
        make = partial(
            Turn,
            speaker=person,
            text="",
            context=turn_context(inbound, inbound.received_at),
            origin=Origin(inbound.platform, inbound.chat, inbound.thread, inbound.sender),
            stored=True,
        )
        session, outcome = await self._respond(
            conversation, make, self.outbound.streamer(inbound.address)
        )
        await self.outbound.reply(inbound.address, outcome.text, session.id)
        await self._after(session, person)
        return outcome

    async def _said(self, delivery: Delivery | None) -> StoredSaid | None:
        return None if delivery is None else await find_said(self.store, *delivery)

    async def _answered(
        self,
        messages: Sequence[Taken],
        conversation: Conversation,
        work: Callable[[], Awaitable[TurnOutcome | str | None]],
        arrived: float | None = None,
    ) -> None:
        """Run a turn's `work` (`arrived`: when its message was queued, if it was one);
        whatever fails, the person hears of it and the line goes on. Its messages stop
        waiting in the ledger once it is over, answered or failed; a turn cancelled (kioku
        stopping) leaves them waiting, answered at the next start."""
        address = messages[-1][0].address
        platform = messages[-1][0].platform
        began = time.monotonic()
        try:
            outcome = await work()
        except StoreFull as exc:
            measure(self.meter, platform, "store_full", None, arrived, began)
            log.error("store_full", conversation=conversation.key, error=str(exc))
            await self.outbound.reply(address, STORE_FULL)
        except Exception:
            measure(self.meter, platform, "failed", None, arrived, began)
            log.exception("turn_failed", conversation=conversation.key)
            await self.outbound.reply(address, TURN_FAILED)
        except BaseException:
            measure(self.meter, platform, "stopped", None, arrived, began)
            raise
        else:
            answer = outcome if isinstance(outcome, TurnOutcome) else None
            measure(self.meter, platform, outcome_of(outcome), answer, arrived, began)
        await _record_all(self.store, [d for _, d in messages if d is not None])

    async def _keep_unanswered(
        self, messages: Sequence[Taken], person: str | None, conversation: Conversation
    ) -> Session | None:
        return await keep_unanswered(
            self.store, self.sessions, [m for m, _ in messages], person, conversation
        )

    async def _refuse(
        self,
        reached: Allowance,
        inbound: Inbound,
        messages: Sequence[Taken],
        person: str | None,
        conversation: Conversation,
    ) -> None:
        """A person over budget: their messages are kept in history (unanswered, the model
        sees them once it answers again), they are told why there is no answer, and the
        owner is told once."""
        session = await self._keep_unanswered(messages, person, conversation)
        if session is not None:
            await self.agent.reload(session.id)
        await self.budgets.refuse(reached, inbound.address)

    async def _answer(
        self,
        messages: Sequence[Taken],
        person: str | None,
        conversation: Conversation,
        unanswered: Sequence[Taken] = (),
    ) -> TurnOutcome | str | None:
        """The last of `messages` is the turn's own; those before it are answered with it;
        its outcome, or None when nothing in them could be read (nothing to answer). A
        person over budget gets no answer (`_refuse`), checked before anything is read."""
        inbound = messages[-1][0]
        address = inbound.address
        reached = await self.budgets.reached(person)
        if reached is not None:
            await self._refuse(reached, inbound, [*unanswered, *messages], person, conversation)
            return OVER_BUDGET
        await self.outbound.working(address)
        said: list[Said] = []
        for index, (message, _) in enumerate(messages):
            intake = await self._take_in(message, payer_in(conversation, person))
            more = intake.has_content or index < len(messages) - 1
            await self._tell(address, intake, more=more)
            if intake.has_content:
                said.append(
                    Said(intake.text, message.received_at, message.message_id, intake.media)
                )
        if not said:
            await self._keep_unanswered(unanswered, person, conversation)
            return None
        make = partial(
            Turn,
            speaker=person,
            text=said[-1].text,
            media=said[-1].media,
            earlier=tuple(said[:-1]),
            unanswered=tuple(
                Said(unanswered_text(message), message.received_at, message.message_id)
                for message, _ in unanswered
            ),
            context=turn_context(inbound, said[-1].when),
            platform_message_id=said[-1].platform_message_id,
            origin=Origin(inbound.platform, inbound.chat, inbound.thread, inbound.sender),
        )
        session, outcome = await self._respond(conversation, make, self.outbound.streamer(address))
        listing = self.deletions.show(conversation.key)
        await self.outbound.reply(address, outcome.text, session.id, more=listing is not None)
        if listing is not None:
            await self.outbound.reply(address, listing, session.id)
        await self._after(session, person)
        return outcome

    async def _respond(
        self, conversation: Conversation, make: MakeTurn, on_text: OnText | None
    ) -> tuple[Session, TurnOutcome]:
        """The one turn path, a message's and a scheduled prompt's: the conversation's
        session (opened if need be), the agent's answer, the idle timer restarted."""
        session = await self.sessions.open(conversation)
        outcome = await self.agent.respond(make(session), on_text=on_text)
        self.sessions.touch(conversation.key)
        return session, outcome

    async def _after(self, session: Session, person: str | None) -> None:
        """Once the answer is out (or handed over): compaction and a due review."""
        try:
            await self.agent.after_turn(session.id, person)
        except Exception:
            log.exception("after_turn_failed", session=session.id)

    async def _take_in(self, inbound: Inbound, payer: Payer) -> Intake:
        """`inbound`'s files read; a model call made for it is charged to `payer`."""
        if not inbound.attachments:
            return Intake(inbound.text, (), (), None)
        settings = self._settings()
        charged = charger(self.store, "media", payer, self.meter)
        return await take_in(inbound, self.agent.media, settings.media, settings.stt, charged)

    async def _tell(self, address: Address, intake: Intake, *, more: bool) -> None:
        """What was not read and why, then what a voice note was heard as; `more`: the
        answer follows."""
        if intake.notices:
            await self.outbound.reply(
                address, "\n".join(intake.notices), more=more or bool(intake.echo)
            )
        if intake.echo:
            await self.outbound.reply(address, intake.echo, more=more)


async def _record_all(store: Store, taken: Sequence[Delivery]) -> None:
    for delivery in taken:
        await deliveries.record(store, *delivery)
