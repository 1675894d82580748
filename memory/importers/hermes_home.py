"""Bring a whole Hermes Agent home to one person: history, then notes, then skills.

What `kioku import --format hermes` does. The history and the notes are read first
(`read_hermes_history`), so that a home kioku cannot read is refused before anything is
stored and the history can be checked like any import (`check_conflicts`);
`import_hermes_home` then stores it, adds the entries of Hermes' MEMORY.md / USER.md to
the person's notes (an entry already there is a no-op) and copies `<home>/skills` into
the person's own skills. Running it twice adds nothing the second time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from memory.importers.hermes import read_hermes_notes, read_hermes_sessions
from memory.importers.jsonl import Parsed, Progress, store_parsed
from memory.notes.files import NotesFileError
from memory.notes.format import TARGETS, Target
from memory.notes.ops import NoteOp
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import PersonNotes
from memory.skills.format import SkillError
from memory.skills.imports import ImportReport
from memory.skills.library import SkillsLibrary
from memory.store.database import Store
from memory.store.records import ImportCounts


@dataclass(frozen=True)
class HermesImport:
    """What the import did. A refused notes import (`notes_error`) stops before the skills;
    `skills` is None when the home has no skills folder or they were not reached."""

    history: ImportCounts
    notes_added: int = 0
    notes_error: str | None = None
    skills: ImportReport | None = None
    skills_error: str | None = None


@dataclass
class HermesHistory(Parsed):
    """A Hermes home as read, nothing stored yet: its sessions, and its notes' entries."""

    notes: dict[Target, list[str]] = field(default_factory=dict)


def read_hermes_history(home: Path, person: str) -> HermesHistory:
    """The Hermes home's sessions and notes as an import for `person` (blocking;
    `HermesError` when the home or its notes cannot be read)."""
    sessions, problems = read_hermes_sessions(home, person)
    notes = read_hermes_notes(home)
    return HermesHistory(sessions, {person: None}, problems, notes=notes)


async def import_hermes_home(
    store: Store,
    parsed: HermesHistory,
    home: Path,
    notes: PersonNotes,
    skills: SkillsLibrary,
    progress: Progress | None = None,
) -> HermesImport:
    """Store `parsed` (from `read_hermes_history`, checked), then the home's notes and skills
    for the person of `notes`."""
    history = await store_parsed(store, parsed, progress)
    added, error = await _import_notes(parsed.notes, notes)
    if error is not None:
        return HermesImport(history, notes_error=error)
    source = home / "skills"
    if not await asyncio.to_thread(source.is_dir):
        return HermesImport(history, added)
    try:
        report = await skills.import_folder(source, notes.person, f"import from {source}")
    except SkillError as exc:
        return HermesImport(history, added, skills_error=str(exc))
    return HermesImport(history, added, skills=report)


async def _import_notes(
    found: dict[Target, list[str]], notes: PersonNotes
) -> tuple[int, str | None]:
    """Entries added, or the refusal: all of Hermes' entries go in at once or none do."""
    ops = [NoteOp("add", target, content=entry) for target in TARGETS for entry in found[target]]
    if not ops:
        return 0, None
    try:
        before = {target: len((await notes.read(target)).entries) for target in TARGETS}
        result = await notes.batch(ops, origin=NoteOrigin("import"))
    except NotesFileError as exc:
        return 0, str(exc)
    if not result.ok:
        return 0, result.message
    return sum(len(state.entries) - before[target] for target, state in result.states.items()), None
