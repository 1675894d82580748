"""state.db needs nothing of kioku's: the stock sqlite3 shell and Python's plain sqlite3 module
search it, delete from it and check it while kioku has it open, and kioku stays consistent."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import closing
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

SHELL = shutil.which("sqlite3")
Tool = Callable[[Path, str], Awaitable[list[tuple[object, ...]]]]
FTS_CHECK = "INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 1)"
RANKED = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH '{}' ORDER BY rank LIMIT 10"

DM = [
    ("user", "my grandmother's matcha recipe uses whisk and sieve", "owner"),
    ("assistant", "A matcha recipe: sift, whisk, serve", None),
    ("user", "抹茶のレシピを教えて", "owner"),
    ("assistant", "京都駅の近くに抹茶のお店があります", None),
    ("user", "and a RECIPE for ramen?", "owner"),
]
GROUP = [
    ("user", "group recipe swap on friday", "ben"),
    ("user", "抹茶 cake for the swap", "owner"),
]


async def shell(path: Path, sql: str) -> list[tuple[object, ...]]:
    """`sql` run by the sqlite3 binary, the way a person types it (foreign keys off); an
    error it prints is raised, as Python's module raises it."""
    assert SHELL is not None
    process = await asyncio.create_subprocess_exec(
        SHELL,
        "-json",
        "-bail",
        "-cmd",
        ".timeout 5000",
        str(path),
        sql,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    if process.returncode != 0 or err:
        raise sqlite3.DatabaseError(f"sqlite3 exited {process.returncode}: {err.decode()}")
    text = out.decode().strip()
    return [tuple(row.values()) for row in json.loads(text)] if text else []


async def python_sqlite3(path: Path, sql: str) -> list[tuple[object, ...]]:
    """`sql` run by Python's sqlite3 module on a connection of its own, nothing registered."""

    def run() -> list[tuple[object, ...]]:
        with closing(sqlite3.connect(path, timeout=5, isolation_level=None)) as db:
            return [tuple(row) for row in db.execute(sql).fetchall()]

    return await asyncio.to_thread(run)


TOOLS = [
    pytest.param(
        shell,
        id="sqlite3-shell",
        marks=pytest.mark.skipif(
            SHELL is None,
            reason="the sqlite3 shell is not installed (Debian's `sqlite3` package; .ci/run "
            "installs it)",
        ),
    ),
    pytest.param(python_sqlite3, id="python-sqlite3"),
]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A live store (WAL, its writer, checkpointer and readers open) holding a DM of the
    owner's and a group ben and the owner spoke in."""
    async with await Store.open(tmp_path / "state.db") as opened:
        await ensure_person(opened, "ben")
        for conversation, turns in (
            (Conversation("telegram", "1", "dm", "owner"), DM),
            (Conversation("discord", "g", "group"), GROUP),
        ):
            session = await opened.open_session(conversation)
            for role, text, speaker in turns:
                await opened.append(session.id, NewMessage(role, text, speaker))
        yield opened


async def found(store: Store, query: str, person: str = "owner") -> list[int]:
    """The turn ids kioku's own search shows for `query`."""
    return sorted(
        hit.message_id
        for result in await search(store, query, Scope.of_person(person), limit=50)
        for hit in result.hits
    )


async def assert_consistent(tool: Tool, store: Store) -> None:
    assert await tool(store.path, "PRAGMA integrity_check") == [("ok",)]
    assert await tool(store.path, "PRAGMA foreign_key_check") == []
    assert await tool(store.path, FTS_CHECK) == []
    report = await store.check_integrity()
    assert report.ok, report.problems


@pytest.mark.parametrize("tool", TOOLS)
async def test_a_ranked_match_works_against_a_live_database(tool: Tool, store: Store) -> None:
    ranked = await tool(store.path, RANKED.format("recipe").replace("rowid", "rowid, rank"))
    assert {row[0] for row in ranked} == {1, 2, 5, 6}
    ranks = [float(str(row[1])) for row in ranked]
    assert ranks == sorted(ranks) and ranks[0] < 0
    assert {row[0] for row in await tool(store.path, RANKED.format("抹茶"))} == {3, 4, 7}
    assert await tool(store.path, RANKED.format("京都 都駅")) == [(4,)]
    shown = await tool(
        store.path,
        "SELECT m.id, m.role, m.content FROM messages_fts JOIN messages AS m "
        "ON m.id = messages_fts.rowid WHERE messages_fts MATCH 'sieve' ORDER BY rank LIMIT 10",
    )
    assert shown == [(1, "user", DM[0][1])]


@pytest.mark.parametrize("tool", TOOLS)
async def test_a_turn_deleted_by_hand_is_no_longer_found(tool: Tool, store: Store) -> None:
    assert 4 in await found(store, "抹茶")
    assert await tool(store.path, "DELETE FROM turns WHERE id = 4") == []
    assert await found(store, "抹茶") == [3, 7]
    assert await found(store, "京都") == []
    assert await tool(store.path, RANKED.format("京都")) == []
    assert await found(store, "recipe") == [1, 2, 5, 6]
    await assert_consistent(tool, store)


@pytest.mark.parametrize("tool", TOOLS)
async def test_a_session_deleted_by_hand_takes_its_turns_and_participants(
    tool: Tool, store: Store
) -> None:
    assert await found(store, "swap", "ben") == [6, 7]
    assert await tool(store.path, "DELETE FROM sessions WHERE id = 2") == []
    assert await tool(store.path, "SELECT count(*) FROM turns WHERE session_id = 2") == [(0,)]
    assert await tool(store.path, "SELECT * FROM participants WHERE session_id = 2") == []
    assert await found(store, "swap", "ben") == []
    assert await found(store, "抹茶") == [3, 4]
    assert await tool(store.path, RANKED.format("swap")) == []
    await assert_consistent(tool, store)
    after = await store.append(1, NewMessage("user", "one more matcha recipe", "owner"))
    assert after in await found(store, "matcha")


@pytest.mark.parametrize("tool", TOOLS)
async def test_a_session_cannot_move_to_another_scope_by_hand(tool: Tool, store: Store) -> None:
    with pytest.raises(sqlite3.DatabaseError, match="scope_id cannot change"):
        await tool(store.path, "UPDATE sessions SET scope_id = 1 WHERE id = 2")
    assert await found(store, "swap", "ben") == [6, 7]
