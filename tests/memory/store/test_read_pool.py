"""`Store.read`: a whole multi-statement read in one hop, off the event loop, read-only."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from memory.store.database import Store
from memory.store.errors import StoreUnavailable
from memory.store.records import Conversation, NewMessage


async def test_a_read_sees_committed_turns_from_a_thread_of_its_own(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        session = await store.open_session(Conversation("cli", "c", "dm", "owner"))
        await store.append(session.id, NewMessage("user", "hello", speaker="owner"))

        def read(db: sqlite3.Connection) -> tuple[str, str]:
            (content,) = db.execute("SELECT content FROM turns").fetchone()
            return content, threading.current_thread().name

        content, thread = await store.read(read)
    assert content == "hello"
    assert thread.startswith("kioku-store-read")


async def test_a_read_cannot_write(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        with pytest.raises(StoreUnavailable, match="readonly"):
            await store.read(lambda db: db.execute("DELETE FROM turns"))


async def test_no_read_runs_after_close(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    await store.read(lambda db: db.execute("SELECT 1").fetchone())
    await store.close()
    with pytest.raises(RuntimeError):
        await store.read(lambda db: db.execute("SELECT 1").fetchone())
