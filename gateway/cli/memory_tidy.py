"""`kioku memory tidy`: consolidate a person's notes now, with the model, and show the diff.

The same run the daemon starts in the background (`agent.tidy`), for both files; each
file that changes is saved as one change (origin `tidy`), or with `--dry-run` only
shown. It works on the files under their lock and reads history through WAL, so it
runs the same with or without the daemon. Exit codes: 0 done, 1 refused or failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from gateway.cli.common import fail, person_id, settings_or_exit, with_store
from memory.access.people import OWNER

if TYPE_CHECKING:
    from agent.tidy import TidyOutcome
    from config.settings import Settings
    from memory.store.database import Store

DONE = {
    "saved": "tidied and saved as one change",
    "dry run": "dry run: nothing was written",
    "unchanged": "nothing to tidy",
}


def tidy(
    person: str = typer.Option(OWNER, "--person", "-p", callback=person_id, help="Whose notes."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the diff; write nothing."),
) -> None:
    """Tidy a person's notes now: merge duplicates, drop what they have since contradicted,
    shorten the rest; prints the diff of each file."""
    from memory.notes.format import FILE_NAMES

    settings = settings_or_exit()
    outcomes, error = with_store(settings, lambda store: _tidy(store, settings, person, dry_run))
    problems = [] if error is None else [error]
    for outcome in outcomes:
        name = FILE_NAMES[outcome.target]
        if outcome.status in DONE:
            typer.echo(outcome.diff(), nl=False)
            typer.echo(f"{name}: {DONE[outcome.status]}.")
        elif outcome.status == "conflict":
            problems.insert(0, f"{name}: not saved: it changed while the tidy ran; run it again.")
        else:
            problems.insert(0, f"{name}: not saved. {outcome.message}")
    if problems:
        fail("\n".join(problems))


async def _tidy(
    store: Store, settings: Settings, person: str, dry_run: bool
) -> tuple[list[TidyOutcome], str | None]:
    """Each file's outcome, in order, and why the run stopped early (None if it did not)."""
    from agent.providers import NoProvider, ProviderError, build_provider
    from agent.tidy import tidy_file
    from agent.usage import ChargedProvider, Payer, charger
    from memory.notes.files import NotesFileError
    from memory.notes.format import FILE_NAMES, TARGETS
    from memory.notes.journal import NotesJournal
    from memory.notes.person_notes import PersonNotes

    provider = build_provider(settings.llm)
    if isinstance(provider, NoProvider):
        fail(provider.reply)
    charged = ChargedProvider(provider, settings.llm, charger(store, "tidy", Payer(person)))
    notes = PersonNotes(settings.home, person, settings.memory.notes, NotesJournal(store))
    outcomes: list[TidyOutcome] = []
    try:
        for target in TARGETS:
            name = FILE_NAMES[target]
            try:
                outcomes.append(
                    await tidy_file(charged, store, notes, target, settings, dry_run=dry_run)
                )
            except NotesFileError as exc:
                return outcomes, f"{name}: not tidied: {exc}."
            except ProviderError as exc:
                return outcomes, f"{name}: not tidied: the model call failed ({exc}). Try again."
            except TimeoutError:
                seconds = settings.agent.reflection.timeout
                return outcomes, (
                    f"{name}: not tidied: it took longer than agent.reflection.timeout "
                    f"({seconds:g} s). Try again, or raise that setting."
                )
        return outcomes, None
    finally:
        await provider.aclose()
