"""The vector store: scope-filtered exact search, deletion by scope and by turn, the
vector length it holds to, and its private file."""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from memory.vectors.rows import DimensionMismatch, VectorRow
from memory.vectors.store import VectorStore


def row(first: int, text: str, vector: list[float], *more: int) -> VectorRow:
    return VectorRow((first, *more), text, np.array(vector, dtype=np.float32), float(first))


def holding(folder: Path, word: bytes) -> list[Path]:
    """The database files (with WAL) under `folder` whose bytes contain `word`."""
    return [path for path in folder.glob("vectors.db*") if word in path.read_bytes()]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[VectorStore]:
    vectors = await VectorStore.open(tmp_path / "vectors.db")
    yield vectors
    await vectors.close()


async def test_search_ranks_by_cosine_best_first(store: VectorStore) -> None:
    await store.add(
        "person:alice",
        [row(1, "north", [0, 1, 0]), row(2, "east", [1, 0, 0]), row(3, "north-east", [1, 1, 0])],
    )
    hits = await store.search("person:alice", np.array([0.1, 1, 0], dtype=np.float32), 2)
    assert [hit.text for hit in hits] == ["north", "north-east"]
    assert hits[0].turn_id == 1 and hits[0].score == pytest.approx(0.995, abs=1e-3)


async def test_search_never_returns_another_scope(store: VectorStore) -> None:
    await store.add("person:alice", [row(1, "alice's secret", [1, 0, 0])])
    await store.add("person:bob", [row(2, "bob's note", [0, 1, 0])])
    hits = await store.search("person:bob", np.array([1, 0, 0], dtype=np.float32), 10)
    assert [hit.text for hit in hits] == ["bob's note"]
    assert await store.search("group:telegram:-1", np.array([1, 0, 0], np.float32), 10) == []


async def test_adding_a_stored_exchange_again_keeps_one_row(store: VectorStore) -> None:
    assert await store.add("person:alice", [row(1, "tea", [1, 0])]) == 1
    assert await store.add("person:alice", [row(1, "tea", [1, 0]), row(3, "cake", [0, 1])]) == 1
    assert await store.count("person:alice") == 2
    assert await store.embedded("person:alice", [1, 2, 3]) == {1, 3}
    assert await store.embedded("person:bob", [1, 3]) == set()


async def test_rows_added_after_a_search_are_found(store: VectorStore) -> None:
    await store.add("person:alice", [row(1, "tea", [1, 0])])
    assert len(await store.search("person:alice", np.array([0, 1], np.float32), 5)) == 1
    await store.add("person:alice", [row(2, "cake", [0, 1])])
    hits = await store.search("person:alice", np.array([0, 1], np.float32), 5)
    assert [hit.text for hit in hits] == ["cake", "tea"]


async def test_delete_turns_removes_the_exchange_spanning_any_of_them(store: VectorStore) -> None:
    await store.add("person:alice", [row(1, "tea", [1, 0], 2), row(3, "cake", [0, 1], 4)])
    assert await store.exchanges("person:alice", [2, 4, 9]) == {2: 1, 4: 3}
    assert await store.delete_turns("person:bob", [2]) == 0
    assert await store.delete_turns("person:alice", [2]) == 1
    hits = await store.search("person:alice", np.array([1, 0], np.float32), 5)
    assert [hit.text for hit in hits] == ["cake"]
    assert await store.exchanges("person:alice", [1, 2]) == {}


async def test_delete_scope_erases_only_that_scope(store: VectorStore, tmp_path: Path) -> None:
    await store.add("person:alice", [row(1, "alice remembers the lighthouse", [1, 0])])
    await store.add("person:bob", [row(2, "bob", [0, 1])])
    await store.search("person:alice", np.array([1, 0], np.float32), 5)
    assert await store.delete_scope("person:alice") == 1
    assert await store.search("person:alice", np.array([1, 0], np.float32), 5) == []
    assert await store.count("person:bob") == 1
    assert holding(tmp_path, b"lighthouse") == []


async def test_vectors_of_another_length_are_refused(store: VectorStore) -> None:
    await store.add("person:alice", [row(1, "tea", [1, 0, 0])])
    with pytest.raises(DimensionMismatch, match="3-dimension vectors, not 2"):
        await store.add("person:alice", [row(2, "cake", [1, 0])])
    with pytest.raises(DimensionMismatch):
        await store.search("person:alice", np.array([1, 0], np.float32), 5)
    await store.clear()
    assert await store.dimensions() is None
    assert await store.add("person:alice", [row(2, "cake", [1, 0])]) == 1


async def test_a_scope_larger_than_the_cache_is_streamed(tmp_path: Path) -> None:
    store = await VectorStore.open(tmp_path / "small.db", cache_bytes=64)
    try:
        rng = np.random.default_rng(7)
        rows = [
            VectorRow((i,), f"row {i}", rng.normal(size=8).astype(np.float32), float(i))
            for i in range(1, 30)
        ]
        await store.add("person:alice", rows)
        hits = await store.search("person:alice", rows[17].vector, 3)
        assert hits[0].turn_id == 18 and hits[0].score == pytest.approx(1.0, abs=1e-5)
    finally:
        await store.close()


async def test_the_file_is_readable_by_its_owner_only(store: VectorStore) -> None:
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


async def test_rows_another_process_adds_are_searched_at_once(
    store: VectorStore, tmp_path: Path
) -> None:
    await store.add("person:alice", [row(1, "north", [0, 1, 0])])
    query = np.array([1, 0, 0], dtype=np.float32)
    assert [hit.text for hit in await store.search("person:alice", query, 1)] == ["north"]
    other = await VectorStore.open(tmp_path / "vectors.db")
    try:
        await other.add("person:alice", [row(2, "east", [1, 0, 0])])
    finally:
        await other.close()
    assert [hit.text for hit in await store.search("person:alice", query, 1)] == ["east"]
