"""The `schedule` tool: reminders and scheduled tasks the model sets up for the speaker.

A job always belongs to the person speaking and goes to the chat the request came from,
or (`to`) to another account of that same person, found among their own identities;
there is no way to name anyone else. In a group a job for the group's chat needs the
owner or `schedule.groups = true`, and listing or cancelling there sees only the jobs
made in that group, so nobody's private reminders are read out to the group. Times in
the answers are the person's local time, so the model can confirm them as said.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, tzinfo
from typing import Any

from agent.local_time import zone_of
from agent.tools.context import ToolContext
from agent.tools.registry import Tool, ToolError
from inputs.durations import parse_duration
from inputs.text import shown
from memory.access.identities import identities_of
from memory.access.people import OWNER
from memory.schedule.jobs import (
    Job,
    JobPage,
    NewJob,
    NoSuchJob,
    Target,
    cancel_job,
    create_job,
    get_job,
    page_of_jobs,
)
from memory.schedule.records import MAX_COUNT
from memory.schedule.timing import BadSchedule, local_time, parse_when, rule_text
from memory.store.database import Store

SHOWN_RUNS = 3
PAGE = 20
"""Jobs a `list` (and `/reminders`) shows at once."""
UNASKED_NEVER = "cli"
NO_CLI = (
    "The terminal (kioku chat) cannot be written to unasked, so a reminder cannot go there. "
    'Give `to` with another platform of the person\'s ("telegram", "discord", "slack").'
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"enum": ["create", "list", "cancel"]},
        "at": {
            "type": "string",
            "description": "once, at this ISO 8601 date-time (no offset: the person's local time)",
        },
        "in": {"type": "string", "description": "once, after this long: 90s, 20m, 2h, 1d, 1w"},
        "cron": {
            "type": "string",
            "description": "repeating, on this 5-field cron expression in the person's zone",
        },
        "every": {"type": "string", "description": "repeating, this often: 15m, 2h, 1d, 1w"},
        "text": {
            "type": "string",
            "minLength": 1,
            "description": "a plain reminder: sent as written, no model call",
        },
        "prompt": {
            "type": "string",
            "minLength": 1,
            "description": "a task: run as a message of the person, and your answer sent",
        },
        "until": {
            "type": "string",
            "description": "repeating jobs stop after this ISO 8601 date-time (local if no offset)",
        },
        "count": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_COUNT,
            "description": "repeating jobs stop after this many runs",
        },
        "name": {"type": "string", "maxLength": 80, "description": "a short name to list it by"},
        "to": {
            "type": "string",
            "maxLength": 32,
            "description": "deliver to the person's own direct chat on this platform "
            '("telegram", "discord", "slack") instead of this chat',
        },
        "id": {"type": "integer", "description": "the job to cancel (ids come from list)"},
        "page": {
            "type": "integer",
            "minimum": 1,
            "description": f"with list: which page of {PAGE} jobs (default 1, the next to run)",
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Reminders and scheduled tasks for the person speaking. `create` with exactly one of "
    "`at`, `in`, `cron`, `every`, and exactly one of `text` (a reminder sent as written) or "
    "`prompt` (run later as their message, with their memory and tools; your answer is "
    "sent); optional `until`/`count` for repeating ones, `name`, and `to` (a platform name) "
    "to deliver to their own direct chat there instead of this chat. It answers with the "
    "job's id and next runs in their local time: confirm those to the person. `list` shows "
    f"their jobs, {PAGE} at a time (`page` for more); `cancel` takes an `id`. Times without "
    "an offset are their local time."
)
CREATE_ONLY = ("at", "in", "cron", "every", "text", "prompt", "until", "count", "name", "to")
NOT_THEIRS = (
    "There is no job {id} of this person{where}. Call schedule with action list to see "
    "the ids of their jobs."
)


async def handle(arguments: dict[str, Any], ctx: ToolContext) -> str:
    if ctx.speaker is None:
        raise ToolError(
            "kioku does not know who is speaking, so it cannot schedule anything for them. "
            "They can send kioku a direct message first."
        )
    action = arguments["action"]
    if action != "list" and "page" in arguments:
        raise ToolError(f"`page` goes with action list; call {action} without it.")
    if action == "create":
        return await _create(arguments, ctx, ctx.speaker)
    misplaced = [key for key in CREATE_ONLY if key in arguments]
    if misplaced:
        raise ToolError(
            f"{', '.join(misplaced)} only go with action create; call {action} with "
            + ("`id` alone." if action == "cancel" else "`page` at most.")
        )
    if action == "list":
        return await _list(ctx, ctx.speaker, arguments.get("page", 1))
    return await _cancel(arguments, ctx, ctx.speaker)


async def _create(arguments: dict[str, Any], ctx: ToolContext, person: str) -> str:
    if "id" in arguments:
        raise ToolError("`id` goes with action cancel; a new job gets its id when created.")
    services = ctx.services
    settings = services.settings.schedule
    zone = await zone_of(services.store, services.settings, person)
    now = datetime.now(UTC)
    target = await _target(arguments.get("to"), ctx, person)
    if target.chat_kind == "group" and person != OWNER and not settings.groups:
        raise ToolError(
            "Only kioku's owner may schedule messages to a group here (schedule.groups is "
            "off). Offer to deliver it to the person's own direct chat instead (`to`: \""
            f'{target.platform}"), or ask them to message you directly.'
        )
    try:
        when = await asyncio.to_thread(  # a cron's runs are walked: off the event loop
            parse_when,
            at=arguments.get("at"),
            in_=arguments.get("in"),
            cron=arguments.get("cron"),
            every=arguments.get("every"),
            zone=zone,
            now=now,
            min_interval=parse_duration(settings.min_interval),
        )
        job = await create_job(
            services.store,
            NewJob(
                person=person,
                when=when,
                target=target,
                text=arguments.get("text"),
                prompt=arguments.get("prompt"),
                name=arguments.get("name"),
                until=_instant(arguments.get("until"), zone),
                count=arguments.get("count"),
            ),
            now=now,
            max_jobs=settings.max_jobs_per_person,
        )
    except BadSchedule as exc:
        raise ToolError(f"Not scheduled: {exc}") from exc
    runs = job.upcoming(SHOWN_RUNS)
    shown = "; ".join(local_time(run, zone) for run in runs) or "none"
    return (
        f"Scheduled job {job.id} ({rule_text(job.when)}, {_where(job.target, ctx)}). "
        f"Next {'run' if len(runs) == 1 else 'runs'}: {shown}. "
        "Done; confirm the time to the person in their words, and do not create it again."
    )


async def _list(ctx: ToolContext, person: str, page: int) -> str:
    where = " made in this group" if ctx.is_group else ""
    found = await jobs_page(ctx.services.store, person, _group(ctx), page)
    if not found.total:
        return f"The person has no scheduled jobs{where}."
    if not found.jobs:
        raise ToolError(
            f"There is no page {page}: the person has {found.total} scheduled jobs{where}, "
            f"{pages(found.total)} page(s) of {PAGE}. Call list with a page from 1 to "
            f"{pages(found.total)}."
        )
    zone = await zone_of(ctx.services.store, ctx.services.settings, person)
    first = (page - 1) * PAGE + 1
    span = f"{first} to {first + len(found.jobs) - 1} of {found.total}"
    lines = [f"The person's scheduled jobs{where} ({span}, the next to run first):"]
    lines += [f"- {describe(job, zone)} ({_where(job.target, ctx)})" for job in found.jobs]
    more = found.total - first - len(found.jobs) + 1
    if more > 0:
        lines.append(f"{more} more: call list with page {page + 1}.")
    return "\n".join(lines)


async def jobs_page(store: Store, person: str, group: tuple[str, str] | None, page: int) -> JobPage:
    """Page `page` (from 1) of `person`'s jobs, `PAGE` to a page; in a group (`group`), only
    the ones made for it. A page past the end holds no jobs (`total` still counts them)."""
    limit = PAGE if page >= 1 else 0
    return await page_of_jobs(store, person, group=group, offset=(page - 1) * PAGE, limit=limit)


def pages(total: int) -> int:
    """How many pages `total` jobs fill."""
    return max(1, -(-total // PAGE))


def _group(ctx: ToolContext) -> tuple[str, str] | None:
    """The group chat whose jobs alone are seen here; None in a DM (all the person's)."""
    if not ctx.is_group:
        return None
    origin = ctx.origin
    # A group turn without an origin sees no job: no chat matches the empty platform.
    return ("", "") if origin is None else (origin.platform, origin.chat)


async def _cancel(arguments: dict[str, Any], ctx: ToolContext, person: str) -> str:
    if "id" not in arguments:
        raise ToolError("Give the `id` of the job to cancel; action list shows the ids.")
    job_id = arguments["id"]
    where = " made in this group" if ctx.is_group else ""
    try:
        if not _visible(await get_job(ctx.services.store, job_id, person), ctx):
            raise NoSuchJob(job_id)
        job = await cancel_job(ctx.services.store, job_id, person)
    except NoSuchJob as exc:
        # Whether the id is someone else's or nobody's is not the model's to know.
        raise ToolError(NOT_THEIRS.format(id=job_id, where=where)) from exc
    return f"Cancelled job {job.id} ({_label(job)}); it will not run again."


def describe(job: Job, zone: tzinfo) -> str:
    """One job for a list: id, what it sends, how it repeats, its next run (local)."""
    next_run = "no further runs" if job.next_run is None else local_time(job.next_run, zone)
    return f"{job.id}: {_label(job)} — {rule_text(job.when)}, next {next_run}"


def _label(job: Job) -> str:
    if job.name:
        return job.name
    body = job.text if job.text is not None else f"task: {job.prompt}"
    flat = " ".join((body or "").split())
    return flat if len(flat) <= 60 else flat[:59] + "…"


def _visible(job: Job, ctx: ToolContext) -> bool:
    """In a group, only the jobs made for this group; in a DM, all of the person's."""
    group = _group(ctx)
    target = job.target
    return group is None or (
        target.chat_kind == "group" and (target.platform, target.chat) == group
    )


def _where(target: Target, ctx: ToolContext) -> str:
    origin = ctx.origin
    here = origin is not None and (target.platform, target.chat, target.thread) == (
        origin.platform,
        origin.chat,
        origin.thread,
    )
    if here:
        return "to this chat"
    return (
        f"to the {target.platform} group"
        if target.chat_kind == "group"
        else (f"to their {target.platform} direct chat")
    )


async def _target(to: str | None, ctx: ToolContext, person: str) -> Target:
    """This chat, or the person's own direct chat on platform `to`: only their own linked
    accounts are looked at (the one they write from first), so no other person's can be
    named. The daemon opens that direct chat when it sends."""
    origin = ctx.origin
    if to is None or (origin is not None and to == origin.platform and not ctx.is_group):
        if origin is None:
            raise ToolError(
                "This conversation has no chat to deliver to; give `to` with a platform of "
                "the person's (telegram, discord, slack)."
            )
        if origin.platform == UNASKED_NEVER and not ctx.is_group:
            raise ToolError(NO_CLI)
        kind = "group" if ctx.is_group else "dm"
        return Target(origin.platform, origin.chat, origin.thread, kind, origin.identity)
    platform = to.strip().lower()
    if platform == UNASKED_NEVER:
        raise ToolError(NO_CLI)
    identities = await identities_of(ctx.services.store, person)
    theirs = [identity for identity in identities if identity.split(":", 1)[0] == platform]
    if not theirs:
        accounts = sorted({identity.split(":", 1)[0] for identity in identities})
        raise ToolError(
            f"The person has no {platform} account linked to kioku (theirs: "
            f"{', '.join(accounts) or 'none'}). Leave out `to` to deliver here, or ask them "
            "to link that account with /link."
        )
    speaking = origin.identity if origin is not None else None
    identity = speaking if speaking in theirs else theirs[0]
    return Target(platform, identity.rsplit(":", 1)[1], "", "dm", identity)


def _instant(value: str | None, zone: tzinfo) -> datetime | None:
    """`until` as an aware UTC datetime; without an offset it is the person's local time."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise BadSchedule(
            f"`until` {shown(value)} is not an ISO 8601 date-time; send e.g. 2026-12-31T18:00"
        ) from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    return parsed.astimezone(UTC)


TOOL = Tool(
    name="schedule",
    description=DESCRIPTION,
    input_schema=SCHEMA,
    handler=handle,
    sequential=True,
)
