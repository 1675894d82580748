"""The history store: schema and migrations, group commit, sessions, persons and identities."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.access.identities import ensure_person, get_person, link_identity, person_for
from memory.store import migrations, schema
from memory.store.database import Store, unreadable
from memory.store.errors import UnknownSession
from memory.store.records import Activity, Conversation, NewMessage
from memory.store.segment import segment


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        yield opened


def dm(person: str = "owner", chat: str = "1", platform: str = "telegram") -> Conversation:
    return Conversation(platform, chat, "dm", person)


async def test_fresh_database_is_at_the_latest_version_in_wal_mode_with_owner(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    async with await Store.open(path) as store:
        assert await get_person(store, "owner") is not None
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == migrations.SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert path.stat().st_mode & 0o777 == 0o600


async def test_a_database_from_a_newer_kioku_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {migrations.SCHEMA_VERSION + 1}")
    with pytest.raises(migrations.SchemaTooNew, match="upgrade kioku"):
        await Store.open(path)


async def test_concurrent_appends_are_all_stored_once_with_distinct_ids(store: Store) -> None:
    sessions = [await store.open_session(dm(chat=str(i))) for i in range(40)]

    async def talk(session_id: int) -> list[int]:
        return [
            await store.append(session_id, NewMessage("user", f"turn {n} of {session_id}"))
            for n in range(25)
        ]

    ids = [i for batch in await asyncio.gather(*(talk(s.id) for s in sessions)) for i in batch]
    assert len(ids) == len(set(ids)) == 1000
    for session in sessions:
        stored = [m.content for m in await store.messages(session.id)]
        assert stored == [f"turn {n} of {session.id}" for n in range(25)]


async def test_an_append_to_a_missing_session_fails_alone(store: Store) -> None:
    session = await store.open_session(dm())
    good = [store.append(session.id, NewMessage("user", f"ok {n}")) for n in range(5)]
    results = await asyncio.gather(
        *good, store.append(9999, NewMessage("user", "lost")), return_exceptions=True
    )
    assert isinstance(results[-1], UnknownSession)
    assert len(await store.messages(session.id)) == 5


async def test_appended_turns_are_indexed_with_their_session_scope(store: Store) -> None:
    session = await store.open_session(dm())
    message_id = await store.append(session.id, NewMessage("user", "抹茶"))
    rows = await store.read(
        lambda db: db.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?",
            (f'"{schema.SCOPE_MARK}1" AND "抹茶"',),
        ).fetchall()
    )
    assert [r["rowid"] for r in rows] == [message_id]
    assert segment("抹茶") == " 抹茶 茶 "


async def test_open_session_returns_the_open_one_until_it_is_closed(store: Store) -> None:
    first = await store.open_session(dm())
    assert (await store.open_session(dm())).id == first.id
    await store.close_session(first.id, "idle", title="Kyoto", summary="Tea shops")
    closed = await store.get_session(first.id)
    assert closed is not None
    assert (closed.end_reason, closed.title, closed.summary) == ("idle", "Kyoto", "Tea shops")
    assert closed.ended_at is not None
    second = await store.open_session(dm())
    assert second.id != first.id
    assert await store.session_by_external_id(second.external_id) == second


async def test_a_dm_of_an_unknown_person_is_refused(store: Store) -> None:
    with pytest.raises(LookupError, match="no person 'ghost'"):
        await store.open_session(dm("ghost"))


async def test_set_open_summary_replaces_the_open_sessions_summary(store: Store) -> None:
    session = await store.open_session(dm())
    assert await store.set_open_summary(session, "first")
    assert await store.set_open_summary(session, "second")
    updated = await store.get_session(session.id)
    assert updated is not None and updated.summary == "second"


async def test_closing_an_unknown_session_is_an_error(store: Store) -> None:
    with pytest.raises(UnknownSession):
        await store.close_session(42, "idle")


async def test_identities_resolve_to_their_person_and_can_move(store: Store) -> None:
    await ensure_person(store, "alice", "Alice")
    await ensure_person(store, "bob")
    await link_identity(store, "telegram:1", "alice")
    assert await person_for(store, "telegram:1") == "alice"
    await link_identity(store, "telegram:1", "bob")
    assert await person_for(store, "telegram:1") == "bob"
    assert await person_for(store, "discord:9") is None


async def test_linking_to_a_missing_person_is_refused(store: Store) -> None:
    with pytest.raises(LookupError, match="no person 'carol'"):
        await link_identity(store, "slack:T:U", "carol")
    with pytest.raises(ValueError, match="platform:id"):
        await link_identity(store, "nocolon", "owner")


async def test_ensure_person_keeps_an_existing_display_name(store: Store) -> None:
    await ensure_person(store, "alice", "Alice")
    person = await ensure_person(store, "alice", "Someone Else")
    assert person.display_name == "Alice"


async def test_recent_sessions_cover_dms_and_groups_taken_part_in(store: Store) -> None:
    await ensure_person(store, "alice")
    await ensure_person(store, "bob")
    alice_dm = await store.open_session(dm("alice"))
    group = await store.open_session(Conversation("discord", "chan", "group"))
    other_group = await store.open_session(Conversation("discord", "other", "group"))
    await store.open_session(dm("bob"))
    await store.append(group.id, NewMessage("user", "hi", speaker="alice"))
    await store.append(other_group.id, NewMessage("user", "hi", speaker="bob"))
    recent = await store.recent_sessions("alice")
    assert {s.id for s in recent} == {alice_dm.id, group.id}


async def test_messages_can_be_read_after_an_id_with_a_limit(store: Store) -> None:
    session = await store.open_session(dm())
    ids = [await store.append(session.id, NewMessage("user", str(n))) for n in range(5)]
    page = await store.messages(session.id, after=ids[1], limit=2)
    assert [m.content for m in page] == ["2", "3"]


async def test_integrity_report_counts_rows_and_size(store: Store) -> None:
    session = await store.open_session(dm())
    await store.append(session.id, NewMessage("assistant", "hello", tool_name="t"))
    report = await store.check_integrity()
    assert report.ok
    assert (report.persons, report.sessions, report.messages) == (1, 1, 1)
    assert report.size_bytes == await store.size_bytes() > 0


async def test_edited_and_deleted_turns_leave_the_index_in_step(store: Store) -> None:
    session = await store.open_session(dm())
    kept = await store.append(session.id, NewMessage("user", "京都の抹茶 planning"))
    gone = await store.append(session.id, NewMessage("user", "抹茶 again"))

    def edit(db: sqlite3.Connection) -> None:
        db.execute("UPDATE turns SET content = '京都の庭園' WHERE id = ?", (kept,))
        db.execute("DELETE FROM turns WHERE id = ?", (gone,))

    await store.write(edit)
    report = await store.check_integrity()
    rows = await store.read(
        lambda db: db.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", ('"抹茶" OR "庭園"',)
        ).fetchall()
    )
    assert report.ok, report.problems
    assert [r["rowid"] for r in rows] == [kept]


async def test_integrity_check_reports_a_damaged_index(store: Store) -> None:
    session = await store.open_session(dm())
    await store.append(session.id, NewMessage("user", "original words"))

    def damage(db: sqlite3.Connection) -> None:
        db.execute("DROP TRIGGER turns_fts_update")
        db.execute("UPDATE turns SET content = 'changed behind the index'")

    await store.write(damage)
    report = await store.check_integrity()
    assert not report.ok
    assert any("full-text index" in problem for problem in report.problems)


async def test_session_activity_counts_the_persons_messages_and_dates_the_last_turn(
    store: Store,
) -> None:
    session = await store.open_session(dm())
    assert await store.session_activity(session.id) == Activity(0, None)
    asked, answered = datetime(2026, 1, 2, 3, 4, tzinfo=UTC), datetime(2026, 1, 2, 3, 5, tzinfo=UTC)
    await store.append(session.id, NewMessage("user", "hi", ts=asked))
    await store.append(session.id, NewMessage("assistant", "hello", ts=answered))
    assert await store.session_activity(session.id) == Activity(1, answered)


async def test_unreadable_says_why_a_file_is_no_database_and_passes_a_real_one(
    tmp_path: Path,
) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is no database " * 200)
    assert "not a database" in (unreadable(junk) or "")
    real = tmp_path / "state.db"
    async with await Store.open(real):
        pass
    assert unreadable(real) is None


def test_serve_opens_the_store_and_closes_it_on_sigterm(home: Path) -> None:
    from tests.helpers.daemon import wait_for_log
    from tests.helpers.paths import KIOKU

    proc = subprocess.Popen(
        [str(KIOKU), "serve"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "KIOKU_LOG__FORMAT": "json"},
    )
    try:
        wait_for_log(proc, "daemon_started")
        db = sqlite3.connect(home / "state.db")
        assert db.execute("PRAGMA user_version").fetchone()[0] == migrations.SCHEMA_VERSION
        db.close()
        proc.send_signal(signal.SIGTERM)
        wait_for_log(proc, "daemon_stopped")
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
    assert not (home / "state.db-wal").exists()
