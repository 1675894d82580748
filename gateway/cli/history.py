"""`kioku history`: the owner's view of past conversations — list them, delete what
should go, and choose how long a person's are kept.

Every deletion goes through `memory.history.erase`, as the web page, chat and the
retention sweep do: it lists what will go, asks on a terminal (`--yes` skips the
question; without a terminal and without `--yes` it refuses), then deletes it and
scrubs it from the database file. It works beside a running daemon: a conversation
whose open session loses turns starts afresh with its next message.
Exit codes: 0 done (or nothing matched), 1 refused, 2 usage error.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING

import typer

from config.loggers import get_logger
from gateway.cli.common import (
    fail,
    logged_settings,
    person_id,
    with_store,
)

if TYPE_CHECKING:
    from config.settings import Settings
    from memory.history.plan import Plan
    from memory.store.database import Store

SHOWN = 50
log = get_logger("kioku.history")

history = typer.Typer(
    help="Past conversations: list them, delete sessions or messages, set how long they are kept.",
    no_args_is_help=True,
)


def _date(value: str | None) -> datetime | None:
    """`--before`: a date (midnight, local time) or a date and time; an offset is kept."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not a date; write it as 2026-01-01 (or 2026-01-01T08:30)"
        ) from None
    return moment if moment.tzinfo is not None else moment.astimezone()


async def _known_person(store: Store, person: str | None) -> None:
    from memory.access.identities import get_person

    if person is not None and await get_person(store, person) is None:
        raise LookupError(f"no person {person!r}; `kioku people list` shows them")


@history.command("list")
def history_list(
    person: str | None = typer.Option(
        None, "--person", callback=person_id, help="Only the sessions this person took part in."
    ),
    limit: int = typer.Option(200, "--limit", min=1, max=100_000, help="Newest N sessions."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show sessions newest first: name, id, platform, dates, title, turn count."""
    from memory.history.listing import list_sessions

    settings = logged_settings()

    async def work(store: Store):
        await _known_person(store, person)
        return await list_sessions(store, person, limit=limit)

    try:
        found = with_store(settings, work)
    except LookupError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps([s.to_json() for s in found], ensure_ascii=False, indent=2))
        return
    if not found:
        typer.echo("No sessions." if person is None else f"No sessions with {person}.")
        return
    for s in found:
        ended = "open" if s.ended_at is None else f"{s.ended_at.astimezone():%Y-%m-%d %H:%M}"
        who = f" {s.person}" if s.person else ""
        typer.echo(
            f"{s.id:>6}  {s.name}  {s.platform} {s.kind}{who}  "
            f"{s.started_at.astimezone():%Y-%m-%d %H:%M} to {ended}  {s.turns} turns  "
            f"{s.title or 'untitled'}"
        )


@history.command("delete")
def history_delete(
    session: str | None = typer.Argument(
        None, help="A session's id or name (`kioku history list` shows both)."
    ),
    person: str | None = typer.Option(
        None,
        "--person",
        callback=person_id,
        help="Only this person's history: their DMs, and their own turns in groups.",
    ),
    message: list[int] = typer.Option(
        [],
        "--message",
        min=1,
        max=2**63 - 1,
        help="A message (turn) id; may be given several times.",
    ),
    before: str | None = typer.Option(
        None, "--before", help="Everything said before this date (2026-01-01, local time)."
    ),
    matching: str | None = typer.Option(
        None, "--matching", help="Every message holding this text (any case)."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Delete without asking."),
) -> None:
    """Delete sessions or messages for good: lists what will go and asks first."""
    moment = _date(before)
    if not yes and not sys.stdin.isatty():
        fail(
            "refused: `kioku history delete` asks before deleting and there is no terminal "
            "to ask on; pass --yes to delete without asking"
        )
    settings = logged_settings()
    plan = _deletion_plan(settings, session, person, tuple(message), moment, matching)
    if plan.is_empty:
        typer.echo("Nothing matches; nothing was deleted.")
        return
    typer.echo(f"This deletes, for good ({plan.totals()}):")
    typer.echo("\n".join(f"  {line}" for line in plan.describe(limit=SHOWN)))
    if not yes and not typer.confirm("Delete it?", default=False):
        fail("Nothing was deleted.")
    _erase(settings, plan)


def _deletion_plan(
    settings: Settings,
    session: str | None,
    person: str | None,
    messages: tuple[int, ...],
    before: datetime | None,
    matching: str | None,
) -> Plan:
    """What `history delete` would remove; a selection naming nothing is a usage error,
    one the owner may not make (or naming no such session or person) a refusal."""
    from memory.history.erase import survey
    from memory.history.listing import find_session
    from memory.history.selection import Asker, EmptySelection, NotAllowed, Selection

    async def plan_of(store: Store) -> Plan:
        await _known_person(store, person)
        ids = () if session is None else ((await find_session(store, session)).id,)
        selection = Selection(
            sessions=ids, messages=messages, before=before, matching=matching, person=person
        )
        return await survey(store, Asker.owner(), selection)

    try:
        return with_store(settings, plan_of)
    except EmptySelection as exc:
        fail(f"{exc} (see `kioku history delete --help`)", code=2)
    except (NotAllowed, LookupError) as exc:
        fail(str(exc))


def _erase(settings: Settings, plan: Plan) -> None:
    """Delete what `plan` lists, log it, and say what went."""
    from memory.history.erase import erase
    from memory.history.plan import counted

    done = with_store(settings, lambda store: erase(store, plan))
    log.info(
        "history_deleted", sessions=done.sessions, turns=done.turns, files=done.files, by="cli"
    )
    kept = f", with {done.files} kept file{'' if done.files == 1 else 's'}" if done.files else ""
    typer.echo(f"Deleted {counted(done.sessions, done.turns)}{kept}.")
    if done.ended:
        typer.echo(f"{len(done.ended)} open conversation(s) start afresh with their next message.")
    if not done.wal_truncated:
        typer.echo(
            "The write-ahead log could not be emptied now (state.db is busy); kioku "
            "empties it at its next checkpoint.",
            err=True,
        )


@history.command("keep")
def history_keep(
    person: str = typer.Option(..., "--person", callback=person_id, help="Whose DMs."),
    days: int | None = typer.Option(
        None,
        "--days",
        min=0,
        max=100_000,
        help="Keep their closed DM sessions this many days; 0 keeps them forever.",
    ),
    default: bool = typer.Option(
        False, "--default", help="Follow history.keep_days again (drop their own choice)."
    ),
) -> None:
    """Set (or show, without --days) how long a person's DM history is kept."""
    from memory.history.retention import effective_keep_days, keep_days_of, set_keep_days

    if days is not None and default:
        fail("give either --days N or --default, not both", code=2)
    settings = logged_settings()
    setting = settings.history.keep_days

    async def work(store: Store) -> int | None:
        if days is not None or default:
            await set_keep_days(store, person, days)
        else:
            await _known_person(store, person)
        return await keep_days_of(store, person)

    try:
        own = with_store(settings, work)
    except LookupError as exc:
        fail(str(exc))
    kept = effective_keep_days(own, setting)
    span = "forever" if kept is None else f"{kept} days after they end"
    why = "their own choice" if own is not None else "history.keep_days"
    typer.echo(f"{person}'s DM sessions are kept {span} ({why}).")


def register(parent: typer.Typer) -> None:
    parent.add_typer(history, name="history")
