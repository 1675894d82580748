"""Delivering one claimed run of a scheduled job: what is said, where, and the record of it.

A `text` job is sent as written, no model call; a `prompt` job runs as a turn of its
person in its conversation, through the gateway's turn pipeline (`Turns.answer_job`),
and its answer is sent. Both leave through the one way out (gateway/outbound.py), so
`media.long_replies_as_file` applies to them as to every answer. The order is the
exactly-once policy: the run is claimed (memory.schedule.jobs) before anything here;
the model answers before `begin_attempt`; `begin_attempt` is recorded right before the
platform call and `mark_sent` right after, so a crash between the two leaves a run
known as unconfirmed, never one sent twice. A failure (platform down, identity
unlinked, the platform refusing) is recorded as a failed attempt with its retry time,
backed off from 30 s doubling to an hour, and retried until it works.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Protocol

import structlog

from adapters.base import Address, Inbound
from agent.prompt import TurnContext
from gateway.outbound import Dispatcher, Undeliverable
from memory.access.identities import identities_of
from memory.schedule.jobs import Job, NoSuchJob, Run, begin_attempt, mark_failed, mark_sent
from memory.schedule.timezones import effective_zone, timezone_of
from memory.schedule.timing import local_time
from memory.store.database import Store
from plumbing.backoff import doubling
from plumbing.meter import QUIET, Meter

log = structlog.get_logger("kioku.scheduler")

FIRST_RETRY = 30.0
LAST_RETRY = 3600.0
SHOWN = 80
"""How much of a missed reminder's text its note quotes."""


class Answers(Protocol):
    """The gateway's side of a prompt job: one turn of the person, answered in its line."""

    async def answer_job(self, inbound: Inbound, person: str, context: TurnContext) -> str: ...


def retry_delay(attempts: int, first: float = FIRST_RETRY) -> float:
    """Seconds before the next try after `attempts` failed ones: `first` (`schedule.retry`,
    30 s), doubling, at most 1 h."""
    return doubling(max(0, attempts - 1), first, LAST_RETRY)


@dataclass(frozen=True)
class Courier:
    """Sends runs through the one way out (`outbound`), prompt jobs' answers too (asked
    of `answers`); `default_zone` is `schedule.default_timezone` as now configured, and
    `first_retry` the wait before a failed send is tried again (`schedule.retry`)."""

    store: Store
    outbound: Dispatcher
    answers: Answers
    default_zone: Callable[[], str | None]
    first_retry: float = FIRST_RETRY
    meter: Meter = QUIET

    async def deliver(self, run: Run) -> None:
        """Send `run` once, or record why not and when to try again; never raises for a
        failed send (the next try is the scheduler's)."""
        try:
            await self._deliver(run)
        except NoSuchJob:
            log.info("job_cancelled_before_send", job=run.job.id, delivery=run.delivery)

    async def _deliver(self, run: Run) -> None:
        job = run.job
        try:
            address = await self._address(job)
            text = await self._text(run, address)
        except Exception as exc:
            await self._failed(await self._begin(run), exc)
            return
        attempt = await self._begin(run)
        try:
            await self.outbound.send(address, text)
        except Exception as exc:
            await self._failed(attempt, exc)
            return
        await mark_sent(self.store, attempt, datetime.now(UTC), "dropped" if run.missed else "sent")
        log.info(
            "job_missed" if run.missed else "job_sent",
            job=job.id,
            person=job.person,
            platform=address.platform,
            delivery=run.delivery,
            late=run.late,
            attempts=attempt.attempts,
        )

    async def _begin(self, run: Run) -> Run:
        """The attempt recorded, with the retry time it gets if it fails: right before the
        platform call, or before recording a failure that came before it."""
        now = datetime.now(UTC)
        retry_at = now + timedelta(seconds=retry_delay(run.attempts + 1, self.first_retry))
        return await begin_attempt(self.store, run, now, retry_at)

    async def _failed(self, run: Run, exc: Exception) -> None:
        error = str(exc) or type(exc).__name__
        retry_at = datetime.now(UTC) + timedelta(
            seconds=retry_delay(run.attempts, self.first_retry)
        )
        await mark_failed(self.store, run, error, retry_at)
        self.meter.scheduled("failed")
        log.warning(
            "job_failed",
            job=run.job.id,
            person=run.job.person,
            platform=run.job.target.platform,
            delivery=run.delivery,
            error=error,
            kind=type(exc).__name__,
            attempts=run.attempts,
            retry_at=retry_at.isoformat(),
        )

    async def _address(self, job: Job) -> Address:
        target = job.target
        self.outbound.outlet(target.platform)  # Undeliverable while the platform is down
        if target.chat_kind == "group" or target.identity is None:
            return Address(target.platform, target.chat, target.thread)
        if target.identity not in await identities_of(self.store, job.person):
            raise Undeliverable(
                f"{target.identity} is no longer one of {job.person}'s identities; link it "
                f"again, or cancel job {job.id} and schedule it to another of theirs"
            )
        user = target.identity.rsplit(":", 1)[1]
        return await self.outbound.direct(target.platform, user, target.thread)

    async def _text(self, run: Run, address: Address) -> str:
        job = run.job
        zone = effective_zone(await timezone_of(self.store, job.person), self.default_zone())
        if run.missed:
            what = job.name or _shown(job.text or job.prompt or "")
            kind = "reminder" if job.text is not None else "scheduled task"
            return (
                f"I missed a {kind} due {local_time(run.due, zone)}, kioku was not running: "
                f"{what} (job {job.id})"
            )
        if job.prompt is not None:
            inbound = Inbound(
                platform=address.platform,
                chat=address.chat,
                sender=job.target.identity or f"job:{job.id}",
                text=job.prompt,
                is_direct=job.target.chat_kind == "dm",
                thread=address.thread,
                addressed=True,
            )
            context = TurnContext(
                when=datetime.now(UTC).astimezone(zone),
                platform=address.platform,
                is_group=job.target.chat_kind == "group",
            )
            text = await self.answers.answer_job(inbound, job.person, context)
        else:
            text = job.text or ""
        if run.late:
            return f"(late: due {late_label(run.due, datetime.now(UTC), zone)}) {text}"
        return text


def late_label(due: datetime, now: datetime, zone: tzinfo) -> str:
    """When a late run was due, as its person reads it: the clock alone for today, the
    day and zone too once it was due on an earlier day (midnight lies between)."""
    local_due = due.astimezone(zone)
    if now.astimezone(zone).date() == local_due.date():
        return local_due.strftime("%H:%M")
    return local_time(due, zone)


def _shown(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN else flat[: SHOWN - 1] + "…"
