"""A real v6 state.db (tests/data/state-v6.db, made by kioku 74eee6b) upgrades to the current
schema in place: every turn kept as it was, searchable within its scope, and a cut-short
upgrade resumes."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from memory.search.ranking import Scope, search
from memory.store import health, migration_steps_late, migrations, schema
from memory.store.database import Store
from memory.store.segment import normalize, stored_form
from tests.helpers.paths import DATA

FIXTURE = DATA / "state-v6.db"
FTS = schema.FTS_TABLE
TURN_COLUMNS = (
    "id, session_id, speaker_id, role, content, tool_name, tool_arguments, tool_result, "
    "platform_message_id, ts"
)
# What the rest of state.db holds, and must hold the same after the upgrade.
KEPT = {
    "turns": f"SELECT {TURN_COLUMNS} FROM turns ORDER BY id",
    "sessions": "SELECT * FROM sessions ORDER BY id",
    "participants": "SELECT * FROM participants ORDER BY person_id, session_id",
    "persons": "SELECT id, display_name, created_at FROM persons ORDER BY id",
    "identities": "SELECT * FROM identities ORDER BY identity",
    "scopes": "SELECT * FROM scopes ORDER BY id",
}


@pytest.fixture
def v6(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    shutil.copyfile(FIXTURE, path)
    return path


def rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with closing(sqlite3.connect(path)) as db:
        return {table: db.execute(sql).fetchall() for table, sql in KEPT.items()}


def version_and_columns(path: Path) -> tuple[int, list[str]]:
    with closing(sqlite3.connect(path)) as db:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        columns = [row[1] for row in db.execute("PRAGMA table_info(turns)")]
    return version, columns


def test_the_fixture_is_a_v6_database_of_every_kind_of_turn(v6: Path) -> None:
    version, columns = version_and_columns(v6)
    turns = rows(v6)["turns"]
    assert version == 6 and "body" not in columns
    contents = [turn[4] for turn in turns]
    assert "BACKUP THE NAS TONIGHT" in contents
    assert any(not c.isascii() and normalize(c) == "full width カタカナ text 123" for c in contents)
    assert "我们明天去北京吃烤鸭" in contents
    assert any(turn[5] == "web_search" and "抹茶" in turn[6] for turn in turns)
    assert {turn[3] for turn in turns} == {0, 1, 2}


async def test_opening_a_v6_database_upgrades_it_keeping_every_turn_exactly(v6: Path) -> None:
    before = rows(v6)
    async with await Store.open(v6) as store:
        report = await store.check_integrity()
        messages = [m for s in range(1, 6) for m in await store.messages(s)]
    assert report.ok, report.problems
    assert report.schema_version == migrations.SCHEMA_VERSION
    assert rows(v6) == before
    assert [(m.id, m.content, m.role, m.ts.timestamp()) for m in messages] == [
        (t[0], t[4], ("user", "assistant", "tool")[t[3]], t[9]) for t in before["turns"]
    ]
    with closing(sqlite3.connect(v6)) as db:
        bodies = db.execute("SELECT content, body FROM turns").fetchall()
    assert all(body == stored_form(content) for content, body in bodies)
    assert sum(body is not None for _, body in bodies) == 10


@pytest.mark.parametrize(
    ("query", "person", "sessions"),
    [
        ("京都", "owner", [1]),
        ("kyoto", "owner", [1]),
        ("backup", "owner", [1]),
        ("カタカナ", "owner", [1]),
        ("full width 123", "owner", [1]),
        ("creme brulee", "owner", [1]),
        ("北京", "ben", [2]),
        ("北京", "owner", []),
        ("富士山 tent", "owner", [3]),
        ("ストーブ", "ben", [3]),
        ("ramen", "owner", [4]),
        ("天気", "owner", [5]),
        ("天気", "ben", []),
    ],
)
async def test_upgraded_turns_are_found_within_their_scope_only(
    v6: Path, query: str, person: str, sessions: list[int]
) -> None:
    async with await Store.open(v6) as store:
        found = await search(store, query, Scope.of_person(person))
    assert [r.session_id for r in found] == sessions


async def test_an_upgrade_cut_short_leaves_v6_intact_and_the_next_open_completes_it(
    v6: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = rows(v6)
    layout = version_and_columns(v6)
    computed = 0

    def failing(text: str) -> str | None:
        nonlocal computed
        computed += 1
        if computed > 6:
            raise OSError("power cut")
        return stored_form(text)

    monkeypatch.setattr(migration_steps_late, "BACKFILL_ROWS", 4)
    monkeypatch.setattr(migration_steps_late, "stored_form", failing)
    with pytest.raises(OSError, match="power cut"):
        await Store.open(v6)
    assert computed > 4, "the step failed after it had stored some bodies"
    assert version_and_columns(v6) == layout
    assert rows(v6) == before
    assert (await health.diagnose(v6)).ok

    monkeypatch.undo()
    async with await Store.open(v6) as store:
        report = await store.check_integrity()
        found = await search(store, "京都", Scope.of_person("owner"))
    assert report.ok, report.problems
    assert version_and_columns(v6)[0] == migrations.SCHEMA_VERSION
    assert rows(v6) == before
    assert [r.session_id for r in found] == [1]


async def test_a_delete_needing_kiokus_function_in_v6_is_plain_sql_after_the_upgrade(
    v6: Path,
) -> None:
    with closing(sqlite3.connect(v6)) as db, pytest.raises(sqlite3.OperationalError, match="kioku"):
        db.execute("DELETE FROM turns WHERE id = 1")
    await (await Store.open(v6)).close()
    with closing(sqlite3.connect(v6)) as db:
        db.execute("DELETE FROM turns WHERE id = 1")
        db.commit()
        db.execute(f"INSERT INTO {FTS}({FTS}, rank) VALUES ('integrity-check', 1)")
        assert db.execute(f"SELECT rowid FROM {FTS} WHERE {FTS} MATCH 'kyoto'").fetchall() == []
