"""Deletions that wait for the person's "yes": the one hand-over between the model's
`history_delete` tool (and `/history forget`), which only list what would go, and the
gateway, which shows the person that list itself, alone sees their next message, and
carries the deletion out.

A conversation holds at most one waiting deletion; a newer list replaces it, and the
person's next message either confirms it (exactly "yes") or cancels it. Nothing here
deletes, so no call of the model can confirm its own list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from memory.history.plan import Plan

CONFIRM_WORD = "yes"
_YES = re.compile(r"\s*yes\s*[.!]?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class PendingDeletion:
    """A plan for `person` in `conversation` (a conversation key), shown to them by kioku
    at `shown_at` (`time.monotonic()`; None until then): only a message that reached
    kioku after that can confirm it.

    `exchange` is (session id, first turn id) of the exchange that asked for the
    deletion through the model, which goes with it: the tool's list quotes what is
    deleted. It is None for `/history forget`, whose list is a command reply, not a turn.
    """

    conversation: str
    person: str
    plan: Plan
    exchange: tuple[int, int] | None = None
    shown_at: float | None = None


class PendingDeletions:
    """The waiting deletion of each conversation, in memory: a restart cancels them all."""

    def __init__(self) -> None:
        self._waiting: dict[str, PendingDeletion] = {}

    def offer(self, pending: PendingDeletion) -> None:
        """Hold `pending` for its conversation, replacing any list shown before it."""
        self._waiting[pending.conversation] = pending

    def show(self, conversation: str, at: float) -> PendingDeletion | None:
        """The conversation's deletion not yet shown, now marked shown `at`; else None."""
        waiting = self._waiting.get(conversation)
        if waiting is None or waiting.shown_at is not None:
            return None
        shown = self._waiting[conversation] = replace(waiting, shown_at=at)
        return shown

    def take(self, conversation: str) -> PendingDeletion | None:
        """The conversation's waiting deletion, which is no longer waiting afterwards."""
        return self._waiting.pop(conversation, None)


def is_confirmation(text: str) -> bool:
    """Whether a message is the person's "yes" (any case, a full stop or ! allowed)."""
    return _YES.fullmatch(text) is not None
