"""Add a note but die (SIGKILL) at the moment the temp file would be renamed over the old one."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from config.settings import NotesSettings
from memory.notes.journal import NotesJournal
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import PersonNotes
from memory.store.database import Store


def die(src: str, dst: str) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


async def main(home: Path, text: str) -> None:
    async with await Store.open(home / "state.db") as store:
        notes = PersonNotes(home, "owner", NotesSettings(), NotesJournal(store))
        os.replace = die
        await notes.add("memory", text, origin=NoteOrigin("cli"))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
