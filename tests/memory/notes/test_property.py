"""Properties of notes under random operation sequences: bounded, round-tripping, all-or-nothing."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config.settings import NotesSettings
from memory.notes.format import TARGETS, is_canonical, parse_entries, serialise_entries
from memory.notes.journal import NotesJournal
from memory.notes.ops import NoteOp, clean_text
from memory.notes.origin import NoteOrigin
from memory.notes.person_notes import NotesResult, PersonNotes
from tests.helpers.notes_store import store_from

LIMITS = NotesSettings(memory_limit=200, user_limit=200)

targets = st.sampled_from(TARGETS)
contents = st.text(alphabet="ab §\n", max_size=45)
old_texts = st.text(alphabet="ab", max_size=3)
ops = st.one_of(
    st.builds(NoteOp, st.just("add"), targets, content=contents),
    st.builds(NoteOp, st.just("replace"), targets, content=contents, old_text=old_texts),
    st.builds(NoteOp, st.just("remove"), targets, old_text=old_texts),
)
steps = st.lists(st.lists(ops, min_size=1, max_size=4), max_size=12)


def on_disk(notes: PersonNotes) -> dict[str, tuple[str, ...]]:
    """Every file's entries, after checking the text is exactly what the writer produces."""
    found = {}
    for target in TARGETS:
        path = notes.path(target)
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        entries = tuple(parse_entries(text))
        assert is_canonical(text) and text == serialise_entries(entries)
        found[target] = entries
    return found


async def run(notes: PersonNotes, step: list[NoteOp]) -> NotesResult:
    if len(step) > 1:
        return await notes.batch(step, origin=NoteOrigin("cli"))
    op = step[0]
    if op.action == "add":
        return await notes.add(op.target, op.content, origin=NoteOrigin("cli"))
    if op.action == "replace":
        return await notes.replace(op.target, op.old_text, op.content, origin=NoteOrigin("cli"))
    return await notes.remove(op.target, op.old_text, origin=NoteOrigin("cli"))


async def check_sequence(home: Path, template: Path, sequence: list[list[NoteOp]]) -> None:
    async with store_from(template, home) as store:
        await check_steps(PersonNotes(home, "owner", LIMITS, NotesJournal(store)), sequence)


async def check_steps(notes: PersonNotes, sequence: list[list[NoteOp]]) -> None:
    before = on_disk(notes)
    for step in sequence:
        result = await run(notes, step)
        after = on_disk(notes)
        for target in TARGETS:
            assert len("\n§\n".join(after[target])) <= 200
        if not result.ok:
            assert after == before, "a refused call changed a file"
        for target, state in result.states.items():
            assert state.entries == after[target]
        op = step[0]
        if len(step) == 1 and op.action == "add" and result.changed:
            assert after[op.target] == (*before[op.target], clean_text(op.content))
        before = after


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=steps)
def test_random_operations_stay_within_the_limit_and_round_trip(
    template: Path, sequence: list[list[NoteOp]]
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(check_sequence(Path(directory), template, sequence))


entries_lists = st.lists(
    st.text(alphabet="ab §\n\r\t", min_size=1, max_size=20)
    .map(clean_text)
    .filter(lambda e: e and all(line.strip() != "§" for line in e.split("\n"))),
    max_size=8,
)


@given(entries=entries_lists)
def test_serialised_entries_parse_back_unchanged(entries: list[str]) -> None:
    text = serialise_entries(entries)
    assert parse_entries(text) == entries
    assert is_canonical(text)
