"""Upgrading state.db keeps every stored turn, readable as before and still searchable."""

from __future__ import annotations

from pathlib import Path

import aiosqlite
import pytest

from memory.search.ranking import Scope, search
from memory.store import migrations, schema
from memory.store.database import Store
from memory.store.layout import layout_version
from memory.store.records import NewMessage
from memory.store.scalar import scalar_now
from memory.store.segment import segment

# (id, session, speaker, role, content, tool name, tool arguments, tool result, platform id, ts)
V2_MESSAGES = [
    (1, 1, "owner", "user", "we planned the schema in 京都", None, None, None, "tg-1", 1.7e9),
    (2, 1, None, "assistant", "Kyoto tea shops open at nine", None, None, None, None, 1.7e9 + 1.5),
    (3, 1, None, "tool", "two shops found", "web", '{"q": "tea"}', "ok", None, 1.7e9 + 2.25),
    (
        4,
        2,
        "ben",
        "user",
        "group chat about 抹茶 and the schema",
        None,
        None,
        None,
        "d-9",
        1.7e9 + 3,
    ),
]


async def _make_v2(path: Path) -> None:
    """A version-2 database holding a DM of the owner and a group ben spoke in."""
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.create_function(migrations.SEGMENT_FUNCTION, 1, segment, deterministic=True)
        await migrations.migrate(db, target=2)
        await db.execute("PRAGMA foreign_keys = ON")
        await db.execute("INSERT INTO persons(id, created_at) VALUES ('ben', 0)")
        await db.execute(
            "INSERT INTO scopes(id, name) VALUES (1, 'person:owner'), (2, 'group:d:g')"
        )
        await db.execute(
            "INSERT INTO sessions(id, external_id, conversation, platform, chat, kind, person_id, "
            "scope_id, started_at) VALUES (1, 'dm', 'k1', 'telegram', 'c', 'dm', 'owner', 1, 0), "
            "(2, 'grp', 'k2', 'd', 'g', 'group', NULL, 2, 0)"
        )
        await db.executemany(
            "INSERT INTO messages(id, session_id, speaker_id, role, content, tool_name, "
            "tool_arguments, tool_result, platform_message_id, ts) VALUES (?,?,?,?,?,?,?,?,?,?)",
            V2_MESSAGES,
        )
        await db.execute(f"INSERT INTO {schema.FTS_TABLE}({schema.FTS_TABLE}) VALUES ('rebuild')")


async def test_upgrading_from_version_2_keeps_every_turn_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    await _make_v2(path)
    async with await Store.open(path) as store:
        report = await store.check_integrity()
        turns = await store.messages(1) + await store.messages(2)
        roles = await store.read(
            lambda db: db.execute("SELECT role FROM messages ORDER BY id").fetchall()
        )
    assert report.ok, report.problems
    assert (report.schema_version, report.messages) == (migrations.SCHEMA_VERSION, 4)
    assert [
        (
            t.id,
            t.session_id,
            t.speaker,
            t.role,
            t.content,
            t.tool_name,
            t.tool_arguments,
            t.tool_result,
            t.platform_message_id,
            t.ts.timestamp(),
        )
        for t in turns
    ] == V2_MESSAGES
    assert [r[0] for r in roles] == ["user", "assistant", "tool", "user"]


async def test_upgraded_turns_stay_searchable_within_their_scope(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    await _make_v2(path)
    async with await Store.open(path) as store:
        owner_hits = await search(store, "京都の schema", Scope.of_person("owner"))
        ben_hits = await search(store, "抹茶", Scope.of_person("ben"))
        ben_sees_dm = await search(store, "京都", Scope.of_person("ben"))
    assert [r.session_id for r in owner_hits] == [1]
    assert [r.session_id for r in ben_hits] == [2]
    assert ben_sees_dm == []


async def test_turns_appended_after_the_upgrade_follow_the_old_ids(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    await _make_v2(path)
    async with await Store.open(path) as store:
        new_id = await store.append(2, NewMessage("user", "新しい抹茶の店", speaker="owner"))
        hits = await search(store, "新しい", Scope.of_person("owner"))
        report = await store.check_integrity()
    assert new_id == 5
    assert [r.session_id for r in hits] == [2]
    assert report.ok, report.problems


async def test_an_upgrade_that_rebuilds_the_turns_gives_their_old_pages_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    await _make_v2(path)
    async with aiosqlite.connect(path, isolation_level=None) as db:
        rows = [(1, None, "assistant", "filler " * 200, 1.7e9 + n) for n in range(2000)]
        await db.executemany(
            "INSERT INTO messages(session_id, speaker_id, role, content, ts) VALUES (?,?,?,?,?)",
            rows,
        )
        await db.create_function(migrations.SEGMENT_FUNCTION, 1, segment, deterministic=True)
        await db.execute(f"INSERT INTO {schema.FTS_TABLE}({schema.FTS_TABLE}) VALUES ('rebuild')")
        (pages,) = await db.execute_fetchall("PRAGMA page_count")
    async with await Store.open(path) as store:
        free = await store.read(lambda db: scalar_now(db, "PRAGMA freelist_count"))
        after = await store.read(lambda db: scalar_now(db, "PRAGMA page_count"))
        report = await store.check_integrity()
    assert report.ok, report.problems
    assert report.messages == 2004
    assert free == 0
    assert after <= pages[0] * 1.1


async def test_a_user_version_below_the_tables_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    await (await Store.open(path)).close()
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.execute("PRAGMA user_version = 3")
        with pytest.raises(migrations.SchemaMismatch) as refused:
            await migrations.migrate(db)
        assert await migrations.user_version(db) == 3
    current = migrations.SCHEMA_VERSION
    assert (refused.value.version, refused.value.layout) == (3, current)
    assert f"tables it has; `PRAGMA user_version = {current}` sets it back" in str(refused.value)


async def test_each_layout_is_told_by_its_tables(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "state.db", isolation_level=None) as db:
        assert await layout_version(db) == 0
        for target in range(1, migrations.SCHEMA_VERSION + 1):
            await migrations.migrate(db, target=target)
            assert await layout_version(db) == target


def test_the_layouts_version_is_one_per_migration() -> None:
    assert len(migrations.MIGRATIONS) == schema.SCHEMA_VERSION


async def test_upgrading_from_version_12_indexes_the_turns_by_time(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    await _make_v2(path)
    async with aiosqlite.connect(path, isolation_level=None) as db:
        db.row_factory = aiosqlite.Row
        await migrations.migrate(db, target=12)
        assert await layout_version(db) == 12
    async with await Store.open(path) as store:
        plan = await store.read(
            lambda db: db.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM turns WHERE ts >= ? AND ts < ?", (0, 1.7e9 + 2)
            ).fetchall()
        )
        report = await store.check_integrity()
    assert report.ok, report.problems
    assert report.schema_version == migrations.SCHEMA_VERSION
    assert "USING COVERING INDEX turns_ts" in plan[0]["detail"]
