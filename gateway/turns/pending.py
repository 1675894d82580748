"""Platform messages taken in whose turn is not stored yet, in this process.

Each waits in its conversation's line; a second delivery of it meanwhile is dropped
here, before the ledger is asked. An edit (or a deletion) that arrives before its turn
begins replaces what the turn will read; once the turn has begun, the edit waits in the
same line and changes the stored turn after it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from adapters.base import Inbound

# (platform, chat, platform message id)
Delivery = tuple[str, str, str]
Where = Literal["queued", "begun", "absent"]
Outcome = Literal["handled", "queued", "refused"]
"""What became of an incoming message: only "handled" ones are recorded as delivered at
once; "queued" ones once their answer went out; "refused" ones never."""


@dataclass
class _Entry:
    line: str
    inbound: Inbound | None = None
    begun: bool = False
    deleted: bool = False


class Pending:
    """The messages held in this process, by delivery."""

    def __init__(self) -> None:
        self._entries: dict[Delivery, _Entry] = {}

    def __contains__(self, delivery: object) -> bool:
        return delivery in self._entries

    def claim(self, delivery: Delivery) -> bool:
        """Hold `delivery` while it is looked at; False if it is already held."""
        if delivery in self._entries:
            return False
        self._entries[delivery] = _Entry("")
        return True

    def queued(self, delivery: Delivery, line: str, inbound: Inbound) -> None:
        """The message now waits in the conversation `line`."""
        self._entries[delivery] = _Entry(line, inbound)

    def release(self, delivery: Delivery) -> None:
        self._entries.pop(delivery, None)

    def release_line(self, line: str) -> list[Delivery]:
        """Forget every message of a line that was stopped (a redelivery may come in
        again); the deliveries forgotten."""
        dropped = [d for d, entry in self._entries.items() if entry.line == line]
        for delivery in dropped:
            del self._entries[delivery]
        return dropped

    def begin(self, delivery: Delivery) -> Inbound | None:
        """The turn of `delivery` begins: the message as it now reads (edited, if it was),
        or None if it was deleted meanwhile (or is not held)."""
        entry = self._entries.get(delivery)
        if entry is None or entry.deleted:
            return None
        entry.begun = True
        return entry.inbound

    def edit(self, delivery: Delivery, text: str | None) -> tuple[Where, Inbound | None]:
        """Apply an edit (`text` None: a deletion) to a message whose turn has not begun;
        where the message is, and the message as edited when it was applied."""
        entry = self._entries.get(delivery)
        if entry is None or entry.inbound is None:
            return "absent", None
        if entry.begun:
            return "begun", None
        if text is None:
            entry.deleted = True
            return "queued", None
        entry.inbound = replace(entry.inbound, text=text)
        return "queued", entry.inbound

    def line(self, delivery: Delivery) -> str | None:
        entry = self._entries.get(delivery)
        return None if entry is None else entry.line
