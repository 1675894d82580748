"""What a deletion asks for, and who asks: the rules of whose history may go.

A person deletes only their own direct-message history, wherever they ask from (a
DM, their web page, the model's `history_delete` tool). Group history belongs to the
group, so only the owner (the CLI, or the web page's admin) deletes it; the owner may
narrow any deletion to one person with `person`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


class NotAllowed(PermissionError):
    """The selection names history the asker may not delete; `str()` says which and why."""


class EmptySelection(ValueError):
    """A selection that names nothing (no session, message, date or phrase)."""


@dataclass(frozen=True)
class Asker:
    """Who deletes: `person` (their own DMs only), or the owner when `person` is None."""

    person: str | None = None

    @classmethod
    def owner(cls) -> Asker:
        return cls(None)

    @classmethod
    def of_person(cls, person: str) -> Asker:
        return cls(person)

    @property
    def is_owner(self) -> bool:
        return self.person is None


@dataclass(frozen=True)
class Selection:
    """What to delete. The parts add up (a session and a message id delete both).

    `sessions` go whole; `messages` are turn ids; `before` takes every turn older than
    it (and a session left empty with it); `matching` every turn whose text, tool
    arguments or tool result holds the phrase (case-insensitive for ASCII letters).
    `person` narrows an owner's selection to that person's history: their DMs and the
    turns they spoke in groups.
    """

    sessions: tuple[int, ...] = ()
    messages: tuple[int, ...] = ()
    before: datetime | None = None
    matching: str | None = None
    person: str | None = None

    def __post_init__(self) -> None:
        if self.matching is not None and not self.matching.strip():
            raise EmptySelection("the phrase to match is empty; give the words to look for")
        if not (self.sessions or self.messages or self.before or self.matching):
            raise EmptySelection(
                "nothing selected: name a session, a message id, a date (before) or a phrase"
            )
        if self.before is not None and self.before.tzinfo is None:
            raise ValueError("`before` must be an aware datetime (it is compared with UTC times)")
