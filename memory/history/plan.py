"""What one deletion takes, fixed between `memory.history.erase.survey` and its `erase`:
its own module, since both the survey and the deleting half (`erase_rows`) take it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory.history.listing import Listed
from memory.history.selection import Asker
from memory.store.records import Role


@dataclass(frozen=True)
class DoomedSession(Listed):
    """A session that goes whole: its turns up to `last_turn` (a newer one keeps it)."""

    last_turn: int


@dataclass(frozen=True)
class DoomedTurn:
    """A turn that goes from a session that stays."""

    id: int
    session_id: int
    session_name: str
    role: Role
    speaker: str | None
    ts: datetime
    preview: str


@dataclass(frozen=True)
class Plan:
    """What one deletion takes: whole sessions, single turns, and the sessions whose
    title and summary go (those keeping turns, and those whose title quotes a phrase)."""

    asker: Asker
    sessions: tuple[DoomedSession, ...]
    turns: tuple[DoomedTurn, ...]
    retitled: tuple[int, ...]

    @property
    def is_empty(self) -> bool:
        return not (self.sessions or self.turns or self.retitled)

    @property
    def turn_count(self) -> int:
        return sum(session.turns for session in self.sessions) + len(self.turns)

    def describe(self, limit: int = 20) -> list[str]:
        """Lines a person reads before confirming: each session and turn, up to `limit`."""
        lines = [
            f"session {s.name} (id {s.id}, {s.platform} {s.kind}"
            + (f" of {s.person}" if s.person else "")
            + f", {s.started_at:%Y-%m-%d %H:%M}, {s.turns} turns"
            + (", open" if s.is_open else "")
            + f"): {s.title or 'untitled'}"
            for s in self.sessions
        ]
        lines += [
            f"message {t.id} in {t.session_name} ({t.role}, {t.ts:%Y-%m-%d %H:%M}): {t.preview}"
            for t in self.turns
        ]
        whole = {t.session_id for t in self.turns}
        lines += [
            f"title and summary of session {sid}" for sid in self.retitled if sid not in whole
        ]
        if len(lines) > limit:
            lines = [*lines[:limit], f"… and {len(lines) - limit} more"]
        return lines

    def totals(self) -> str:
        return counted(len(self.sessions), self.turn_count)


def counted(sessions: int, turns: int) -> str:
    """ "1 whole session and 3 turns": the totals people read before and after a deletion."""
    return (
        f"{sessions} whole session{'' if sessions == 1 else 's'} "
        f"and {turns} turn{'' if turns == 1 else 's'}"
    )
