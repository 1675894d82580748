"""The delivery ledger: ids taken in once per chat, messages waiting until their turn is stored."""

from __future__ import annotations

from pathlib import Path

from memory.store import deliveries
from memory.store.database import Store


async def test_a_recorded_message_is_known_in_its_own_chat_only(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        await deliveries.record(store, "telegram", "1", "m1")
        assert await deliveries.known(store, "telegram", "1", "m1")
        assert not await deliveries.known(store, "telegram", "2", "m1")
        assert not await deliveries.known(store, "discord", "1", "m1")


async def test_a_message_is_held_once_and_waits_until_recorded(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        assert await deliveries.hold(store, "slack", "D1", "1.1", '{"text": "hi"}')
        assert not await deliveries.hold(store, "slack", "D1", "1.1", '{"text": "again"}')
        assert await deliveries.known(store, "slack", "D1", "1.1")
        [row] = await deliveries.waiting_rows(store)
        assert (row.platform, row.chat, row.message_id, row.waiting) == (
            "slack",
            "D1",
            "1.1",
            '{"text": "hi"}',
        )
        await deliveries.record(store, "slack", "D1", "1.1")
        assert await deliveries.waiting_rows(store) == []
        assert await deliveries.known(store, "slack", "D1", "1.1")


async def test_an_edit_rewrites_only_a_message_still_waiting(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        await deliveries.hold(store, "slack", "D1", "1.1", "old")
        assert await deliveries.rewrite(store, "slack", "D1", "1.1", "new")
        assert [row.waiting for row in await deliveries.waiting_rows(store)] == ["new"]
        await deliveries.record(store, "slack", "D1", "1.1")
        assert not await deliveries.rewrite(store, "slack", "D1", "1.1", "newer")
        assert await deliveries.waiting_rows(store) == []


async def test_a_message_let_go_can_be_taken_in_again(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        await deliveries.hold(store, "discord", "c", "9", "x")
        await deliveries.let_go(store, "discord", "c", "9")
        assert not await deliveries.known(store, "discord", "c", "9")
        assert await deliveries.hold(store, "discord", "c", "9", "x")


async def test_letting_go_never_forgets_a_recorded_message(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "state.db") as store:
        await deliveries.record(store, "discord", "c", "9")
        await deliveries.let_go(store, "discord", "c", "9")
        assert await deliveries.known(store, "discord", "c", "9")


async def test_pruning_forgets_old_recorded_ids_and_keeps_what_waits(tmp_path: Path) -> None:
    week = deliveries.KEEP_SECONDS
    async with await Store.open(tmp_path / "state.db") as store:
        await deliveries.record(store, "telegram", "1", "old", now=1000.0)
        await deliveries.hold(store, "telegram", "1", "waits", "w", now=1000.0)
        await deliveries.record(store, "telegram", "1", "new", now=1000.0 + week)
        assert await deliveries.prune(store, now=1001.0 + week) == 1
        assert not await deliveries.known(store, "telegram", "1", "old")
        assert await deliveries.known(store, "telegram", "1", "new")
        assert [row.message_id for row in await deliveries.waiting_rows(store)] == ["waits"]
