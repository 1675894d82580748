"""/timezone and /reminders: a person sees and sets their time zone, and sees and cancels
their scheduled jobs, with times in their local time.

/timezone works only in a direct message (where someone is is theirs to tell). /reminders
works everywhere, but in a group it lists and cancels only the asker's jobs made in that
group, so nobody's private reminders are read out to the group.
"""

from __future__ import annotations

from datetime import UTC, datetime

import structlog

from agent.local_time import zone_of
from agent.tools.schedule_tool import PAGE, describe, jobs_page, pages
from gateway.commands.context import Context
from inputs.text import shown
from memory.schedule.jobs import Job, NoSuchJob, cancel_job, get_job
from memory.schedule.timezones import set_timezone, timezone_of
from memory.schedule.timing import BadSchedule, local_time

log = structlog.get_logger("kioku.commands")

TIMEZONE_IN_GROUP = "Send /timezone to me in a direct message: where you are is yours to tell."
REMINDERS_USAGE = (
    f"/reminders lists your reminders and scheduled tasks, {PAGE} at a time (/reminders page 2 "
    "for the next ones); /reminders cancel ID cancels one (the ids are in the list)."
)


async def timezone(context: Context[str]) -> str:
    person, store, settings = context.person, context.store, context.settings
    argument = context.argument.strip()
    if argument:
        zone = None if argument.lower() == "clear" else argument
        try:
            await set_timezone(store, person, zone)
        except BadSchedule as exc:
            return f"Not changed: {exc}"
        log.info("timezone_set", person=person, by="chat", cleared=zone is None)
    own = await timezone_of(store, person)
    now = local_time(datetime.now(UTC), await zone_of(store, settings, person))
    if own is None:
        default = settings.schedule.default_timezone or "the server's"
        head = "Your time zone is cleared" if argument else "You have set no time zone"
        return (
            f"{head}: kioku uses its default ({default}); your time now: {now}. "
            "Send /timezone ZONE to set yours, e.g. /timezone Asia/Tokyo."
        )
    head = "Your time zone is now" if argument else "Your time zone is"
    return f"{head} {own}; your time now: {now}. /timezone clear goes back to kioku's default."


async def reminders(context: Context[str]) -> str:
    words = context.argument.split()
    if words and words[0].lower() == "cancel":
        return await _cancel(context, words[1:])
    if not words:
        return await _page(context, 1)
    if words[0].lower() == "page" and len(words) == 2 and _number(words[1]):
        return await _page(context, int(words[1]))
    return f"Unknown /reminders {shown(' '.join(words))}. {REMINDERS_USAGE}"


async def _page(context: Context[str], page: int) -> str:
    where = " made in this group" if context.in_group else ""
    found = await jobs_page(context.store, context.person, _group(context), page)
    if not found.total:
        return (
            f"You have no reminders or scheduled tasks{where}. Ask me for one "
            '("remind me tomorrow at 9 to call the dentist").'
        )
    last = pages(found.total)
    if not found.jobs:
        return (
            f"There is no page {page}: you have {found.total} reminders and scheduled "
            f"tasks{where}, on {last} page(s); send /reminders page 1 to {last}."
        )
    zone = await zone_of(context.store, context.settings, context.person)
    head = f"Your reminders and scheduled tasks{where}"
    if last > 1:
        head += f" (page {page} of {last}, {found.total} in all)"
    lines = [f"{head}:"]
    lines += [f"- {describe(job, zone)}" for job in found.jobs]
    more = found.total - (page - 1) * PAGE - len(found.jobs)
    if more > 0:
        lines.append(f"{more} more: /reminders page {page + 1}")
    lines.append("Send /reminders cancel ID to cancel one.")
    return "\n".join(lines)


def _number(word: str) -> bool:
    """A page or job id as typed: ASCII digits only (int() would take "١٢" or "1_0"), at
    most 30 of them (past 4,300, int() refuses; past 19, it is no id or page anyway)."""
    return word.isascii() and word.isdigit() and len(word) <= 30


def _group(context: Context[str]) -> tuple[str, str] | None:
    """The group chat whose jobs alone are shown here; None in a DM (all the person's)."""
    inbound = context.inbound
    return (inbound.platform, inbound.chat) if context.in_group else None


async def _cancel(context: Context[str], rest: list[str]) -> str:
    if len(rest) != 1 or not _number(rest[0]):
        return "Give one job id: /reminders cancel ID (send /reminders for the ids)."
    job_id = int(rest[0])
    person, store = context.person, context.store
    try:
        if not _here(await get_job(store, job_id, person), context):
            raise NoSuchJob(job_id)
        job = await cancel_job(store, job_id, person)
    except NoSuchJob:
        where = " made in this group" if context.in_group else ""
        return f"You have no job {job_id}{where}; send /reminders for your jobs' ids."
    log.info("job_cancelled", person=person, job=job.id, by="chat")
    return f"Cancelled job {job.id}; it will not run again."


def _here(job: Job, context: Context[str]) -> bool:
    """In a DM every job of the person; in a group the ones made for this group."""
    group = _group(context)
    target = job.target
    return group is None or (
        target.chat_kind == "group" and (target.platform, target.chat) == group
    )
