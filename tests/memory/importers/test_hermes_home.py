"""A whole Hermes home into one person: history, notes and skills, and the report of it."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from config.settings import NotesSettings, SkillsSettings
from memory.importers.hermes import HermesError
from memory.importers.hermes_home import HermesImport, import_hermes_home, read_hermes_history
from memory.importers.jsonl import check_conflicts
from memory.notes.journal import NotesJournal
from memory.notes.person_notes import PersonNotes
from memory.skills.library import SkillsLibrary
from memory.store.database import Store
from tests.helpers.history_files import make_hermes_home
from tests.helpers.skill_files import hermes_tree


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        yield opened


async def bring(
    store: Store, hermes: Path, home: Path, person: str = "ben", notes: NotesSettings | None = None
) -> HermesImport:
    parsed = read_hermes_history(hermes, person)
    await check_conflicts(store, parsed)
    assert not parsed.problems
    person_notes = PersonNotes(home, person, notes or NotesSettings(), NotesJournal(store))
    skills = SkillsLibrary(home, SkillsSettings())
    return await import_hermes_home(store, parsed, hermes, person_notes, skills)


async def test_a_hermes_home_brings_history_notes_and_skills_to_the_person(
    store: Store, tmp_path: Path
) -> None:
    hermes = make_hermes_home(tmp_path / "hermes")
    hermes_tree(hermes / "skills")
    home = tmp_path / "kioku"
    report = await bring(store, hermes, home)
    assert (report.history.sessions_added, report.history.messages_added) == (2, 4)
    assert report.notes_added == 3
    assert "Prefers uv" in (home / "people" / "ben" / "MEMORY.md").read_text()
    assert report.skills is not None and report.skills_error is None
    assert report.skills.root == home / "people" / "ben" / "skills"
    assert sorted(report.skills.imported) == [
        "compose-up",
        "github-auth",
        "github-issues",
        "note-taking",
    ]
    assert (await store.session_by_external_id("hermes:cli_1")) is not None


async def test_importing_the_same_home_twice_adds_nothing(store: Store, tmp_path: Path) -> None:
    hermes = make_hermes_home(tmp_path / "hermes")
    hermes_tree(hermes / "skills")
    await bring(store, hermes, tmp_path / "kioku")
    again = await bring(store, hermes, tmp_path / "kioku")
    assert (again.history.sessions_added, again.history.messages_added) == (0, 0)
    assert again.history.messages_present == 4
    assert again.notes_added == 0
    assert again.skills is not None and len(again.skills.unchanged) == 4


async def test_a_home_without_skills_reports_none(store: Store, tmp_path: Path) -> None:
    report = await bring(store, make_hermes_home(tmp_path / "hermes"), tmp_path / "kioku")
    assert (report.skills, report.skills_error) == (None, None)
    assert report.notes_added == 3


async def test_notes_over_the_limit_are_refused_and_the_skills_not_reached(
    store: Store, tmp_path: Path
) -> None:
    hermes = make_hermes_home(tmp_path / "hermes")
    hermes_tree(hermes / "skills")
    (hermes / "memories" / "MEMORY.md").write_text("x" * 300 + "\n")
    home = tmp_path / "kioku"
    report = await bring(store, hermes, home, notes=NotesSettings(memory_limit=200))
    assert report.history.sessions_added == 2
    assert report.notes_error is not None and report.notes_added == 0
    assert report.skills is None
    assert not (home / "people" / "ben" / "skills").exists()


def test_notes_that_are_not_text_refuse_the_home_before_anything_is_read_into_kioku(
    tmp_path: Path,
) -> None:
    hermes = make_hermes_home(tmp_path / "hermes")
    (hermes / "memories" / "USER.md").write_bytes(b"Name: Ben\n\xff\n")
    with pytest.raises(HermesError, match=r"USER\.md line 2: not UTF-8 text"):
        read_hermes_history(hermes, "ben")


def test_a_session_holding_json_too_deep_is_a_problem_and_the_rest_are_read(
    tmp_path: Path,
) -> None:
    hermes = make_hermes_home(tmp_path / "hermes")
    db = sqlite3.connect(hermes / "state.db")
    deep = "[" * 100_000 + "]" * 100_000
    db.execute("INSERT INTO sessions(id, source, started_at) VALUES ('deep', 'cli', 1767348500)")
    db.execute(
        "INSERT INTO messages(session_id, role, content, tool_calls, timestamp) "
        "VALUES ('deep', 'assistant', 'ok', ?, 1767348501)",
        (deep,),
    )
    db.commit()
    db.close()
    parsed = read_hermes_history(hermes, "ben")
    assert [s.external_id for s in parsed.sessions] == ["hermes:20260101_abc", "hermes:cli_1"]
    (problem,) = parsed.problems
    assert problem.session == "hermes:deep" and problem.line == 0
    assert str(problem).startswith("session 'deep': message 8: tool_calls nests deeper than 64")


async def test_a_session_already_imported_for_another_person_is_refused_and_dropped(
    store: Store, tmp_path: Path
) -> None:
    hermes = make_hermes_home(tmp_path / "hermes")
    await bring(store, hermes, tmp_path / "kioku", person="ben")
    parsed = read_hermes_history(hermes, "mallory")
    await check_conflicts(store, parsed)
    assert {p.session for p in parsed.problems} == {"hermes:20260101_abc", "hermes:cli_1"}
    parsed.drop_refused()
    assert parsed.sessions == []
