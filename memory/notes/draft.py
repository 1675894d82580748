"""A notes file held in memory that `memory`-tool calls change without touching the disk.

Consolidation ("tidy") lets the model work on a draft: its calls are planned by the
same rules as a real write (`plan_ops`) and answered with the same messages, but only
the final entries are saved, in one rewrite that is refused if the file changed
meanwhile. So a tidy is one step in the journal, a dry run writes nothing, and a tidy
cut off by its time limit leaves the file as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory.notes.format import NotesState, char_count
from memory.notes.ops import Refusal, ops_from_request, plan_ops
from memory.notes.render import refusal_message, state_line, success_message


@dataclass(frozen=True)
class DraftAnswer:
    """What a call on the draft answers the model; `ok` is False when it was refused."""

    ok: bool
    changed: bool
    message: str


class NotesDraft:
    """One file's entries as a tidy found them (`start`) and as its calls left them (`state`).

    A tidy may merge, drop and shorten entries but never make the file longer than it
    found it: that is the whole point of it, and it keeps a confused model from filling it.
    """

    def __init__(self, start: NotesState) -> None:
        self.start = start
        self.state = start

    @property
    def changed(self) -> bool:
        return self.state.entries != self.start.entries

    def apply(self, request: Mapping[str, Any]) -> DraftAnswer:
        """Plan the `memory` tool's `request` on the draft; keep the result if it is allowed."""
        target, name = self.start.target, self.start.file_name
        ops = ops_from_request(request)
        if isinstance(ops, Refusal):
            return DraftAnswer(False, False, refusal_message(ops, {}, batch=False))
        batch = len(ops) > 1
        if any(op.target != target for op in ops):
            message = (
                f"Refused: only {name} is being tidied now (target {target!r}). Nothing was "
                f"changed.\n{state_line(self.state)}.\n"
                f"Next: make changes to target {target!r} only."
            )
            return DraftAnswer(False, False, message)
        outcome = plan_ops({target: self.state}, ops)
        if isinstance(outcome, Refusal):
            return DraftAnswer(False, False, refusal_message(outcome, {target: self.state}, batch))
        after = outcome.after[target]
        if char_count(after) > self.start.chars:
            message = (
                f"Refused: that would make {name} {char_count(after):,} chars, longer than the "
                f"{self.start.chars:,} it had when the tidy began; a tidy only merges, drops "
                f"and shortens. Nothing was changed.\n{state_line(self.state)}.\n"
                "Next: put the removals and the shorter text together in one batch of operations."
            )
            return DraftAnswer(False, False, message)
        changed = after != self.state.entries
        self.state = NotesState(target, after, self.state.limit)
        done = f"Applied {len(ops)} operations to" if batch else "Changed"
        headline = f"{done} the draft of {name}" if changed else "No change"
        message = success_message(headline, {target: self.state}, changed, outcome.no_ops)
        return DraftAnswer(True, changed, message)
