"""Planning notes changes: pure functions from the current entries to new ones or a refusal.

Nothing here touches the disk, so the rules (exact-one match, duplicate and
near-duplicate adds, limits checked on the final state, safety of new text) are the
same for a single tool call, a batch over both files and an edit in `$EDITOR`, and
are easy to test exhaustively.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from memory.notes.format import (
    FILE_NAMES,
    TARGETS,
    NotesState,
    Target,
    char_count,
    is_separator_line,
    normalise_newlines,
)
from memory.notes.repeats import repeated_entry, same_text
from memory.safety import scan_text

Action = Literal["add", "replace", "remove"]
ACTIONS: tuple[Action, ...] = get_args(Action)
RefusalKind = Literal[
    "invalid",
    "empty",
    "separator",
    "unsafe",
    "duplicate_entry",
    "near_duplicate",
    "no_match",
    "ambiguous",
    "over_limit",
    "conflict",
    "file_error",
]
REQUEST_SHAPE = (
    '{"action": "add"|"replace"|"remove", "target": "memory"|"user", "content": "...", '
    '"old_text": "..."} or {"operations": [<such objects>]}'
)


@dataclass(frozen=True)
class NoteOp:
    """One change to one file; `old_text` is a short piece of the one entry to change."""

    action: Action
    target: Target
    content: str = ""
    old_text: str = ""

    @property
    def label(self) -> str:
        preposition = "to" if self.action == "add" else "in" if self.action == "replace" else "from"
        return f"{self.action} {preposition} {self.target}"


@dataclass(frozen=True)
class Refusal:
    """Why nothing was written: `reason` says what is wrong, `next_step` what to do about it.

    `show` names the files whose entries the reader needs to see to act (an over-limit
    add needs the entries to consolidate; an unsafe text does not); `candidates` are the
    entries an ambiguous `old_text` matched.
    """

    kind: RefusalKind
    reason: str
    next_step: str
    targets: tuple[Target, ...] = ()
    show: tuple[Target, ...] = ()
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """The entries every touched file will hold, and which ops turned out to be no-ops."""

    after: dict[Target, tuple[str, ...]]
    no_ops: tuple[tuple[int, str], ...] = ()


def clean_text(text: str) -> str:
    return normalise_newlines(text).strip()


def ops_from_request(request: Mapping[str, Any]) -> list[NoteOp] | Refusal:
    """Read the `memory` tool's arguments: one action, or `operations` applied as one batch."""
    if not isinstance(request, Mapping):
        return _invalid("the request is not an object")
    raw_ops = request.get("operations")
    if raw_ops is not None:
        if not isinstance(raw_ops, list) or not raw_ops:
            return _invalid("operations must be a non-empty list of operation objects")
        ops: list[NoteOp] = []
        for index, raw in enumerate(raw_ops, start=1):
            op = op_from_mapping(raw, f"operation {index}: ")
            if isinstance(op, Refusal):
                return op
            ops.append(op)
        return ops
    op = op_from_mapping(request, "")
    return op if isinstance(op, Refusal) else [op]


def op_from_mapping(raw: Any, where: str) -> NoteOp | Refusal:
    """One operation object; every field problem is reported with the shape to use."""
    if not isinstance(raw, Mapping):
        return _invalid(f"{where}not an object")
    action, target = raw.get("action"), raw.get("target")
    if action not in ACTIONS:
        return _invalid(f"{where}action must be one of add, replace, remove (got {action!r})")
    if target not in TARGETS:
        return _invalid(f"{where}target must be memory or user (got {target!r})")
    fields = {"content": raw.get("content", ""), "old_text": raw.get("old_text", "")}
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            return _invalid(f"{where}{name} must be a string (got {type(value).__name__})")
    return NoteOp(action, target, fields["content"] or "", fields["old_text"] or "")


def plan_ops(
    states: Mapping[Target, NotesState], ops: Sequence[NoteOp], *, refuse_repeats: bool = True
) -> Plan | Refusal:
    """Apply `ops` in order to copies of the entries; the limits are checked on the result.

    An add that only repeats an entry in other words is refused (`repeats`), except with
    `refuse_repeats` False: an import keeps every entry it brings, as it was written.
    """
    working = {target: list(state.entries) for target, state in states.items()}
    no_ops: list[tuple[int, str]] = []
    batch = len(ops) > 1
    for index, op in enumerate(ops, start=1):
        where = f"Operation {index} ({op.label}): " if batch else ""
        outcome = _apply(working[op.target], op, where, refuse_repeats)
        if isinstance(outcome, Refusal):
            return outcome
        if outcome:
            no_ops.append((index, outcome))
    after = {target: tuple(entries) for target, entries in working.items()}
    refusal = _over_limit(states, after, ops)
    return refusal or Plan(after, tuple(no_ops))


def plan_rewrite(
    state: NotesState, entries: Sequence[str], expected: Sequence[str] | None
) -> Plan | Refusal:
    """A whole new list of entries (an edit in `$EDITOR`), checked like any other write.

    `expected` is what the editor started from: if the file changed meanwhile, writing
    would silently drop someone else's change, so it is refused. Entries already in the
    file are not rescanned, so a blocked hand-written entry does not block every edit.
    """
    target, name = state.target, state.file_name
    if expected is not None and tuple(expected) != state.entries:
        return Refusal(
            "conflict",
            f"{name} changed on disk after the edit started (another process or the "
            "assistant wrote to it).",
            "Start the edit again from the current file and redo the change.",
            (target,),
        )
    for number, entry in enumerate(entries, start=1):
        if entry in state.entries:
            continue
        finding = scan_text(entry)
        if finding is not None:
            return Refusal(
                "unsafe",
                f"entry {number} was refused by the safety check ({finding}).",
                "Rephrase or delete that entry, then save again.",
                (target,),
            )
    after = {target: tuple(entries)}
    return _over_limit({target: state}, after, ()) or Plan(after)


def _apply(
    entries: list[str], op: NoteOp, where: str, refuse_repeats: bool
) -> str | Refusal | None:
    """Change `entries` in place; a string result names a harmless no-op."""
    name = FILE_NAMES[op.target]
    content = clean_text(op.content)
    if op.action != "remove":
        refusal = _check_content(content, op, where)
        if refusal is not None:
            return refusal
    if op.action == "add":
        if content in entries or any(same_text(entry, content) for entry in entries):
            return f"already in {name}"
        kept = repeated_entry(content, entries) if refuse_repeats else None
        if kept is not None:
            return _repeats(kept, op, where)
        entries.append(content)
        return None
    found = _find(entries, op, where)
    if isinstance(found, Refusal):
        return found
    if op.action == "remove":
        del entries[found]
        return None
    if entries[found] == content:
        return f"the entry in {name} already says that"
    if content in entries:
        return Refusal(
            "duplicate_entry",
            f"{where}the new text is already another entry of {name}.",
            "Remove the entry you meant to replace instead (action remove).",
            (op.target,),
            (op.target,),
        )
    entries[found] = content
    return None


def _repeats(kept: str, op: NoteOp, where: str) -> Refusal:
    """An add that only says again what `kept` says: name it, and say how to change it."""
    shown = kept if scan_text(kept) is None else "[an entry withheld: it failed the safety check]"
    return Refusal(
        "near_duplicate",
        f"{where}{FILE_NAMES[op.target]} already says this, in the entry {shown!r}.",
        "If your text corrects or adds to that entry, replace it (action replace, old_text: a "
        "short piece of that entry, content: the whole new entry). If it says nothing new, "
        "there is nothing to save.",
        (op.target,),
    )


def _check_content(content: str, op: NoteOp, where: str) -> Refusal | None:
    target = (op.target,)
    if not content:
        return Refusal(
            "empty",
            f"{where}content is empty.",
            "Give the text of the note in content (to delete an entry use remove).",
            target,
        )
    if any(is_separator_line(line) for line in content.split("\n")):
        return Refusal(
            "separator",
            f"{where}content has a line holding only §, which separates entries in the file.",
            "Drop that line; to save two notes, add them as two entries (or in one batch).",
            target,
        )
    finding = scan_text(content)
    if finding is not None:
        return Refusal(
            "unsafe",
            f"{where}the safety check refused the content ({finding}).",
            "Do not retry this text. Rephrase the note without that part, or leave it out.",
            target,
        )
    return None


def _find(entries: list[str], op: NoteOp, where: str) -> int | Refusal:
    """Index of the one entry containing `old_text` (identical duplicates count once)."""
    name, target = FILE_NAMES[op.target], (op.target,)
    old_text = clean_text(op.old_text)
    if not old_text:
        return Refusal(
            "empty",
            f"{where}old_text is empty.",
            f"Set old_text to a short piece of the entry to {op.action}, copied exactly.",
            target,
            target,
        )
    matches = [index for index, entry in enumerate(entries) if old_text in entry]
    distinct = tuple(dict.fromkeys(entries[index] for index in matches))
    if not distinct:
        return Refusal(
            "no_match",
            f"{where}no entry of {name} contains {old_text!r}.",
            "Retry with old_text set to a short piece copied exactly from one of the entries.",
            target,
            target,
        )
    if len(distinct) > 1:
        return Refusal(
            "ambiguous",
            f"{where}{old_text!r} is in {len(distinct)} entries of {name}; it must pick one.",
            "Retry with a longer old_text that appears in only one of the candidates.",
            target,
            (),
            distinct,
        )
    return matches[0]


def _over_limit(
    states: Mapping[Target, NotesState],
    after: Mapping[Target, tuple[str, ...]],
    ops: Sequence[NoteOp],
) -> Refusal | None:
    """A file may not end above its limit, unless the change shrinks an already oversized file."""
    over = [
        target
        for target in TARGETS
        if target in after
        and char_count(after[target]) > states[target].limit
        and char_count(after[target]) > states[target].chars
    ]
    if not over:
        return None
    parts = [
        f"{FILE_NAMES[t]} would be {char_count(after[t]):,}/{states[t].limit:,} chars, over its "
        f"limit (it is {states[t].chars:,} now)"
        for t in over
    ]
    if len(ops) == 1 and ops[0].action == "add":
        added = clean_text(ops[0].content)
        extra = len(added) + (3 if states[ops[0].target].entries else 0)
        parts[0] += f"; the new entry adds {extra:,} chars with its separator"
        step = (
            "Consolidate now, in this same turn: merge related entries with replace or drop "
            "stale ones with remove (one batch can do that and this add together), then retry "
            "the add. Shorten the new entry if it can be said in fewer words."
        )
    elif len(ops) == 1:
        step = (
            "Shorten the new text, or remove stale entries and make this change together in "
            "one batch — in this same turn."
        )
    elif ops:
        step = "Add removes or shorter replacements to the same batch and retry it, in this turn."
    else:
        step = "Shorten or remove entries until the file fits its limit, then save again."
    return Refusal("over_limit", "; ".join(parts) + ".", step, tuple(over), tuple(over))


def _invalid(problem: str) -> Refusal:
    return Refusal("invalid", f"invalid request: {problem}.", f"Use {REQUEST_SHAPE}.")
