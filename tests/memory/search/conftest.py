"""Shared by the search tests: both ways of keeping to the scope, and a store of alice's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.search import candidates
from memory.store.database import Store


@pytest.fixture(params=["joined", "by token"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Force one way of keeping to the scope, whatever the searcher's share."""
    monkeypatch.setattr(candidates, "JOIN_SHARE", 0.0 if request.param == "joined" else 1.01)
    return str(request.param)


@pytest.fixture
async def alice_store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        await ensure_person(opened, "alice")
        yield opened
