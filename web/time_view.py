"""What the Me page shows of time: the person's zone, and their reminders and scheduled
tasks with their next runs in that zone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from memory.schedule.jobs import Job, list_jobs
from memory.schedule.timezones import effective_zone, timezone_of
from memory.schedule.timing import local_time, rule_text, zone_name
from web.context import WebContext

PREVIEW = 120
"""Characters of a job's text or prompt shown in the list."""


@dataclass(frozen=True)
class JobRow:
    """One job as the page lists it."""

    id: int
    name: str | None
    what: str
    preview: str
    schedule: str
    next_runs: list[str]
    target: str
    failing: str | None


async def time_view(ctx: WebContext, person: str) -> dict[str, Any]:
    """The template values of the "Time zone" and "Reminders" sections."""
    own = await timezone_of(ctx.store, person)
    default = ctx.settings.schedule.default_timezone
    zone = effective_zone(own, default)
    now = datetime.fromtimestamp(ctx.clock(), UTC).replace(second=0, microsecond=0)
    return {
        "zone_own": own,
        "zone_effective": zone_name(zone),
        "zone_source": "schedule.default_timezone" if default else "the server's zone",
        "zone_now": local_time(now, zone),
        "jobs": [job_row(job, zone) for job in await list_jobs(ctx.store, person)],
    }


def job_row(job: Job, zone: tzinfo) -> JobRow:
    body = job.text if job.text is not None else job.prompt or ""
    preview = body if len(body) <= PREVIEW else body[: PREVIEW - 1] + "…"
    return JobRow(
        id=job.id,
        name=job.name,
        what="Reminder" if job.text is not None else "Task",
        preview=preview,
        schedule=_schedule(job, zone),
        next_runs=[local_time(run, zone) for run in job.upcoming()],
        target=_target(job),
        failing=job.last_error,
    )


def _schedule(job: Job, zone: tzinfo) -> str:
    if job.when.kind == "once":
        return "once"
    repeat = rule_text(job.when)
    if job.remaining is not None:
        repeat += f", {job.remaining} more"
    if job.until is not None:
        repeat += f", until {local_time(job.until, zone)}"
    return repeat


def _target(job: Job) -> str:
    target = job.target
    if target.chat_kind == "group":
        return f"a {target.platform} group chat"
    identity = f" ({target.identity})" if target.identity else ""
    return f"{target.platform} direct messages{identity}"
