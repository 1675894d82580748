"""Cursors: one per chat kioku talks in, only ever moving forward."""

from __future__ import annotations

from pathlib import Path

from memory.store import cursors
from memory.store.cursors import Seen
from memory.store.database import Store


def seen(message_id: str, at: float, *, chat: str = "c", addressed: bool = True) -> Seen:
    return Seen("discord", chat, "", message_id, False, at, addressed)


async def test_a_chat_gets_a_cursor_once_kioku_is_addressed_there(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        await cursors.advance(store, seen("1", 100.0, addressed=False))
        assert await cursors.due(store, "discord", 0.0) == []
        await cursors.advance(store, seen("2", 200.0))
        await cursors.advance(store, seen("3", 300.0, addressed=False))
        [row] = await cursors.due(store, "discord", 0.0)
        assert (row.chat, row.message_id, row.is_direct) == ("c", "3", False)
        assert await cursors.watched(store) == {("discord", "c", "")}


async def test_a_cursor_never_moves_back(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        await cursors.advance(store, seen("9", 900.0))
        await cursors.advance(store, seen("5", 500.0))
        await cursors.advance(store, seen("4", 400.0, addressed=False))
        [row] = await cursors.due(store, "discord", 0.0)
        assert row.message_id == "9"


async def test_group_chats_are_due_only_within_the_age_direct_ones_always(
    tmp_path: Path,
) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        await cursors.advance(store, seen("1", 100.0, chat="old-group"))
        await cursors.advance(store, seen("2", 5000.0, chat="new-group"))
        await cursors.advance(store, Seen("discord", "dm", "", "3", True, 100.0, True))
        await cursors.advance(store, Seen("slack", "D1", "", "4.0", True, 100.0, True))
        due = await cursors.due(store, "discord", 1000.0)
        assert {row.chat for row in due} == {"new-group", "dm"}
