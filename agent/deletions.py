"""Deletions that wait for the person's "yes": the one hand-over between the model's
`history_delete` tool (and `/history forget`), which only list what would go, and the
gateway, which alone sees the person's next message and carries the deletion out.

A conversation holds at most one waiting deletion; a newer list replaces it, and the
person's next message either confirms it (exactly "yes") or cancels it. Nothing here
deletes, so no call of the model can confirm its own list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.history.erase import Plan

CONFIRM_WORD = "yes"
_YES = re.compile(r"\s*yes\s*[.!]?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class PendingDeletion:
    """A plan shown to `person` in `conversation` (a conversation key) at `offered_at`
    (`time.monotonic()`: only a message that reached kioku after it can confirm).

    `exchange` is (session id, first turn id) of the exchange that asked for the
    deletion through the model, which goes with it: the tool's list quotes what is
    deleted. It is None for `/history forget`, whose list is a command reply, not a turn.
    """

    conversation: str
    person: str
    plan: Plan
    offered_at: float
    exchange: tuple[int, int] | None = None


class PendingDeletions:
    """The waiting deletion of each conversation, in memory: a restart cancels them all."""

    def __init__(self) -> None:
        self._waiting: dict[str, PendingDeletion] = {}

    def offer(self, pending: PendingDeletion) -> None:
        """Hold `pending` for its conversation, replacing any list shown before it."""
        self._waiting[pending.conversation] = pending

    def take(self, conversation: str) -> PendingDeletion | None:
        """The conversation's waiting deletion, which is no longer waiting afterwards."""
        return self._waiting.pop(conversation, None)


def is_confirmation(text: str) -> bool:
    """Whether a message is the person's "yes" (any case, a full stop or ! allowed)."""
    return _YES.fullmatch(text) is not None
