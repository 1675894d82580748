"""Tidy's rules without a model: its draft plans like a real write and never grows the file,
and a file is due when full or old, never twice for the same entries."""

from __future__ import annotations

from pathlib import Path

from memory.notes.draft import NotesDraft
from memory.notes.format import NotesState
from memory.notes.tidy_marks import TidyMark, digest, due, look, read_mark

DAY = 86_400.0
ENTRIES = ("Likes green tea", "Drinks green tea every morning", "Lives in Tokyo")


def state(*entries: str, limit: int = 200) -> NotesState:
    return NotesState("memory", tuple(entries), limit)


def test_draft_applies_a_merge_batch_without_touching_the_start() -> None:
    draft = NotesDraft(state(*ENTRIES))
    answer = draft.apply(
        {
            "operations": [
                {
                    "action": "replace",
                    "target": "memory",
                    "old_text": "Likes green",
                    "content": "Green tea every morning",
                },
                {"action": "remove", "target": "memory", "old_text": "Drinks green"},
            ]
        }
    )
    assert answer.ok and answer.changed
    assert draft.state.entries == ("Green tea every morning", "Lives in Tokyo")
    assert draft.start.entries == ENTRIES and draft.changed
    assert "Applied 2 operations to the draft of MEMORY.md" in answer.message


def test_draft_refuses_a_change_that_makes_the_file_longer_than_it_began() -> None:
    draft = NotesDraft(state(*ENTRIES))
    answer = draft.apply({"action": "add", "target": "memory", "content": "Has a cat"})
    assert not answer.ok and draft.state.entries == ENTRIES
    assert "longer than the" in answer.message and "one batch" in answer.message


def test_draft_refuses_the_other_file() -> None:
    draft = NotesDraft(state(*ENTRIES))
    answer = draft.apply({"action": "remove", "target": "user", "old_text": "tea"})
    assert not answer.ok and "only MEMORY.md is being tidied" in answer.message


def test_draft_passes_on_the_planners_refusal_with_the_candidates() -> None:
    draft = NotesDraft(state(*ENTRIES))
    answer = draft.apply({"action": "remove", "target": "memory", "old_text": "green tea"})
    assert not answer.ok and answer.message.startswith("Refused:")
    assert "Candidates:" in answer.message and draft.state.entries == ENTRIES


def test_a_file_at_80_percent_of_its_cap_is_due_and_one_below_is_not() -> None:
    full = state("x" * 160)  # 160/200
    assert due(full, None, 0.8, None, 0.0) == "full"
    assert due(state("x" * 159), None, 0.8, None, 0.0) is None


def test_a_file_a_tidy_left_exactly_so_is_not_due_however_full() -> None:
    full = state("x" * 190)
    assert due(full, TidyMark(0.0, digest(full.entries)), 0.8, DAY, 10 * DAY) is None


def test_a_changed_file_is_due_once_tidy_every_has_passed_since_its_last_tidy() -> None:
    small = state("Lives in Tokyo")
    mark = TidyMark(0.0, digest(("Lived in Kyoto",)))
    assert due(small, mark, 0.8, 7 * DAY, 6 * DAY) is None
    assert due(small, mark, 0.8, 7 * DAY, 7 * DAY) == "old"
    assert due(small, mark, 0.8, None, 70 * DAY) is None


def test_an_empty_file_is_never_due() -> None:
    assert due(state(), None, 0.01, DAY, 10 * DAY) is None


def test_the_first_look_at_a_file_starts_its_clock(tmp_path: Path) -> None:
    small = state("Lives in Tokyo")
    assert look(tmp_path, small, 0.8, 7 * DAY, 100.0) is None
    assert read_mark(tmp_path, "memory") == TidyMark(100.0, "")
    assert look(tmp_path, small, 0.8, 7 * DAY, 100.0 + 7 * DAY) == "old"
