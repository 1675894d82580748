"""What one write did to the entries, and how to undo it: pure functions over entry lists.

A change is worked out from the entries before and after the write, not from the
request that asked for it, so every kind of write (one tool call, a batch, an edit in
`$EDITOR`, a whole tidy, an edit made outside kioku) is described the same way and can
be undone the same way. Undoing puts each entry back where it was: applied to the file
as the write left it, it gives back exactly the entries before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher

from memory.notes.format import FILE_NAMES, TARGETS, Target
from memory.notes.ops import Action

Entries = tuple[str, ...]


@dataclass(frozen=True)
class EntryChange:
    """One entry added, replaced or removed. `position` is its index in the file after the
    write (add, replace) or before it (remove); `before`/`after` are None where there is none."""

    target: Target
    action: Action
    position: int
    before: str | None
    after: str | None

    @property
    def file_name(self) -> str:
        return FILE_NAMES[self.target]


def changes_between(
    before: Mapping[Target, Entries], after: Mapping[Target, Entries]
) -> tuple[EntryChange, ...]:
    """Every entry that differs between the two states of the files in `after`."""
    found: list[EntryChange] = []
    for target in TARGETS:
        if target in after:
            found += _diff(target, before.get(target, ()), after[target])
    return tuple(found)


def _diff(target: Target, before: Entries, after: Entries) -> list[EntryChange]:
    """Entries kept in order are unchanged; of a block that differs, pairs are replacements
    and the rest are removals or additions."""
    changes: list[EntryChange] = []
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1)
        changes += [
            EntryChange(target, "replace", j1 + k, before[i1 + k], after[j1 + k])
            for k in range(paired)
        ]
        changes += [
            EntryChange(target, "remove", i, before[i], None) for i in range(i1 + paired, i2)
        ]
        changes += [EntryChange(target, "add", j, None, after[j]) for j in range(j1 + paired, j2)]
    return changes


def undo(
    current: Mapping[Target, Entries], changes: Iterable[EntryChange]
) -> dict[Target, Entries] | str:
    """The files with `changes` undone, or why not: an entry a change wrote is no longer
    there, or one it removed is there again, so undoing would drop or repeat a later change."""
    changes = tuple(changes)
    working = {target: list(current[target]) for target in {c.target for c in changes}}
    for change in changes:
        entries = working[change.target]
        if change.after is not None and change.after not in entries:
            return f"the entry {_quote(change.after)} of {change.file_name} has changed since"
        if change.action == "remove" and change.before in entries:
            return f"the entry {_quote(change.before or '')} is back in {change.file_name} since"
    for change in changes:
        if change.action == "replace":
            entries = working[change.target]
            entries[_index(entries, change)] = change.before or ""
    for change in sorted(changes, key=lambda c: -c.position):
        if change.action == "add":
            entries = working[change.target]
            del entries[_index(entries, change)]
    for change in sorted(changes, key=lambda c: c.position):
        if change.action == "remove":
            entries = working[change.target]
            entries.insert(min(change.position, len(entries)), change.before or "")
    return {target: tuple(entries) for target, entries in working.items()}


def _index(entries: list[str], change: EntryChange) -> int:
    """Where the entry a change wrote is now: its own position if it is still there."""
    position = change.position
    if position < len(entries) and entries[position] == change.after:
        return position
    return entries.index(change.after or "")


def _quote(text: str, width: int = 60) -> str:
    first = text.split("\n", 1)[0]
    return repr(first if len(first) <= width else first[: width - 1] + "…")
