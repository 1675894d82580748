"""`kioku memory`: see and change a person's notes files from the shell.

The commands work on the files directly, under the same lock the daemon takes, so they
work the same with or without a running daemon. Exit codes: 0 done, 1 refused (the
reason on stderr), 2 usage error.
"""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from config.paths import ensure_home
from gateway.cli.common import essentials_or_exit, fail, person_id, run_async, settings_or_exit
from gateway.cli.memory_tidy import tidy
from memory.access.people import OWNER, person_dir
from memory.notes.origin import NoteOrigin

if TYPE_CHECKING:
    from memory.notes.format import NotesState
    from memory.notes.person_notes import NotesResult, PersonNotes

app = typer.Typer(
    help="See and change a person's notes: MEMORY.md (their world) and USER.md (who they are).",
    no_args_is_help=True,
)


class Target(StrEnum):
    memory = "memory"
    user = "user"


_CLI = NoteOrigin("cli")
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
    _report(run_async(_notes(person).add(target.value, text, origin=_CLI)))


@app.command("replace")
def replace(
    old_text: str = typer.Argument(..., help="A short piece of the one entry to replace."),
    new_text: str = typer.Argument(..., help="The entry's new text."),
    person: str = PERSON,
    target: Target = TARGET,
) -> None:
    """Replace the one entry containing OLD_TEXT with NEW_TEXT."""
    _report(run_async(_notes(person).replace(target.value, old_text, new_text, origin=_CLI)))


@app.command("remove")
def remove(
    old_text: str = typer.Argument(..., help="A short piece of the one entry to remove."),
    person: str = PERSON,
    target: Target = TARGET,
) -> None:
    """Remove the one entry containing OLD_TEXT."""
    _report(run_async(_notes(person).remove(target.value, old_text, origin=_CLI)))


@app.command("edit")
def edit(person: str = PERSON, target: Target = TARGET) -> None:
    """Edit a notes file in $EDITOR; the result is checked (limit, safety) before it is saved."""
    import subprocess

    from memory.notes.files import NotesFileError, ensure_directory
    from memory.notes.format import FILE_NAMES, parse_entries

    notes = _notes(person)
    name = FILE_NAMES[target.value]
    try:
        raw = run_async(notes.read_raw(target.value))
        ensure_directory(notes.directory)
    except NotesFileError as exc:
        fail(str(exc))
    draft = _write_draft(notes.directory, name, raw.text)
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
    result = run_async(notes.rewrite(target.value, edited, expected=raw.entries, origin=_CLI))
    if not result.ok:
        fail(f"{result.message}\n{kept}")
    draft.unlink()
    _report(result)


def _notes(person: str) -> PersonNotes:
    from memory.notes.person_notes import PersonNotes

    settings = settings_or_exit()
    ensure_home(settings.home)
    return PersonNotes(settings.home, person, settings.memory.notes)


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
