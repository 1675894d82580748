"""The writer: an append returns only once durable, batches split, the WAL starts over."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from memory.search.ranking import Scope, search
from memory.store import schema, wal
from memory.store import writer as writer_module
from memory.store.database import Store, connect
from memory.store.records import Conversation, NewMessage
from memory.store.wal import NotDurable
from memory.store.writer import GroupCommitWriter, batch_size


async def _open_writer(path: Path, sync: Callable[[int], None]) -> tuple[GroupCommitWriter, int]:
    """A writer on `path` (holding one owner DM session) whose WAL sync is `sync`."""
    async with await Store.open(path) as store:
        session = await store.open_session(Conversation("cli", "1", "dm", "owner"))
    db = await connect(path)
    for pragma in schema.WRITER_PRAGMAS:
        await db.execute(pragma)
    checkpointer = await connect(path)
    return GroupCommitWriter(db, path, checkpointer, sync=sync), session.id


@pytest.fixture
async def gated(tmp_path: Path) -> AsyncIterator[tuple[GroupCommitWriter, int, threading.Event]]:
    """A writer whose first WAL sync waits until the test opens the returned gate."""
    gate, entered = threading.Event(), threading.Event()

    def sync(fd: int) -> None:
        entered.set()
        assert gate.wait(timeout=30)
        os.fsync(fd)

    writer, session_id = await _open_writer(tmp_path / "state.db", sync)
    writer.entered = entered  # type: ignore[attr-defined]
    yield writer, session_id, gate
    gate.set()
    await writer.close()
    await writer._checkpointer.db.close()
    await writer.db.close()


async def test_an_append_returns_only_after_the_wal_is_synced(
    gated: tuple[GroupCommitWriter, int, threading.Event], tmp_path: Path
) -> None:
    writer, session_id, gate = gated
    append = asyncio.create_task(writer.append(session_id, NewMessage("user", "durable?")))
    assert await asyncio.to_thread(writer.entered.wait, 30)  # type: ignore[attr-defined]
    committed = await writer._checkpointer.db.execute_fetchall("SELECT content FROM turns")
    assert [r[0] for r in committed] == ["durable?"]
    assert not append.done()
    gate.set()
    assert await asyncio.wait_for(append, 30) == 1


async def test_a_failed_wal_sync_fails_the_append_and_refuses_later_writes(
    tmp_path: Path,
) -> None:
    def broken_disk(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    writer, session_id = await _open_writer(tmp_path / "state.db", broken_disk)
    try:
        with pytest.raises(NotDurable, match=r"could not be synced to disk .* restart kioku"):
            await writer.append(session_id, NewMessage("user", "lost?"))
        with pytest.raises(NotDurable):
            await writer.append(session_id, NewMessage("user", "and this?"))
    finally:
        await writer.close()
        await writer._checkpointer.db.close()
        await writer.db.close()


def test_a_crowd_of_waiting_appends_is_split_so_two_groups_overlap() -> None:
    assert batch_size(10) == 10
    assert batch_size(200) == 128
    assert batch_size(1000) == 500
    assert batch_size(10**6) == writer_module.MAX_BATCH


async def test_text_with_nul_characters_is_stored_whole_and_searchable(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        session = await store.open_session(Conversation("cli", "1", "dm", "owner"))
        texts = ["before\x00after matcha", "plain tea", "\x00"]
        await asyncio.gather(*(store.append(session.id, NewMessage("user", t)) for t in texts))
        stored = [m.content for m in await store.messages(session.id)]
        hits = await search(store, "after", Scope.of_person("owner"))
        report = await store.check_integrity()
    assert sorted(stored) == sorted(texts)
    assert [h.content for r in hits for h in r.hits] == ["before\x00after matcha"]
    assert report.ok, report.problems


async def test_the_wal_starts_over_once_it_has_grown_past_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wal, "CHECKPOINT_EVERY", 1)
    monkeypatch.setattr(wal, "WAL_RESTART_FRAMES", 20)
    async with await Store.open(tmp_path / "state.db") as store:
        session = await store.open_session(Conversation("cli", "1", "dm", "owner"))
        for n in range(300):
            await store.append(session.id, NewMessage("user", f"turn {n} about the schema"))
        row = await store.read(lambda db: db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())
        assert len(await store.messages(session.id)) == 300
    # 300 one-turn transactions write well over 1000 frames; a WAL that starts over holds few.
    assert row["log"] < 100
