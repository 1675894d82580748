"""A separate process that adds notes: used to prove concurrent writers lose nothing.

Usage: notes_worker.py HOME PERSON WORKER COUNT. It waits for a line on stdin before
starting, so the test can release all workers at once, then adds COUNT entries.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from config.settings import NotesSettings
from memory.notes.journal import NotesJournal
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import PersonNotes
from memory.store.database import Store


async def main(home: str, person: str, worker: str, count: int) -> None:
    async with await Store.open(Path(home) / "state.db") as store:
        notes = PersonNotes(
            Path(home), person, NotesSettings(memory_limit=100_000), NotesJournal(store)
        )
        for number in range(count):
            result = await notes.add(
                "memory", f"worker {worker} note {number}", origin=NoteOrigin("cli")
            )
            if not result.ok:
                raise SystemExit(result.message)


if __name__ == "__main__":
    sys.stdin.readline()
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
