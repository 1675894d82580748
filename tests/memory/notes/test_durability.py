"""Notes files survive crashes, concurrent writers and hand edits without losing anything."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from config.settings import NotesSettings
from memory.notes import files as notes_file
from memory.notes.format import is_canonical, parse_entries
from memory.notes.journal import NotesJournal
from memory.notes.ops import NoteOp
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import PersonNotes
from tests.helpers.paths import HELPERS

ROOMY = NotesSettings(memory_limit=100_000, user_limit=100_000)


@pytest.fixture
def notes(home: Path, journal: NotesJournal) -> PersonNotes:
    return PersonNotes(home, "owner", ROOMY, journal)


def write_by_hand(notes: PersonNotes, text: str, target: str = "memory") -> None:
    notes.directory.mkdir(parents=True, exist_ok=True)
    notes.path(target).write_bytes(text.encode("utf-8"))  # type: ignore[arg-type]


def stray_files(notes: PersonNotes) -> list[str]:
    return sorted(p.name for p in notes.directory.iterdir() if p.name.endswith(".tmp"))


async def test_failed_rename_leaves_the_old_file_intact(
    notes: PersonNotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    await notes.add("memory", "Likes tea.", origin=NoteOrigin("cli"))

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(notes_file.os, "replace", failing_replace)
    result = await notes.add("memory", "Likes coffee.", origin=NoteOrigin("cli"))
    assert (result.ok, result.kind) == (False, "file_error")
    assert "No space left on device" in result.message
    assert notes.path("memory").read_text(encoding="utf-8") == "Likes tea.\n"
    assert stray_files(notes) == []


async def test_process_killed_before_rename_leaves_the_old_file_intact(
    notes: PersonNotes, home: Path
) -> None:
    await notes.add("memory", "Likes tea.", origin=NoteOrigin("cli"))
    crash = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HELPERS / "crash_before_rename.py"),
        str(home),
        "Likes coffee.",
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(crash.communicate(), timeout=60)
    assert crash.returncode == -9, stderr
    assert notes.path("memory").read_text(encoding="utf-8") == "Likes tea.\n"
    assert (await notes.add("memory", "Jazz.", origin=NoteOrigin("cli"))).entries == (
        "Likes tea.",
        "Jazz.",
    )


@pytest.mark.parametrize(
    "hand_written",
    [
        "Likes tea.\r\n§\r\nJazz.\r\n",
        "Likes tea.\n§ \nJazz.\n",
        "Likes tea.\n\n§\n\nJazz.\n",
        "  Likes tea.\n§\nJazz.   \n",
        "Likes tea.\n§\n§\nJazz.\n",
    ],
)
async def test_hand_edited_file_is_backed_up_before_it_is_rewritten(
    notes: PersonNotes, hand_written: str
) -> None:
    write_by_hand(notes, hand_written)
    result = await notes.add("memory", "Reads novels.", origin=NoteOrigin("cli"))
    assert result.ok and result.entries == ("Likes tea.", "Jazz.", "Reads novels.")
    (backup,) = result.backups
    assert backup.name.startswith("MEMORY.md.bak.")
    assert backup.read_bytes() == hand_written.encode("utf-8")
    assert f"the previous file is kept as {backup}" in result.message
    assert notes.path("memory").read_text(encoding="utf-8") == (
        "Likes tea.\n§\nJazz.\n§\nReads novels.\n"
    )


async def test_second_backup_in_the_same_second_gets_its_own_name(notes: PersonNotes) -> None:
    write_by_hand(notes, "a\r\n")
    first = await notes.add("memory", "b", origin=NoteOrigin("cli"))
    write_by_hand(notes, "a\r\n")
    second = await notes.add("memory", "b", origin=NoteOrigin("cli"))
    assert first.backups[0] != second.backups[0]
    assert first.backups[0].exists() and second.backups[0].exists()


@pytest.mark.parametrize("text", ["Likes tea.\n§\nJazz.\n", "Likes tea.\n§\nJazz.", "", "\n"])
async def test_file_that_round_trips_is_not_backed_up(notes: PersonNotes, text: str) -> None:
    write_by_hand(notes, text)
    result = await notes.add("memory", "Reads novels.", origin=NoteOrigin("cli"))
    assert result.ok and result.backups == ()
    assert not any(".bak." in p.name for p in notes.directory.iterdir())


async def test_hermes_memory_file_imports_unchanged(notes: PersonNotes) -> None:
    hermes = "User runs Arch Linux\n§\nProject: kioku\nlives in ~/src/kioku"
    write_by_hand(notes, hermes)
    state = await notes.read("memory")
    assert state.entries == ("User runs Arch Linux", "Project: kioku\nlives in ~/src/kioku")
    assert state.chars == len(hermes)
    assert is_canonical(hermes)


async def test_refused_write_makes_no_backup(notes: PersonNotes) -> None:
    write_by_hand(notes, "Likes tea.\r\n")
    result = await notes.remove("memory", "coffee", origin=NoteOrigin("cli"))
    assert not result.ok
    assert not any(".bak." in p.name for p in notes.directory.iterdir())
    assert notes.path("memory").read_bytes() == b"Likes tea.\r\n"


async def test_a_hand_edit_between_two_writes_is_kept(notes: PersonNotes) -> None:
    await notes.add("memory", "Likes tea.", origin=NoteOrigin("cli"))
    with notes.path("memory").open("a", encoding="utf-8") as fh:
        fh.write("§\nAdded by hand.\n")
    result = await notes.add("memory", "Likes jazz.", origin=NoteOrigin("cli"))
    assert result.entries == ("Likes tea.", "Added by hand.", "Likes jazz.")


async def test_concurrent_tasks_lose_no_entry(home: Path, journal: NotesJournal) -> None:
    writers = [PersonNotes(home, "owner", ROOMY, journal) for _ in range(3)]
    results = await asyncio.gather(
        *(
            w.add("memory", f"task {i} note {n}", origin=NoteOrigin("cli"))
            for i, w in enumerate(writers)
            for n in range(10)
        )
    )
    assert all(result.ok for result in results)
    entries = (await writers[0].read("memory")).entries
    assert sorted(entries) == sorted(f"task {i} note {n}" for i in range(3) for n in range(10))


async def test_concurrent_batches_over_both_files_do_not_deadlock(
    home: Path, journal: NotesJournal
) -> None:
    a, b = PersonNotes(home, "owner", ROOMY, journal), PersonNotes(home, "owner", ROOMY, journal)
    jobs = [
        a.batch(
            [NoteOp("add", "memory", content=f"m{n}"), NoteOp("add", "user", content=f"u{n}")],
            origin=NoteOrigin("cli"),
        )
        for n in range(5)
    ] + [
        b.batch(
            [NoteOp("add", "user", content=f"v{n}"), NoteOp("add", "memory", content=f"k{n}")],
            origin=NoteOrigin("cli"),
        )
        for n in range(5)
    ]
    results = await asyncio.wait_for(asyncio.gather(*jobs), timeout=60)
    assert all(result.ok for result in results)
    assert len((await a.read("memory")).entries) == 10
    assert len((await a.read("user")).entries) == 10


async def test_concurrent_processes_lose_no_entry_and_journal_in_the_files_order(
    home: Path, journal: NotesJournal
) -> None:
    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(HELPERS / "notes_worker.py"),
            str(home),
            "owner",
            str(n),
            "10",
            stdin=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for n in range(4)
    ]
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write(b"go\n")
        worker.stdin.close()
    for worker in workers:
        _, stderr = await asyncio.wait_for(worker.communicate(), timeout=120)
        assert worker.returncode == 0, stderr.decode()
    text = (home / "people" / "owner" / "MEMORY.md").read_text(encoding="utf-8")
    expected = {f"worker {w} note {n}" for w in range(4) for n in range(10)}
    assert sorted(parse_entries(text)) == sorted(expected)
    assert is_canonical(text)
    events = await journal.events(limit=100)
    assert {event.source for event in events} == {"cli"}
    assert [c.after for e in reversed(events) for c in e.changes] == parse_entries(text)


async def test_lock_timeout_is_reported_as_a_file_error(
    notes: PersonNotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes.directory.mkdir(parents=True)
    monkeypatch.setattr(notes_file, "LOCK_TIMEOUT", 0.01)
    with FileLock(notes.directory / ".MEMORY.md.lock"):
        result = await notes.add("memory", "Likes tea.", origin=NoteOrigin("cli"))
    assert (result.ok, result.kind) == (False, "file_error")
    assert "stayed locked by another process" in result.message
    assert os.listdir(notes.directory) == [".MEMORY.md.lock"]


async def test_batch_whose_second_write_fails_puts_the_first_file_back(
    notes: PersonNotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    await notes.add("memory", "Likes tea.", origin=NoteOrigin("cli"))
    real_replace = os.replace

    def replace_failing_for_user_md(src: str, dst: str) -> None:
        if str(dst).endswith("USER.md"):
            raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(notes_file.os, "replace", replace_failing_for_user_md)
    result = await notes.batch(
        [NoteOp("add", "memory", content="Likes jazz."), NoteOp("add", "user", content="Aki.")],
        origin=NoteOrigin("cli"),
    )
    assert (result.ok, result.kind) == (False, "file_error")
    assert notes.path("memory").read_text(encoding="utf-8") == "Likes tea.\n"
    assert not notes.path("user").exists()
    assert stray_files(notes) == []
