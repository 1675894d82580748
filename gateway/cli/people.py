"""`kioku pairing` and `kioku people`: who may talk to kioku, and who is who.

Both work on state.db directly (WAL lets them run beside the daemon), and the daemon
reads identities from it on every message, so each change applies to the next
message. Exit codes: 0 done, 1 refused (the reason on stderr), 2 usage error.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

import typer

from config.loggers import get_logger
from gateway.cli.common import (
    fail,
    logged_settings,
    person_id,
    with_store,
)
from gateway.cli.people_budget import people_budget

if TYPE_CHECKING:
    from config.settings import Settings
    from memory.history.forget import ForgetReport
    from memory.store.database import Store

log = get_logger("kioku.identity")

pairing = typer.Typer(
    help="Strangers asking to talk to kioku: list, approve or deny their pairing codes.",
    no_args_is_help=True,
)
people = typer.Typer(
    help="Persons and their identities: list, link, unlink, forget; time zones, budgets.",
    no_args_is_help=True,
)


def _identity(value: str) -> str:
    from gateway.identity import InvalidIdentity, validate_identity

    try:
        return validate_identity(value)
    except InvalidIdentity as exc:
        raise typer.BadParameter(str(exc)) from None


def _owner_keeps(settings: Settings) -> set[str]:
    """The identities that stay the owner's: their own CLI account and `owner.identities`."""
    return {f"cli:{os.getuid()}", *settings.owner.identities}


def _kept(identity: str) -> str:
    """Why the owner's `identity` must stay theirs."""
    if identity == f"cli:{os.getuid()}":
        return f"{identity} is the owner's own CLI account (the one running kioku); it stays theirs"
    return (
        f"{identity} is listed in owner.identities; remove it from the configuration "
        "first (the daemon gives it back to the owner otherwise)"
    )


# -- pairing -----------------------------------------------------------------------------


@pairing.command("list")
def pairing_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the pairing requests waiting for approval (they expire after one hour)."""
    from memory.access import codes

    settings = logged_settings()
    requests = with_store(settings, lambda store: codes.pending_pairings(store, time.time()))
    if as_json:
        typer.echo(json.dumps([r.to_json() for r in requests], ensure_ascii=False, indent=2))
        return
    if not requests:
        typer.echo("No pairing requests are waiting.")
        return
    for r in requests:
        name = f" ({r.display_name})" if r.display_name else ""
        typer.echo(f"{r.code}  {r.identity}{name}  expires {codes.iso(r.expires_at)}")


@pairing.command("approve")
def pairing_approve(
    code: str = typer.Argument(..., help="The code the stranger received (any case)."),
    as_person: str | None = typer.Option(
        None, "--as", callback=person_id, help="Make them this person (created if new)."
    ),
) -> None:
    """Let a stranger in: as a new person, or with --as as that person."""
    from memory.access import codes

    settings = logged_settings()
    try:
        approval = with_store(
            settings, lambda store: codes.approve_pairing(store, code, as_person, time.time())
        )
    except codes.CodeRefused as exc:
        fail(str(exc))
    log.info("pairing_approved", identity=approval.identity, person=approval.person)
    state = "a new person" if approval.created else "an existing person"
    typer.echo(f"Approved: {approval.identity} is now {approval.person} ({state}).")


@pairing.command("deny")
def pairing_deny(code: str = typer.Argument(..., help="The code to refuse (any case).")) -> None:
    """Refuse a pairing request; that stranger gets no new code for a day."""
    from memory.access import codes

    settings = logged_settings()
    try:
        request = with_store(settings, lambda store: codes.deny_pairing(store, code, time.time()))
    except codes.CodeRefused as exc:
        fail(str(exc))
    log.info("pairing_denied", identity=request.identity)
    typer.echo(f"Denied: {request.identity} gets no answer (and no new code for 24 hours).")


# -- people ------------------------------------------------------------------------------


@people.command("list")
def people_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show every person and the identities that are theirs."""
    from memory.access import identities

    settings = logged_settings()
    entries = with_store(settings, identities.list_people)
    if as_json:
        typer.echo(json.dumps([e.to_json() for e in entries], ensure_ascii=False, indent=2))
        return
    for e in entries:
        name = f" ({e.display_name})" if e.display_name else ""
        typer.echo(f"{e.person}{name}: {', '.join(e.identities) or 'no identities'}")


@people.command("link")
def people_link(
    identity: str = typer.Argument(..., callback=_identity, help="e.g. telegram:123456789"),
    to: str = typer.Option(..., "--to", callback=person_id, help="The person (created if new)."),
) -> None:
    """Make IDENTITY belong to a person, moving it from whoever had it."""
    from memory.access import identities

    settings = logged_settings()
    keeps = _owner_keeps(settings)
    try:
        previous, created = with_store(
            settings,
            lambda store: identities.move_identity(store, identity, to, time.time(), keeps),
        )
    except identities.KeptByOwner:
        fail(f"refused: {_kept(identity)}")
    log.info("identity_linked", identity=identity, person=to, previous=previous, by="cli")
    lines = [f"Linked {identity} to {to}" + (" (a new person)." if created else ".")]
    if previous and previous != to:
        lines.append(
            f"It belonged to {previous}, who keeps their notes and history "
            f"(`kioku people forget {previous}` removes them)."
        )
    typer.echo("\n".join(lines))


@people.command("unlink")
def people_unlink(
    identity: str = typer.Argument(..., callback=_identity, help="e.g. telegram:123456789"),
) -> None:
    """Detach IDENTITY from its person; it is a stranger again (the person keeps everything)."""
    from memory.access import identities

    settings = logged_settings()
    keeps = _owner_keeps(settings)
    try:
        holder = with_store(
            settings, lambda store: identities.unlink_identity(store, identity, keeps)
        )
    except identities.KeptByOwner:
        fail(f"refused: {_kept(identity)}")
    if holder is None:
        fail(f"{identity} is not linked to anyone; `kioku people list` shows the identities")
    log.info("identity_unlinked", identity=identity, person=holder)
    typer.echo(f"Unlinked {identity} from {holder}.")


@people.command("forget")
def people_forget(
    person: str = typer.Argument(..., callback=person_id, help="The person to forget."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Remove a person: notes, skills, DM sessions, their words in groups, identities."""
    from memory.history.forget import CannotForget, forget_person, survey

    settings = logged_settings()
    home = settings.home

    def show(report: ForgetReport) -> None:
        typer.echo("\n".join(f"  {line}" for line in report.describe()))

    try:
        if not yes:
            report = with_store(settings, lambda store: survey(store, home, person))
            typer.echo(f"Forgetting {person} removes, for good:")
            show(report)
            if not typer.confirm("Go ahead?", default=False):
                fail("Nothing was removed.")
        report = with_store(settings, lambda store: forget_person(store, home, person))
    except CannotForget as exc:
        fail(f"refused: {exc}")
    log.info("person_forgotten", person=person)
    typer.echo(f"Forgot {person}. Removed:")
    show(report)


@people.command("tz")
def people_tz(
    person: str = typer.Argument(..., callback=person_id, help="The person."),
    zone: str | None = typer.Argument(
        None, help="An IANA time zone (e.g. Asia/Tokyo); without it, show the current one."
    ),
    clear: bool = typer.Option(
        False, "--clear", help="Forget the person's own zone: schedule.default_timezone applies."
    ),
) -> None:
    """Show or set the time zone a person's times are read and shown in (their reminders,
    the time the assistant sees)."""
    from datetime import UTC, datetime

    from memory.schedule.timezones import NoSuchPerson, effective_zone, set_timezone
    from memory.schedule.timing import BadSchedule, local_time, zone_name

    if zone is not None and clear:
        fail("give a ZONE or --clear, not both", code=2)
    settings = logged_settings()
    default = settings.schedule.default_timezone
    try:
        if zone is not None or clear:
            with_store(settings, lambda store: set_timezone(store, person, zone))
            log.info("timezone_set", person=person, cleared=clear, by="cli")
        own = with_store(settings, lambda store: _own_zone(store, person))
    except (BadSchedule, NoSuchPerson) as exc:
        fail(f"refused: {exc}")
    effective = effective_zone(own, default)
    there = f"it is {local_time(datetime.now(UTC).replace(second=0), effective)} there"
    if own is not None:
        done = "is now" if zone is not None else "is"
        typer.echo(f"{person}'s time zone {done} {own} ({there}).")
        return
    source = "schedule.default_timezone" if default else "the server's zone"
    typer.echo(
        f"{person} has no time zone of their own{' now' if clear else ''}: "
        f"{zone_name(effective)} applies, from {source} ({there})."
    )


async def _own_zone(store: Store, person: str) -> str | None:
    """The person's own zone; `NoSuchPerson` for someone state.db does not hold."""
    from memory.access.identities import get_person
    from memory.schedule.timezones import NoSuchPerson, timezone_of

    if await get_person(store, person) is None:
        raise NoSuchPerson(f"no person {person!r}; `kioku people list` shows them")
    return await timezone_of(store, person)


people.command("budget")(people_budget)


def register(parent: typer.Typer) -> None:
    parent.add_typer(pairing, name="pairing")
    parent.add_typer(people, name="people")
