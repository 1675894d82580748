"""Writes made from the daemon's live copy of a session land only while that session is
still open in state.db: a deletion in between (the CLI, the web page) wins."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

DM = Conversation("telegram", "1", "dm", "owner")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        yield opened


async def test_an_open_session_is_finished_with_its_title_and_summary(store: Store) -> None:
    session = await store.open_session(DM)
    assert await store.set_open_summary(session, "so far")
    assert await store.finish_open_session(session, "idle", title="Tea", summary="About tea")
    closed = await store.get_session(session.id)
    assert closed is not None and (closed.title, closed.summary) == ("Tea", "About tea")
    assert closed.end_reason == "idle" and closed.ended_at is not None


async def test_an_ended_session_keeps_its_end_and_gets_no_title(store: Store) -> None:
    session = await store.open_session(DM)
    await store.close_session(session.id, "history_deleted")
    assert not await store.finish_open_session(session, "idle", title="the secret")
    assert not await store.set_open_summary(session, "the secret")
    ended = await store.get_session(session.id)
    assert ended is not None and ended.end_reason == "history_deleted"
    assert (ended.title, ended.summary) == (None, None)


async def test_a_new_session_given_a_removed_ones_id_is_not_written_to(store: Store) -> None:
    old = await store.open_session(DM)
    await store.append(old.id, NewMessage("user", "x", "owner"))
    await store.write(lambda db: db.execute("DELETE FROM turns WHERE session_id = ?", (old.id,)))
    await store.write(lambda db: db.execute("DELETE FROM sessions WHERE id = ?", (old.id,)))
    new = await store.open_session(DM)
    assert not await store.finish_open_session(old, "idle", title="stale")
    current = await store.get_session(new.id)
    assert current is not None and current.ended_at is None and current.title is None
