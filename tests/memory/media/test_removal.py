"""Kept files leave with their history: a deleted session or message, a forgotten person,
the retention sweep. The rows go in the deletion's transaction, the files after it."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite
import pytest
from structlog.testing import capture_logs

from memory.history.erase import erase, survey
from memory.history.forget import forget_person
from memory.history.forget import survey as forget_survey
from memory.history.retention import sweep
from memory.history.selection import Asker, Selection
from memory.media import (
    MediaCount,
    NewMedia,
    count_media,
    count_media_of,
    media_for_message,
    media_item,
    media_path,
)
from memory.store.database import Store
from memory.store.records import to_epoch
from tests.memory.media.sent import ALICE_DM, BOB_DM, GROUP, PHOTO, files_under, sent

NOW = datetime(2026, 12, 1, tzinfo=UTC)
VOICE = NewMedia("voice", "voice.ogg", "audio/ogg", b"OggS")


async def test_deleting_a_session_removes_its_files(store: Store, home: Path) -> None:
    session, _, kept = await sent(store, home, ALICE_DM, "alice", PHOTO, VOICE)
    await sent(store, home, ALICE_DM, "alice")
    plan = await survey(store, Asker.of_person("alice"), Selection(sessions=(session.id,)))
    done = await erase(store, plan)
    assert done.files == 3
    assert files_under(home / "people" / "alice" / "media") == []
    assert [await media_item(store, k.id) for k in kept] == [None, None]
    assert await count_media(store) == MediaCount(0, 0)


async def test_deleting_one_message_removes_only_its_files(store: Store, home: Path) -> None:
    _, turn, (gone,) = await sent(store, home, ALICE_DM, "alice")
    _, _, (kept,) = await sent(store, home, ALICE_DM, "alice", VOICE)
    plan = await survey(store, Asker.of_person("alice"), Selection(messages=(turn,)))
    assert (await erase(store, plan)).files == 1
    assert files_under(home / "people" / "alice" / "media") == [media_path(home, kept)]
    assert await media_item(store, gone.id) is None
    assert await media_item(store, kept.id) == kept


async def test_a_file_already_gone_does_not_stop_the_deletion(store: Store, home: Path) -> None:
    session, _, (kept,) = await sent(store, home, ALICE_DM, "alice")
    media_path(home, kept).unlink()
    plan = await survey(store, Asker.owner(), Selection(sessions=(session.id,)))
    assert (await erase(store, plan)).sessions == 1
    assert await count_media(store) == MediaCount(0, 0)


async def test_a_file_that_cannot_be_removed_is_logged_and_its_row_still_goes(
    store: Store, home: Path
) -> None:
    session, _, (kept,) = await sent(store, home, ALICE_DM, "alice")
    path = media_path(home, kept)
    path.unlink()
    path.mkdir()  # unlink() of a folder fails (IsADirectoryError), as a read-only disk would
    plan = await survey(store, Asker.owner(), Selection(sessions=(session.id,)))
    with capture_logs() as logs:
        await erase(store, plan)
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["media_file_not_removed"]
    assert await media_item(store, kept.id) is None


@pytest.mark.parametrize(("column", "value"), [("path", "../precious.txt"), ("owner", "../..")])
async def test_a_row_edited_to_lead_out_of_the_home_never_removes_anything_there(
    store: Store, home: Path, tmp_path: Path, column: str, value: str
) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    session, _, (kept,) = await sent(store, home, ALICE_DM, "alice")

    async def edit(db: aiosqlite.Connection) -> None:
        await db.execute(f"UPDATE media SET {column} = ? WHERE id = ?", (value, kept.id))

    await store.write(edit)
    plan = await survey(store, Asker.owner(), Selection(sessions=(session.id,)))
    with capture_logs() as logs:
        await erase(store, plan)
    assert outside.read_text() == "keep me"
    assert any(e["event"] == "media_file_not_removed" for e in logs)
    assert await media_item(store, kept.id) is None


async def test_the_owner_deleting_a_group_session_removes_the_groups_files(
    store: Store, home: Path
) -> None:
    session, _, (kept,) = await sent(store, home, GROUP, "alice")
    folder = media_path(home, kept).parent
    plan = await survey(store, Asker.owner(), Selection(sessions=(session.id,)))
    assert (await erase(store, plan)).files == 1
    assert files_under(folder) == []


async def test_forgetting_a_person_removes_their_files_and_leaves_others(
    store: Store, home: Path
) -> None:
    await sent(store, home, ALICE_DM, "alice", PHOTO, VOICE)
    _, _, (in_group,) = await sent(store, home, GROUP, "alice")
    _, _, (bobs_in_group,) = await sent(store, home, GROUP, "bob")
    _, _, (bobs,) = await sent(store, home, BOB_DM, "bob")
    assert (await forget_survey(store, home, "alice")).files == 3
    report = await forget_person(store, home, "alice")
    assert report.files == 3
    assert "files they sent (photos, voice notes, documents): 3" in report.describe()
    assert not (home / "people" / "alice").exists()
    assert not (home / in_group.path).exists()
    assert media_path(home, bobs_in_group).is_file() and media_path(home, bobs).is_file()
    assert await count_media_of(store, "alice") == MediaCount(0, 0)
    assert (await count_media(store)).files == 2


async def test_retention_removes_the_files_of_the_sessions_it_sweeps(
    store: Store, home: Path
) -> None:
    old, _, (gone,) = await sent(store, home, ALICE_DM, "alice")
    await store.close_session(old.id, "idle")
    at = to_epoch(NOW - timedelta(days=100))

    async def backdate(db: aiosqlite.Connection) -> None:
        await db.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", (at, old.id))

    await store.write(backdate)
    _, _, (kept,) = await sent(store, home, ALICE_DM, "alice")
    assert (await sweep(store, 90, NOW)).sessions == 1
    assert not (home / gone.path).exists()
    assert media_path(home, kept).is_file()


async def test_a_session_deleted_by_hand_takes_its_rows_along(store: Store, home: Path) -> None:
    session, _, _ = await sent(store, home, ALICE_DM, "alice")
    _, turn, _ = await sent(store, home, BOB_DM, "bob")
    await store.close()

    def in_the_shell() -> None:  # as the sqlite3 shell does it: foreign keys off
        with closing(sqlite3.connect(home / "state.db")) as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (session.id,))
            db.execute("DELETE FROM turns WHERE id = ?", (turn,))
            db.commit()

    await asyncio.to_thread(in_the_shell)
    async with await Store.open(home / "state.db") as reopened:
        assert await count_media(reopened) == MediaCount(0, 0)
        assert (await reopened.check_integrity()).ok


async def test_bobs_queries_never_list_alices_files(store: Store, home: Path) -> None:
    await sent(store, home, ALICE_DM, "alice", PHOTO, VOICE)
    bobs, _, (his,) = await sent(store, home, BOB_DM, "bob", VOICE)
    seen = [t.id for t in await store.messages(bobs.id)]
    assert list((await media_for_message(store, seen)).values()) == [[his]]
    assert await count_media_of(store, "bob") == MediaCount(1, his.bytes)
