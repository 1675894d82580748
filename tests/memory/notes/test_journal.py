"""The notes journal: one event per write with its source and session, revert, hand edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.settings import NotesSettings
from memory.access.identities import ensure_person
from memory.history.forget import forget_person
from memory.notes.changes import EntryChange
from memory.notes.journal import NotesJournal
from memory.notes.ops import NoteOp
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import PersonNotes
from memory.store.database import Store
from memory.store.records import Conversation
from tests.memory.notes.conftest import WRITTEN

ROOMY = NotesSettings(memory_limit=2000, user_limit=2000)
CLI = NoteOrigin("cli")


@pytest.fixture
def notes(home: Path, journal: NotesJournal) -> PersonNotes:
    return PersonNotes(home, "owner", ROOMY, journal)


def file_bytes(notes: PersonNotes, target: str = "memory") -> bytes:
    return notes.path(target).read_bytes()  # type: ignore[arg-type]


def write_by_hand(notes: PersonNotes, text: str, target: str = "memory") -> None:
    notes.directory.mkdir(parents=True, exist_ok=True)
    notes.path(target).write_text(text, encoding="utf-8")  # type: ignore[arg-type]


async def test_a_write_is_one_event_with_its_source_session_and_texts(
    notes: PersonNotes, journal: NotesJournal, store: Store
) -> None:
    session = await store.open_session(Conversation("telegram", "100", "dm", "owner"))
    await notes.add("memory", "Runs Debian 12.", origin=NoteOrigin("memory tool", session.id))
    (event,) = await journal.events()
    assert (event.person, event.source, event.session_id) == ("owner", "memory tool", session.id)
    assert event.at == WRITTEN
    assert event.changes == (EntryChange("memory", "add", 0, None, "Runs Debian 12."),)


async def test_a_batch_over_both_files_is_one_event_with_a_row_per_entry(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    await notes.add("memory", "Likes tea.", origin=CLI)
    await notes.batch(
        [
            NoteOp("replace", "memory", content="Likes green tea.", old_text="tea"),
            NoteOp("add", "user", content="Name: Aki."),
        ],
        origin=NoteOrigin("reflection", 7),
    )
    latest, first = await journal.events()
    assert first.changes == (EntryChange("memory", "add", 0, None, "Likes tea."),)
    assert (latest.source, latest.session_id) == ("reflection", None)  # no session 7 exists
    assert latest.changes == (
        EntryChange("memory", "replace", 0, "Likes tea.", "Likes green tea."),
        EntryChange("user", "add", 0, None, "Name: Aki."),
    )


async def test_a_refused_or_no_op_write_journals_nothing(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    await notes.add("memory", "Likes tea.", origin=CLI)
    await notes.add("memory", "Likes tea.", origin=CLI)
    await notes.remove("memory", "coffee", origin=CLI)
    assert len(await journal.events()) == 1


async def test_revert_restores_the_exact_previous_text(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    for text in ("one", "two", "three", "four"):
        await notes.add("memory", text, origin=CLI)
    before = file_bytes(notes)
    await notes.batch(
        [
            NoteOp("remove", "memory", old_text="two"),
            NoteOp("replace", "memory", content="THREE", old_text="three"),
            NoteOp("add", "memory", content="five"),
            NoteOp("remove", "memory", old_text="one"),
        ],
        origin=CLI,
    )
    (event, *_) = await journal.events()
    result = await notes.revert(event.id, origin=NoteOrigin("revert"))
    assert (result.ok, result.headline.split(":")[0]) == (True, f"Reverted change {event.id}")
    assert file_bytes(notes) == before
    (undo, *_) = await journal.events()
    assert (undo.source, undo.reverts) == ("revert", event.id)


async def test_a_whole_rewrite_reverts_in_one_step(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    for text in ("Likes tea.", "Likes green tea.", "Lives in Tokyo."):
        await notes.add("memory", text, origin=CLI)
    before = file_bytes(notes)
    await notes.rewrite(
        "memory", "Likes green tea.\n§\nLives in Osaka.\n", origin=NoteOrigin("tidy")
    )
    (tidy, *_) = await journal.events()
    assert tidy.source == "tidy" and len(tidy.changes) == 2
    assert (await notes.revert(tidy.id, origin=NoteOrigin("revert"))).ok
    assert file_bytes(notes) == before


async def test_revert_is_refused_when_an_entry_it_wrote_changed_since(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    await notes.add("memory", "Lives in Tokyo.", origin=CLI)
    (added,) = await journal.events()
    await notes.replace("memory", "Tokyo", "Lives in Osaka.", origin=CLI)
    before = file_bytes(notes)
    result = await notes.revert(added.id, origin=NoteOrigin("revert"))
    assert (result.ok, result.kind) == (False, "conflict")
    assert result.headline == (
        f"Refused: change {added.id} cannot be reverted: the entry 'Lives in Tokyo.' of "
        "MEMORY.md has changed since. Nothing was changed."
    )
    assert file_bytes(notes) == before
    assert len(await journal.events()) == 2


async def test_reverting_twice_names_the_revert_that_undid_it(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    await notes.add("memory", "Lives in Tokyo.", origin=CLI)
    (added,) = await journal.events()
    undone = await notes.revert(added.id, origin=NoteOrigin("revert"))
    again = await notes.revert(added.id, origin=NoteOrigin("revert"))
    assert undone.ok and not again.ok
    assert f"(change {added.id + 1} already reverted it)" in again.headline


async def test_revert_of_another_persons_change_is_refused(
    home: Path, notes: PersonNotes, journal: NotesJournal
) -> None:
    await notes.add("memory", "Likes tea.", origin=CLI)
    (event,) = await journal.events()
    other = PersonNotes(home, "ben", ROOMY, journal)
    result = await other.revert(event.id, origin=NoteOrigin("revert"))
    assert (result.ok, result.kind) == (False, "no_match")
    assert f"ben has no journaled change {event.id}" in result.message


async def test_an_edit_by_hand_is_journaled_at_the_next_snapshot(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    await notes.add("memory", "Likes tea.", origin=CLI)
    write_by_hand(notes, "Likes coffee.\n§\nHas a cat.\n")
    await notes.render_snapshot()
    hand, _ = await journal.events()
    assert (hand.source, hand.session_id) == ("hand edit", None)
    assert hand.changes == (
        EntryChange("memory", "replace", 0, "Likes tea.", "Likes coffee."),
        EntryChange("memory", "add", 1, None, "Has a cat."),
    )
    await notes.render_snapshot()
    assert len(await journal.events()) == 2


async def test_an_edit_by_hand_before_a_write_is_its_own_event(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    await notes.add("memory", "Likes tea.", origin=CLI)
    write_by_hand(notes, "Likes tea.\n§\nAdded by hand.\n")
    await notes.add("memory", "Likes jazz.", origin=CLI)
    added, hand, _ = await journal.events()
    assert hand.source == "hand edit"
    assert hand.changes == (EntryChange("memory", "add", 1, None, "Added by hand."),)
    assert added.changes == (EntryChange("memory", "add", 2, None, "Likes jazz."),)


async def test_a_write_whose_journal_insert_failed_is_found_as_a_hand_edit(
    notes: PersonNotes, journal: NotesJournal, store: Store
) -> None:
    refuse = "CREATE TRIGGER refuse BEFORE INSERT ON note_events BEGIN SELECT RAISE(FAIL, 'x'); END"
    await store.write(lambda db: db.execute(refuse))
    result = await notes.add("memory", "Likes tea.", origin=CLI)
    assert result.ok and (await notes.read("memory")).entries == ("Likes tea.",)
    assert await journal.events() == []
    await store.write(lambda db: db.execute("DROP TRIGGER refuse"))
    await notes.render_snapshot()
    (found,) = await journal.events()
    assert found.source == "hand edit"
    assert found.changes == (EntryChange("memory", "add", 0, None, "Likes tea."),)


async def test_the_snapshot_shows_each_entrys_month(notes: PersonNotes) -> None:
    await notes.add("user", "Name: Aki.", origin=CLI)
    snapshot = await notes.render_snapshot()
    assert "```text\n(2026-11) Name: Aki.\n```" in snapshot
    assert "month it was written, as (2026-11); that date is not part of its text" in snapshot


async def test_entries_show_when_and_by_what_they_were_written(
    notes: PersonNotes, journal: NotesJournal
) -> None:
    await notes.add("user", "Name: Aki.", origin=NoteOrigin("person"))
    await notes.add("user", "Likes tea.", origin=NoteOrigin("web"))
    written = await notes.written("user", ("Name: Aki.", "Likes tea.", "not there"))
    assert {text: w.source for text, w in written.items()} == {
        "Name: Aki.": "person",
        "Likes tea.": "web",
    }


async def test_forgetting_a_person_deletes_their_journal(
    home: Path, journal: NotesJournal, store: Store
) -> None:
    await ensure_person(store, "ben")
    await PersonNotes(home, "ben", ROOMY, journal).add("user", "Name: Ben.", origin=CLI)
    await forget_person(store, home, "ben")
    assert await journal.events("ben") == []
