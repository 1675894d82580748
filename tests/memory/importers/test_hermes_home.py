"""A whole Hermes home into one person: history, notes and skills, and the report of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from config.settings import NotesSettings, SkillsSettings
from memory.importers.hermes_home import HermesImport, import_hermes_home, read_hermes_history
from memory.importers.jsonl import check_conflicts
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
    person_notes = PersonNotes(home, person, notes or NotesSettings())
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
