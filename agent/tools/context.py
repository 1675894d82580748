"""What a tool handler knows about the call: whose conversation, and the services to use."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agent.deletions import PendingDeletions
from config.settings import Settings
from memory.notes.journal import NotesJournal
from memory.notes.person_notes import PersonNotes
from memory.store.database import Store
from plumbing.meter import QUIET, Meter

if TYPE_CHECKING:
    from agent.memory_providers.builtin.search_meaning import Meaning
    from agent.memory_providers.manager import MemoryProviders


@dataclass(frozen=True)
class Services:
    """The memory layers the tools work on, shared by every conversation, and the
    deletions waiting for a person's confirmation (`history_delete` offers them, the
    gateway carries them out). `providers` are the external memory providers, when
    any are configured (`agent.memory_providers`); `meaning` is the running
    `local_vectors` as session search fuses it with the words (None without it)."""

    store: Store
    home: Path
    settings: Settings
    deletions: PendingDeletions = field(default_factory=PendingDeletions)
    providers: MemoryProviders | None = None
    meaning: Meaning | None = None
    meter: Meter = QUIET

    def notes(self, person: str) -> PersonNotes:
        return PersonNotes(self.home, person, self.settings.memory.notes, NotesJournal(self.store))


@dataclass(frozen=True)
class Origin:
    """Where the message being answered came from: its chat (and thread), and the sender's
    identity there. A reminder made in this turn goes back here unless it names another
    of the speaker's own accounts. With `sessions.dm_scope = "person"` it can differ from
    the session's own platform and chat."""

    platform: str
    chat: str
    thread: str = ""
    identity: str | None = None


@dataclass(frozen=True)
class ToolContext:
    """One conversation's view: tools act for `speaker` and never see past its scope.

    In a DM the speaker is the session's person. In a group the speaker is whoever
    wrote the message; `reveal_notes` is False there unless the owner allows private
    notes in groups, so tool results never show a person's notes to the group.
    `conversation` is the session's conversation key (where a waiting deletion is held);
    `origin` the chat of the message being answered (None in a background review).
    """

    services: Services
    session_id: int
    platform: str
    chat: str
    is_group: bool
    speaker: str | None
    reveal_notes: bool
    conversation: str = ""
    origin: Origin | None = None
