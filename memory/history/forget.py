"""Forget a person: everything kioku keeps about them, from state.db and from disk.

Removed: their DM sessions with every turn in them (the full-text index follows by
trigger), every turn they spoke in group sessions (their words, and the tool steps
run for them, which can quote their private notes), their identities, pending link
codes and pairing requests, lockout counters, their reminders and scheduled tasks
(with their runs, also those made in groups), the files they sent (kept media: those of
their DMs, and those of their turns in groups), and `people/<person>/` (notes, skills
and media) with the journal of their notes. Group sessions themselves stay: they belong
to the group, and kioku's own replies in them are the group's history.

The database part is one transaction, scrubbed as any deletion of history is (see
`memory.history.scrub`: nothing of the deleted text stays in state.db's pages, index
or WAL); the folder goes after it, so a failure there leaves a state that running
`forget` again finishes (a person without a row but with a folder is still forgettable).
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from memory.access.identities import has_person
from memory.access.people import OWNER, person_dir
from memory.history.erasures import forget_scope
from memory.history.scrub import scrubbing
from memory.media.records import StoredMedia
from memory.media.removal import remove_media_files, take_media
from memory.store.database import Store
from memory.store.records import person_scope


class CannotForget(ValueError):
    """The person is the owner, or kioku knows nothing about them."""


@dataclass(frozen=True)
class ForgetReport:
    """What forgetting a person removes (or removed)."""

    person: str
    identities: list[str]
    dm_sessions: int
    turns: int
    group_turns: int
    jobs: int
    folder: Path | None
    files: int = 0

    def describe(self) -> list[str]:
        lines = [f"identities: {', '.join(self.identities) or 'none'}"]
        lines.append(f"direct-message sessions: {self.dm_sessions} ({self.turns} turns)")
        lines.append(f"turns spoken in group sessions: {self.group_turns}")
        lines.append(f"reminders and scheduled tasks: {self.jobs}")
        lines.append(f"files they sent (photos, voice notes, documents): {self.files}")
        lines.append(f"notes, skills and media folder: {self.folder or 'none'}")
        return lines


async def survey(store: Store, home: Path, person: str) -> ForgetReport:
    """What `forget_person` would remove, without removing anything."""
    _refuse_owner(person)
    report, known = await store.read(lambda db: (_count(db, person), has_person(db, person)))
    folder = await asyncio.to_thread(_existing, person_dir(home, person))
    if not known and folder is None:
        raise CannotForget(f"kioku knows no person {person!r}; `kioku people list` shows them")
    return replace(report, folder=folder)


async def forget_person(store: Store, home: Path, person: str) -> ForgetReport:
    """Remove everything about `person` (see the module docstring); returns what went."""
    _refuse_owner(person)
    folder = await asyncio.to_thread(_existing, person_dir(home, person))

    taken: list[StoredMedia] = []

    def op(db: sqlite3.Connection) -> ForgetReport:
        report = _count(db, person)
        if not has_person(db, person) and folder is None:
            raise CannotForget(f"kioku knows no person {person!r}; `kioku people list` shows them")
        dm = "SELECT id FROM sessions WHERE person_id = ?"
        taken[:] = take_media(db, _THEIR_MEDIA, {"person": person})
        db.execute(f"DELETE FROM turns WHERE session_id IN ({dm})", (person,))
        db.execute("DELETE FROM turns WHERE speaker_id = ?", (person,))
        db.execute("DELETE FROM sessions WHERE person_id = ?", (person,))
        db.execute(
            "DELETE FROM scopes WHERE name = ? "
            "AND NOT EXISTS(SELECT 1 FROM sessions WHERE scope_id = scopes.id)",
            (f"person:{person}",),
        )
        db.execute(
            "DELETE FROM pairing_requests WHERE identity IN "
            "(SELECT identity FROM identities WHERE person_id = ?)",
            (person,),
        )
        db.execute(
            "DELETE FROM code_failures WHERE identity IN "
            "(SELECT identity FROM identities WHERE person_id = ?)",
            (person,),
        )
        # The notes journal holds the notes' text; its changes go with their events.
        db.execute("DELETE FROM note_events WHERE person_id = ?", (person,))
        db.execute("DELETE FROM note_files WHERE person_id = ?", (person,))
        # Identities, link codes, participant rows, jobs and their runs go with the person
        # (ON DELETE CASCADE).
        db.execute("DELETE FROM persons WHERE id = ?", (person,))
        forget_scope(db, person_scope(person))
        return report

    def scrubbed(db: sqlite3.Connection) -> ForgetReport:
        with scrubbing(db):
            return op(db)

    report = await store.write(scrubbed)
    await store.truncate_wal()
    await remove_media_files(home, taken)
    if folder is not None:
        await asyncio.to_thread(shutil.rmtree, folder)
    return replace(report, folder=folder)


# The kept files of a person: their own (their DMs'), and those of their turns in groups.
_THEIR_MEDIA = (
    "owner = :person OR session_id IN (SELECT id FROM sessions WHERE person_id = :person) "
    "OR message_id IN (SELECT id FROM turns WHERE speaker_id = :person)"
)
# What `survey` and `forget_person` count.
_IDENTITIES = "SELECT identity FROM identities WHERE person_id = :person ORDER BY identity"
_DM = "SELECT id FROM sessions WHERE person_id = :person"
_COUNTS = (
    "SELECT (SELECT count(*) FROM sessions WHERE person_id = :person) AS dm_sessions, "
    f"(SELECT count(*) FROM turns WHERE session_id IN ({_DM})) AS turns, "
    "(SELECT count(*) FROM turns WHERE speaker_id = :person "
    f"AND session_id NOT IN ({_DM})) AS group_turns, "
    "(SELECT count(*) FROM jobs WHERE person_id = :person) AS jobs, "
    f"(SELECT count(*) FROM media WHERE {_THEIR_MEDIA}) AS files"
)


def _refuse_owner(person: str) -> None:
    if person == OWNER:
        raise CannotForget(
            "the owner cannot be forgotten; edit or clear their notes with `kioku memory` instead"
        )


def _count(db: sqlite3.Connection, person: str) -> ForgetReport:
    """What forgetting `person` takes: read by `survey`, and again inside the write
    transaction that forgets them."""
    identities = db.execute(_IDENTITIES, {"person": person}).fetchall()
    return _report(person, identities, db.execute(_COUNTS, {"person": person}).fetchone())


def _report(person: str, identities: Iterable[sqlite3.Row], counts: sqlite3.Row) -> ForgetReport:
    return ForgetReport(
        person=person,
        identities=[str(row["identity"]) for row in identities],
        dm_sessions=counts["dm_sessions"],
        turns=counts["turns"],
        group_turns=counts["group_turns"],
        jobs=counts["jobs"],
        folder=None,
        files=counts["files"],
    )


def _existing(folder: Path) -> Path | None:
    return folder if folder.exists() else None
