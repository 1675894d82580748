"""Add a note but die (SIGKILL) at the moment the temp file would be renamed over the old one."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from config.settings import NotesSettings
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import PersonNotes


def die(src: str, dst: str) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    os.replace = die
    notes = PersonNotes(Path(sys.argv[1]), "owner", NotesSettings())
    asyncio.run(notes.add("memory", sys.argv[2], origin=NoteOrigin("cli")))
