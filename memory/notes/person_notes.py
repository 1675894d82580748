"""Memory layer 1: each person's bounded MEMORY.md and USER.md behind one async API.

Every write runs the same cycle: lock the touched files (always in the same order),
re-read them, plan the change (`notes_ops`), back up a hand-edited file that would not
round-trip, replace it atomically, then journal it (`memory.notes.journal`) before the
locks are let go, so events are journaled in the order the files were written. The
file work runs off the event loop. Re-reading under the lock is what lets the person's
editor, the CLI and the daemon write the same file without losing each other's changes.
Results carry a `message` written for the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from config.settings import NotesSettings
from memory.access.people import person_dir, validate_person_id
from memory.notes.changes import undo
from memory.notes.files import (
    NotesFileError,
    RawNotes,
    backup,
    ensure_directory,
    locked_across_awaits,
    notes_path,
    read_notes,
    restore,
    write_entries,
)
from memory.notes.format import FILE_NAMES, TARGETS, NotesState, Target, parse_entries
from memory.notes.journal import NotesJournal, SeenFile, Written
from memory.notes.ops import NoteOp, Plan, Refusal, ops_from_request, plan_ops, plan_rewrite
from memory.notes.origin import NoteOrigin
from memory.notes.render import refusal_message, render_snapshot, success_message
from memory.store.errors import StoreError

Planner = Callable[[Mapping[Target, NotesState]], Plan | Refusal]
log = structlog.get_logger("kioku.notes")


@dataclass(frozen=True)
class NotesResult:
    """The outcome of one call. `message` is for the model; `headline` is its first line.

    `ok` is False when the call was refused (nothing was written); `changed` is False for
    refusals and harmless no-ops such as a duplicate add. `states` holds every file the
    call touched, after the call; `entries`/`chars`/`limit` are those of `target`.
    """

    ok: bool
    changed: bool
    kind: str
    message: str
    target: Target | None = None
    states: Mapping[Target, NotesState] = field(default_factory=dict)
    backups: tuple[Path, ...] = ()

    @property
    def headline(self) -> str:
        return self.message.split("\n", 1)[0]

    @property
    def entries(self) -> tuple[str, ...]:
        return self.states[self.target].entries if self.target in self.states else ()

    @property
    def chars(self) -> int:
        return self.states[self.target].chars if self.target in self.states else 0

    @property
    def limit(self) -> int:
        return self.states[self.target].limit if self.target in self.states else 0


class PersonNotes:
    """One person's two notes files under `$KIOKU_HOME/people/<person>/`, and their journal."""

    def __init__(
        self, home: Path, person: str, settings: NotesSettings, journal: NotesJournal
    ) -> None:
        self.person = validate_person_id(person)
        self.directory = person_dir(home, person)
        self.journal = journal
        self.limits: dict[Target, int] = {
            "memory": settings.memory_limit,
            "user": settings.user_limit,
        }

    def path(self, target: Target) -> Path:
        return notes_path(self.directory, target)

    async def read(self, target: Target) -> NotesState:
        """The file's entries as they are now (raises `NotesFileError` if it cannot be read)."""
        raw = await self.read_raw(target)
        return NotesState(target, raw.entries, self.limits[target])

    async def read_raw(self, target: Target) -> RawNotes:
        """The file's exact text and entries, e.g. to hand to an editor."""
        return await asyncio.to_thread(read_notes, self.path(target))

    async def add(self, target: Target, content: str, *, origin: NoteOrigin) -> NotesResult:
        return await self._run_ops([NoteOp("add", target, content=content)], origin)

    async def replace(
        self, target: Target, old_text: str, content: str, *, origin: NoteOrigin
    ) -> NotesResult:
        op = NoteOp("replace", target, content=content, old_text=old_text)
        return await self._run_ops([op], origin)

    async def remove(self, target: Target, old_text: str, *, origin: NoteOrigin) -> NotesResult:
        return await self._run_ops([NoteOp("remove", target, old_text=old_text)], origin)

    async def batch(self, operations: Sequence[NoteOp], *, origin: NoteOrigin) -> NotesResult:
        """Apply all operations (on either file) or none; limits are checked on the end state."""
        if not operations:
            return await self.apply({"operations": []}, origin=origin)
        return await self._run_ops(list(operations), origin)

    async def apply(self, request: Mapping[str, Any], *, origin: NoteOrigin) -> NotesResult:
        """The `memory` tool: `{"action", "target", "content", "old_text"}` or `{"operations"}`."""
        ops = ops_from_request(request)
        if isinstance(ops, Refusal):
            return NotesResult(False, False, ops.kind, refusal_message(ops, {}, batch=False))
        return await self._run_ops(ops, origin)

    async def rewrite(
        self,
        target: Target,
        text: str,
        expected: Sequence[str] | None = None,
        *,
        origin: NoteOrigin,
    ) -> NotesResult:
        """Replace the whole file with the entries of `text` (an edit made in `$EDITOR`).

        `expected` is the entries the edit started from; if the file has changed since,
        the rewrite is refused rather than dropping the other change.
        """
        entries = parse_entries(text)
        name = FILE_NAMES[target]

        def planner(states: Mapping[Target, NotesState]) -> Plan | Refusal:
            return plan_rewrite(states[target], entries, expected)

        def describe(changed: bool) -> tuple[str, str]:
            return (
                ("rewritten", f"Saved {name}") if changed else ("unchanged", f"No change to {name}")
            )

        return await self._commit((target,), target, planner, False, describe, origin)

    async def revert(self, event_id: int, *, origin: NoteOrigin) -> NotesResult:
        """Undo one journaled event as a whole (a tidy, a batch, one change), journaled with
        `origin` as reverting it; refused if an entry it touched has changed since."""
        event = await self.journal.event(event_id)
        if event is None or event.person != self.person:
            message = (
                f"Refused: {self.person} has no journaled change {event_id}. Nothing was changed."
            )
            return NotesResult(False, False, "no_match", message)
        undone_by = await self.journal.reverted_by(event_id)
        targets = tuple(t for t in TARGETS if any(c.target == t for c in event.changes))

        def planner(states: Mapping[Target, NotesState]) -> Plan | Refusal:
            restored = undo({t: states[t].entries for t in targets}, event.changes)
            if isinstance(restored, str):
                already = f" (change {undone_by} already reverted it)" if undone_by else ""
                return Refusal(
                    "conflict",
                    f"change {event_id} cannot be reverted: {restored}{already}.",
                    "Revert the later changes first (the list of changes: `kioku memory log` "
                    "or the Notes page), or edit the entry by hand.",
                )
            plan = Plan({})
            for target in targets:
                checked = plan_rewrite(states[target], restored[target], None)
                if isinstance(checked, Refusal):
                    return checked
                plan = Plan({**plan.after, **checked.after})
            return plan

        def describe(changed: bool) -> tuple[str, str]:
            return "reverted", f"Reverted change {event_id}" if changed else "No change"

        return await self._commit(targets, targets[0], planner, False, describe, origin, event_id)

    async def written(self, target: Target, entries: Sequence[str]) -> dict[str, Written]:
        """When and by what each entry's text was written, for those the journal knows."""
        return await self.journal.written(self.person, target, tuple(entries))

    async def render_snapshot(self) -> str:
        """The block to freeze into a session's system prompt, each entry with the month it
        was written. Run at a session's start, it first journals any edit made to the files
        outside kioku as a `hand edit` (`reconcile`)."""
        states: dict[Target, NotesState] = {}
        problems: dict[Target, str] = {}
        try:
            await self.reconcile()
        except (NotesFileError, StoreError) as exc:  # the snapshot still shows the files
            log.warning("notes_hand_edit_check_failed", person=self.person, error=str(exc))
        months: dict[Target, dict[str, str]] = {}
        for target in TARGETS:
            try:
                states[target] = await self.read(target)
            except NotesFileError as exc:
                problems[target] = str(exc)
                continue
            try:
                written = await self.written(target, states[target].entries)
            except StoreError:
                written = {}
            months[target] = {text: w.at.strftime("%Y-%m") for text, w in written.items()}
        return render_snapshot(states, problems, months)

    async def reconcile(self) -> int | None:
        """Compare both files with the journal and journal any difference as a `hand edit`
        (made in an editor, or a write whose journal entry failed); its event id, if any."""
        seen = await asyncio.to_thread(self._seen, TARGETS)
        if not await self.journal.differs(self.person, seen):
            return None
        async with self._locked(TARGETS):
            seen = await asyncio.to_thread(self._seen, TARGETS)
            return await self.journal.reconcile(self.person, seen)

    def _seen(self, targets: tuple[Target, ...]) -> dict[Target, SeenFile]:
        return {target: _seen(read_notes(self.path(target))) for target in targets}

    async def _run_ops(self, ops: list[NoteOp], origin: NoteOrigin) -> NotesResult:
        targets = tuple(t for t in TARGETS if any(op.target == t for op in ops))
        first, batch = ops[0], len(ops) > 1

        def planner(states: Mapping[Target, NotesState]) -> Plan | Refusal:
            return plan_ops(states, ops, refuse_repeats=origin.source != "import")

        def describe(changed: bool) -> tuple[str, str]:
            if not changed:
                return "unchanged", "No change"
            if batch:
                return "batch", f"Applied {len(ops)} operations"
            return _DONE[first.action][0], f"{_DONE[first.action][1]} {FILE_NAMES[first.target]}"

        return await self._commit(targets, first.target, planner, batch, describe, origin)

    async def _commit(
        self,
        targets: tuple[Target, ...],
        primary: Target,
        planner: Planner,
        batch: bool,
        describe: Callable[[bool], tuple[str, str]],
        origin: NoteOrigin,
        reverts: int | None = None,
    ) -> NotesResult:
        """Run one write cycle and journal it as one event made by `origin`."""
        try:
            async with self._locked(targets):
                commit = await asyncio.to_thread(self._commit_sync, targets, planner)
                changed = commit.after != commit.before
                if changed and not isinstance(commit.outcome, Refusal):
                    await self._journal(commit, origin, reverts)
        except NotesFileError as exc:
            message = (
                f"Refused: {exc}. Nothing was changed.\n"
                "Next: tell the person; retrying will not help until the file is fixed."
            )
            return NotesResult(False, False, "file_error", message, primary)
        if isinstance(commit.outcome, Refusal):
            message = refusal_message(commit.outcome, commit.before, batch)
            return NotesResult(False, False, commit.outcome.kind, message, primary, commit.before)
        kind, headline = describe(changed)
        no_ops = commit.outcome.no_ops
        if no_ops and not batch:
            headline, no_ops = f"{headline}: {no_ops[0][1]}", ()
        message = success_message(headline, commit.after, changed, no_ops, commit.backups)
        return NotesResult(True, changed, kind, message, primary, commit.after, commit.backups)

    async def _journal(self, commit: _Commit, origin: NoteOrigin, reverts: int | None) -> None:
        """Journal a write already in the files. A failure does not undo it: the file is the
        record, and the next comparison with the journal finds it (see `memory.notes.journal`)."""
        after = {target: state.entries for target, state in commit.after.items()}
        try:
            await self.journal.record(self.person, commit.seen, after, origin, reverts)
        except StoreError as exc:
            log.warning(
                "notes_journal_failed", person=self.person, source=origin.source, error=str(exc)
            )

    @contextlib.asynccontextmanager
    async def _locked(self, targets: tuple[Target, ...]) -> AsyncIterator[None]:
        async with _task_locks([self.path(t) for t in targets]):
            await asyncio.to_thread(ensure_directory, self.directory)
            async with locked_across_awaits(self.directory, targets):
                yield

    def _commit_sync(self, targets: tuple[Target, ...], planner: Planner) -> _Commit:
        """Re-read, plan, back up if needed, write: the cycle's file work, under the locks."""
        raws = {target: read_notes(self.path(target)) for target in targets}
        seen = {target: _seen(raws[target]) for target in targets}
        before = {t: NotesState(t, raws[t].entries, self.limits[t]) for t in targets}
        outcome = planner(before)
        if isinstance(outcome, Refusal):
            return _Commit(before, outcome, before, (), seen)
        backups: list[Path] = []
        written: list[Target] = []
        try:
            for target in targets:
                entries = outcome.after[target]
                if entries == raws[target].entries:
                    continue
                if not raws[target].canonical:
                    backups.append(backup(raws[target]))
                write_entries(self.path(target), entries)
                written.append(target)
        except NotesFileError as exc:
            for target in written:
                restore(raws[target], str(exc))
            raise
        after = {t: NotesState(t, outcome.after[t], self.limits[t]) for t in targets}
        return _Commit(before, outcome, after, tuple(backups), seen)


def _seen(raw: RawNotes) -> SeenFile:
    """The entries read and the file's modification time (0 for a file not there)."""
    try:
        modified = os.stat(raw.path).st_mtime
    except OSError:
        modified = 0.0
    return SeenFile(raw.entries, modified)


_DONE = {
    "add": ("added", "Added to"),
    "replace": ("replaced", "Replaced the entry in"),
    "remove": ("removed", "Removed the entry from"),
}


@dataclass(frozen=True)
class _Commit:
    before: dict[Target, NotesState]
    outcome: Plan | Refusal
    after: dict[Target, NotesState]
    backups: tuple[Path, ...]
    seen: dict[Target, SeenFile]


_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


@contextlib.asynccontextmanager
async def _task_locks(paths: list[Path]) -> AsyncIterator[None]:
    """Serialise tasks of this process on the same files before they queue for the file lock.

    The file lock alone would be correct, but each waiting task would hold a worker
    thread polling for it; waiting here costs nothing.
    """
    locks = _LOCKS.setdefault(asyncio.get_running_loop(), {})
    async with contextlib.AsyncExitStack() as stack:
        for path in sorted(paths):
            await stack.enter_async_context(locks.setdefault(path, asyncio.Lock()))
        yield
