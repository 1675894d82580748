"""Prompt jobs as turns: a scheduled prompt runs as a turn of its person, in its
conversation's line like any message, and its answer goes back to the scheduler.

The turn is stored as every turn is (the prompt as the person's message, then the
answer) in the session of the job's chat; in a group it is the group's turn, with the
group's memory only. The answer is returned rather than sent: the scheduler records the
attempt right before it sends, so a model that fails, a turn stopped with /stop or cut
by shutdown is a failed attempt, retried later, never a run half-done.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import structlog

from adapters.base import Inbound
from agent.prompt import TurnContext
from agent.turn import Turn
from gateway.sessions import conversation_for

if TYPE_CHECKING:
    from gateway.gateway import Gateway

log = structlog.get_logger("kioku.scheduler")

LONGEST_WAIT = 3600.0
"""How long a scheduled turn may wait in its line and run before the try counts as failed."""


class TurnStopped(RuntimeError):
    """The scheduled turn was cancelled (/stop in its chat, or kioku stopping)."""


class ScheduledTurns:
    """The gateway's side of prompt jobs (`job_delivery.Answers`)."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    async def answer_job(self, inbound: Inbound, person: str, context: TurnContext) -> str:
        gateway = self._gateway
        conversation = conversation_for(inbound, person, gateway.settings.sessions.dm_scope)
        answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def job() -> None:
            if answered.done():
                return  # the scheduler stopped waiting: this try already counts as failed
            try:
                session = await gateway.sessions.open(conversation)
                turn = Turn(session=session, speaker=person, text=inbound.text, context=context)
                outcome = await gateway.agent.respond(turn)
            except Exception as exc:
                if not answered.done():
                    answered.set_exception(exc)
                return
            except BaseException:
                if not answered.done():
                    answered.set_exception(TurnStopped("the scheduled turn was stopped"))
                raise
            gateway.sessions.touch(conversation.key)
            if answered.done():
                return
            if outcome.error is not None:
                answered.set_exception(RuntimeError(f"the model did not answer: {outcome.error}"))
                return
            answered.set_result(outcome.text)
            try:
                await gateway.agent.after_turn(session.id, person)
            except Exception:
                log.exception("after_turn_failed", session=session.id)

        gateway.sessions.start()
        gateway.queues.submit(conversation.key, job, name="scheduled-turn", force=True)
        try:
            return await asyncio.wait_for(answered, LONGEST_WAIT)
        except TimeoutError:
            raise TurnStopped(
                f"the scheduled turn did not finish within {LONGEST_WAIT:g} s"
            ) from None
