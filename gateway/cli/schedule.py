"""`kioku schedule`: the owner's view of everyone's reminders and scheduled tasks.

The commands write state.db directly (WAL lets them run beside the daemon), then tell a
running daemon over its socket (`schedule_changed`) so its scheduler looks again; with
no daemon running, a job added or run now goes out when kioku next starts. Times are
shown in each person's own zone. Exit codes: 0 done, 1 refused, 2 usage error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

from gateway.cli.common import (
    EXIT_USAGE,
    fail,
    logged_settings,
    person_id,
    utf8_options,
    with_store,
)

if TYPE_CHECKING:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from config.settings import Settings
    from memory.schedule.jobs import Job, Target
    from memory.store.database import Store

app = typer.Typer(
    help="Reminders and scheduled tasks: list, add, cancel, or run one now.",
    no_args_is_help=True,
)
SOCKET_TIMEOUT = 5.0
SHOWN = 50


async def _zone(store: Store, settings: Settings, person: str) -> ZoneInfo:
    from memory.schedule.timezones import effective_zone, timezone_of

    return effective_zone(await timezone_of(store, person), settings.schedule.default_timezone)


def _wake_daemon(settings: Settings) -> str:
    """Tell a running daemon that jobs changed; what to print about it."""
    from adapters.cli.names import socket_path
    from gateway.client.socket_client import DaemonError, NoAnswer, NotRunning, SocketClient

    try:
        with SocketClient(socket_path(settings.home), SOCKET_TIMEOUT) as client:
            client.schedule_changed()
    except NotRunning:
        return (
            "kioku is not running: the job is sent when it starts (late ones as the grace allows)."
        )
    except (DaemonError, NoAnswer, OSError) as exc:
        return f"The running kioku was not told ({exc}); it sees the change within 15 minutes."
    return "The running kioku was told."


@app.command("list")
def list_command(
    person: str | None = typer.Option(
        None, "--person", callback=person_id, help="Only this person's jobs (default: everyone's)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show the jobs with their next run, in each person's local time."""
    from memory.access.identities import get_person
    from memory.schedule.jobs import list_jobs
    from memory.schedule.timing import local_time

    settings = logged_settings()

    async def work(store: Store) -> list[tuple[Job, str]] | None:
        if person is not None and await get_person(store, person) is None:
            return None
        rows = []
        for job in await list_jobs(store, person):
            zone = await _zone(store, settings, job.person)
            rows.append((job, local_time(job.next_run, zone) if job.next_run else "finished"))
        return rows

    rows = with_store(settings, work)
    if rows is None:
        fail(f"no person {person!r}: `kioku people list` shows who there is")
    if as_json:
        typer.echo(json.dumps([job.to_json() for job, _ in rows], ensure_ascii=False, indent=2))
        return
    if not rows:
        typer.echo("No scheduled jobs." if person is None else f"{person} has no scheduled jobs.")
        return
    for job, next_run in rows:
        typer.echo(_line(job, next_run))


def _line(job: Job, next_run: str) -> str:
    from memory.schedule.timing import rule_text

    what = job.name or _shown(job.text if job.text is not None else f"prompt: {job.prompt}")
    to = job.target.identity or f"{job.target.platform}:{job.target.chat}"
    problem = f"  [{job.failures} failed: {job.last_error}]" if job.last_error else ""
    return (
        f"{job.id}  {job.person}  next {next_run}  ({rule_text(job.when)}) to {to}: {what}{problem}"
    )


def _shown(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN else flat[: SHOWN - 1] + "…"


@app.command("add")
def add_command(
    person: str = typer.Option(..., "--person", callback=person_id, help="Whose job it is."),
    to: str = typer.Option(
        ..., "--to", help="One of the person's identities to send to, e.g. telegram:123."
    ),
    at: str | None = typer.Option(
        None, "--at", help="ISO 8601 date-time; without an offset, the person's local time."
    ),
    in_: str | None = typer.Option(None, "--in", help="A delay: 90s, 20m, 2h, 1d, 1w."),
    cron: str | None = typer.Option(
        None, "--cron", help="A 5-field cron expression in the person's zone, e.g. '0 8 * * 1'."
    ),
    every: str | None = typer.Option(
        None, "--every", help="A period of at least schedule.min_interval, e.g. 1h."
    ),
    text: str | None = typer.Option(None, "--text", help="Sent as written (no model call)."),
    prompt: str | None = typer.Option(
        None, "--prompt", help="Run as a turn of the person; the answer is sent."
    ),
    name: str | None = typer.Option(None, "--name", help="A short name shown in lists."),
    until: str | None = typer.Option(
        None, "--until", help="A repeating job ends then (ISO 8601; local time without offset)."
    ),
    count: int | None = typer.Option(
        None, "--count", help="A repeating job runs this many times (at most a million), then ends."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the job as `kioku schedule list --json` shows it."
    ),
) -> None:
    """Schedule a reminder (--text) or a task (--prompt) for a person, sent to one of theirs."""
    from memory.schedule.timing import BadSchedule

    asked = NewJobOptions(person, to, at, in_, cron, every, text, prompt, name, until, count)
    _check_usage(asked)
    settings = logged_settings()
    if to.partition(":")[0] == "cli":
        fail(
            f"{to}: the CLI has no chat kioku can write to unasked; give one of {person}'s "
            "Telegram, Discord or Slack identities"
        )
    try:
        job, runs = with_store(settings, lambda store: _create(store, settings, asked))
    except (BadSchedule, LookupError) as exc:
        fail(str(exc))
    woken = _wake_daemon(settings)
    if as_json:
        typer.echo(json.dumps(job.to_json(), ensure_ascii=False, indent=2))
        typer.echo(woken, err=True)  # stdout stays one JSON document
        return
    typer.echo(f"Scheduled job {job.id} for {person}, to {to}: next {', '.join(runs) or 'never'}.")
    typer.echo(woken)


@dataclass(frozen=True)
class NewJobOptions:
    """What `schedule add` was given, passed whole from the command to its checks and work."""

    person: str
    to: str
    at: str | None
    in_: str | None
    cron: str | None
    every: str | None
    text: str | None
    prompt: str | None
    name: str | None
    until: str | None
    count: int | None


def _check_usage(asked: NewJobOptions) -> None:
    """The usage errors (exit 2): text that is not UTF-8, not exactly one time and one
    content option."""
    options = {"--to": asked.to, "--at": asked.at, "--in": asked.in_, "--cron": asked.cron}
    utf8_options(
        {
            **options,
            "--every": asked.every,
            "--text": asked.text,
            "--prompt": asked.prompt,
            "--name": asked.name,
            "--until": asked.until,
        }
    )
    if sum(option is not None for option in (asked.at, asked.in_, asked.cron, asked.every)) != 1:
        fail("give exactly one of --at, --in, --cron and --every", EXIT_USAGE)
    if (asked.text is None) == (asked.prompt is None):
        fail(
            "give exactly one of --text (sent as written) and --prompt (answered by the model)",
            EXIT_USAGE,
        )


async def _create(store: Store, settings: Settings, asked: NewJobOptions) -> tuple[Job, list[str]]:
    """The job, stored, and its next runs in the person's local time; LookupError for a
    person or identity that is not theirs, BadSchedule for a time that cannot be."""
    from datetime import UTC, datetime

    from inputs.durations import parse_duration
    from memory.access.identities import get_person, identities_of
    from memory.schedule.jobs import NewJob, create_job
    from memory.schedule.timing import local_time, parse_when, upcoming

    person, to = asked.person, asked.to
    if await get_person(store, person) is None:
        raise LookupError(f"no person {person!r}: `kioku people list` shows who there is")
    mine = await identities_of(store, person)
    if to not in mine:
        shown = ", ".join(i for i in mine if not i.startswith("cli:")) or "none yet"
        raise LookupError(f"{to} is not one of {person}'s identities ({shown})")
    zone = await _zone(store, settings, person)
    now = datetime.now(UTC)
    when = parse_when(
        at=asked.at,
        in_=asked.in_,
        cron=asked.cron,
        every=asked.every,
        zone=zone,
        now=now,
        min_interval=parse_duration(settings.schedule.min_interval),
    )
    new = NewJob(
        person=person,
        when=when,
        target=_target(to),
        text=asked.text,
        prompt=asked.prompt,
        name=asked.name,
        until=None if asked.until is None else _instant(asked.until, zone),
        count=asked.count,
    )
    job = await create_job(store, new, now=now, max_jobs=settings.schedule.max_jobs_per_person)
    runs = upcoming(when, now, until=job.until, remaining=job.remaining)
    return job, [local_time(run, zone) for run in runs]


def _target(identity: str) -> Target:
    """The DM of `identity`, by its user id (a Telegram chat id; Discord and Slack open the
    DM channel when the job is sent)."""
    from memory.schedule.jobs import Target

    platform, _, user = identity.partition(":")
    return Target(platform, user.rsplit(":", 1)[-1], "", "dm", identity)


def _instant(text: str, zone: ZoneInfo) -> datetime:
    from datetime import UTC, datetime

    from inputs.text import shown
    from memory.schedule.timing import BadSchedule

    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise BadSchedule(
            f"--until {shown(text)} is not an ISO 8601 date-time; write e.g. 2026-12-31T18:00"
        ) from None
    return (value if value.tzinfo else value.replace(tzinfo=zone)).astimezone(UTC)


@app.command("cancel")
def cancel_command(
    job_id: int = typer.Argument(..., help="The job's id (`kioku schedule list`)."),
) -> None:
    """Cancel a job: it is never sent again."""
    from memory.schedule.jobs import NoSuchJob, cancel_job

    settings = logged_settings()
    try:
        job = with_store(settings, lambda store: cancel_job(store, job_id, None))
    except NoSuchJob as exc:
        fail(str(exc))
    typer.echo(f"Cancelled job {job.id} of {job.person}.")
    typer.echo(_wake_daemon(settings))


@app.command("run")
def run_command(
    job_id: int = typer.Argument(..., help="The job's id (`kioku schedule list`)."),
) -> None:
    """Send a job now (to try it); a repeating one then goes on as scheduled."""
    from datetime import UTC, datetime

    from memory.schedule.jobs import NoSuchJob, run_now

    settings = logged_settings()
    try:
        job = with_store(settings, lambda store: run_now(store, job_id, datetime.now(UTC)))
    except NoSuchJob as exc:
        fail(str(exc))
    typer.echo(f"Job {job.id} of {job.person} is due now.")
    typer.echo(_wake_daemon(settings))


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="schedule")
