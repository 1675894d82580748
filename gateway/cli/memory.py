"""`kioku memory`: see and change a person's notes files from the shell.

The commands work on the files directly, under the same lock the daemon takes, and
journal each change in state.db as the daemon does, so they work the same with or
without a running daemon. Exit codes: 0 done, 1 refused (the reason on stderr), 2 usage
error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer

from config.paths import ensure_home
from gateway.cli.common import (
    essentials_or_exit,
    fail,
    person_id,
    settings_or_exit,
    with_store,
)
from gateway.cli.memory_tidy import tidy
from memory.access.people import OWNER, person_dir
from memory.notes.origin import NoteOrigin

if TYPE_CHECKING:
    from config.settings import Settings
    from memory.notes.format import NotesState
    from memory.notes.journal import JournalEvent
    from memory.notes.person_notes import NotesResult, PersonNotes
    from memory.store.database import Store

T = TypeVar("T")

app = typer.Typer(
    help="See and change a person's notes: MEMORY.md (their world) and USER.md (who they are).",
    no_args_is_help=True,
)


class Target(StrEnum):
    memory = "memory"
    user = "user"


_CLI = NoteOrigin("cli")
_REVERT = NoteOrigin("revert")
PERSON = typer.Option(OWNER, "--person", "-p", callback=person_id, help="Whose notes.")
TARGET = typer.Option(..., "--target", "-t", help="memory (MEMORY.md) or user (USER.md).")


@app.command("show")
def show(
    person: str = PERSON,
    target: Target | None = typer.Option(None, "--target", "-t", help="Only this file."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Print a person's notes with their usage and any entries blocked from the assistant."""
    from memory.notes.files import NotesFileError, notes_path, read_notes
    from memory.notes.format import TARGETS, NotesState

    # Read as PersonNotes.read does, without its event loop (a read takes no lock) and with
    # the limits of the last validation while the configuration is unchanged: this is the
    # command scripts poll, so it starts without asyncio and pydantic.
    known = essentials_or_exit()
    directory = person_dir(ensure_home(known.home), person)
    limits = {"memory": known.memory_limit, "user": known.user_limit}
    targets = [target.value] if target else list(TARGETS)
    try:
        states = [
            NotesState(name, read_notes(notes_path(directory, name)).entries, limits[name])
            for name in targets
        ]
    except NotesFileError as exc:
        fail(str(exc))
    if as_json:
        data = {
            s.target: {"entries": list(s.entries), "chars": s.chars, "limit": s.limit}
            for s in states
        }
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    typer.echo("\n\n".join(_describe(notes_path(directory, s.target), s) for s in states))


@app.command("add")
def add(
    text: str = typer.Argument(..., help="The note to add."),
    person: str = PERSON,
    target: Target = TARGET,
) -> None:
    """Add an entry to a notes file."""
    _report(_with_notes(person, lambda notes: notes.add(target.value, text, origin=_CLI)))


@app.command("replace")
def replace(
    old_text: str = typer.Argument(..., help="A short piece of the one entry to replace."),
    new_text: str = typer.Argument(..., help="The entry's new text."),
    person: str = PERSON,
    target: Target = TARGET,
) -> None:
    """Replace the one entry containing OLD_TEXT with NEW_TEXT."""
    _report(
        _with_notes(
            person, lambda notes: notes.replace(target.value, old_text, new_text, origin=_CLI)
        )
    )


@app.command("remove")
def remove(
    old_text: str = typer.Argument(..., help="A short piece of the one entry to remove."),
    person: str = PERSON,
    target: Target = TARGET,
) -> None:
    """Remove the one entry containing OLD_TEXT."""
    _report(_with_notes(person, lambda notes: notes.remove(target.value, old_text, origin=_CLI)))


@app.command("edit")
def edit(person: str = PERSON, target: Target = TARGET) -> None:
    """Edit a notes file in $EDITOR; the result is checked (limit, safety) before it is saved."""
    import subprocess

    from memory.notes.files import NotesFileError, ensure_directory, notes_path, read_notes
    from memory.notes.format import FILE_NAMES, parse_entries

    directory = person_dir(ensure_home(settings_or_exit().home), person)
    name = FILE_NAMES[target.value]
    try:
        raw = read_notes(notes_path(directory, target.value))
        ensure_directory(directory)
    except NotesFileError as exc:
        fail(str(exc))
    draft = _write_draft(directory, name, raw.text)
    kept = f"{name} is unchanged; your edited text is kept in {draft}."
    command = [*_editor(), str(draft)]
    try:
        status = subprocess.run(command, check=False).returncode
    except OSError as exc:
        draft.unlink()
        fail(f"cannot start the editor {command[0]!r}: {exc.strerror}; set $EDITOR and retry.")
    if status != 0:
        fail(f"The editor exited with status {status}. {kept}")
    try:
        edited = draft.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"Cannot read the edited text ({exc}). {kept}")
    if parse_entries(edited) == list(raw.entries):
        draft.unlink()
        typer.echo(f"No changes; {name} is unchanged.")
        return
    result = _with_notes(
        person,
        lambda notes: notes.rewrite(target.value, edited, expected=raw.entries, origin=_CLI),
    )
    if not result.ok:
        fail(f"{result.message}\n{kept}")
    draft.unlink()
    _report(result)


@app.command("log")
def log(
    person: str | None = typer.Option(
        None, "--person", "-p", callback=person_id, help="Only this person's (default: everyone's)."
    ),
    target: Target | None = typer.Option(None, "--target", "-t", help="Only this file."),
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="How many changes, newest first."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The journal of changes to notes: when, by what, from which session, before and after."""
    from memory.notes.journal import NotesJournal

    settings = settings_or_exit()
    name = target.value if target else None
    events = with_store(settings, lambda store: NotesJournal(store).events(person, name, limit))
    if as_json:
        typer.echo(json.dumps([_event_data(e) for e in events], ensure_ascii=False, indent=2))
    elif not events:
        typer.echo("No changes journaled yet.")
    else:
        typer.echo("\n\n".join(_describe_event(event) for event in events))


@app.command("revert")
def revert(
    event_id: int = typer.Argument(..., help="The change's number in `kioku memory log`."),
) -> None:
    """Undo one journaled change as a whole, unless an entry it touched has changed since."""

    async def work(store: Store) -> NotesResult:
        from memory.notes.journal import NotesJournal

        event = await NotesJournal(store).event(event_id)
        if event is None:
            fail(f"No change {event_id} in the journal; `kioku memory log` lists them.")
        return await _person_notes(settings, store, event.person).revert(event_id, origin=_REVERT)

    settings = settings_or_exit()
    _report(with_store(settings, work))


def _with_notes(person: str, work: Callable[[PersonNotes], Awaitable[T]]) -> T:
    """Run `work` on the person's notes, with state.db open for their journal."""
    settings = settings_or_exit()
    return with_store(settings, lambda store: work(_person_notes(settings, store, person)))


def _person_notes(settings: Settings, store: Store, person: str) -> PersonNotes:
    from memory.notes.journal import NotesJournal
    from memory.notes.person_notes import PersonNotes

    return PersonNotes(settings.home, person, settings.memory.notes, NotesJournal(store))


def _event_data(event: JournalEvent) -> dict[str, object]:
    return {
        "id": event.id,
        "person": event.person,
        "at": event.at.isoformat(),
        "source": event.source,
        "session": event.session_id,
        "reverts": event.reverts,
        "changes": [
            {"target": c.target, "action": c.action, "before": c.before, "after": c.after}
            for c in event.changes
        ],
    }


def _describe_event(event: JournalEvent) -> str:
    """`#12 2026-11-03 14:02 UTC  aiko  memory tool  session 45`, then a line per change."""
    where = f"  session {event.session_id}" if event.session_id is not None else ""
    undoes = f"  (reverts #{event.reverts})" if event.reverts is not None else ""
    lines = [
        f"#{event.id}  {event.at:%Y-%m-%d %H:%M} UTC  {event.person}  {event.source}{where}{undoes}"
    ]
    for change in event.changes:
        if change.action == "add":
            lines.append(f"  + {change.file_name}: {change.after}")
        elif change.action == "remove":
            lines.append(f"  - {change.file_name}: {change.before}")
        else:
            lines.append(f"  ~ {change.file_name}: {change.before}\n      -> {change.after}")
    return "\n".join(lines)


def _report(result: NotesResult) -> None:
    """Success: the headline (and any backup made) on stdout. Refusal: the full message, exit 1."""
    if not result.ok:
        fail(result.message)
    typer.echo(result.headline)
    for path in result.backups:
        typer.echo(f"The previous file had hand edits that did not round-trip; kept as {path}.")


def _describe(path: Path, state: NotesState) -> str:
    from memory.notes.format import ROLES
    from memory.notes.render import count_entries

    lines = [
        f"{state.file_name} — {ROLES[state.target]}",
        f"{path}",
        f"{state.usage}, {count_entries(len(state.entries))}"
        + (" — over the limit" if state.over_limit else ""),
    ]
    for number, (entry, finding) in enumerate(
        zip(state.entries, state.findings, strict=True), start=1
    ):
        if finding is None:
            first, *body = entry.split("\n")
            lines.append(f"[{number}] {first}")
        else:
            lines.append(f"[{number}] BLOCKED from the assistant ({finding}); fix or remove it:")
            body = entry.split("\n")
        lines += [f"    {line}" for line in body]
    return "\n".join(lines)


def _write_draft(directory: Path, name: str, text: str) -> Path:
    """The copy the editor works on, beside the notes file so a refused edit is never lost."""
    import tempfile

    stem = name.removesuffix(".md")
    fd, path = tempfile.mkstemp(dir=directory, prefix=f"{stem}.edit-", suffix=".md")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return Path(path)


def _editor() -> list[str]:
    """`$EDITOR`, else `$VISUAL`, else `vi`; the variable may carry arguments (`code -w`)."""
    import shlex

    for variable in ("EDITOR", "VISUAL"):
        value = os.environ.get(variable, "").strip()
        if value:
            return shlex.split(value)
    return ["vi"]


app.command("tidy")(tidy)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="memory")
