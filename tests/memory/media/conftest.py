"""A real state.db in the test's KIOKU_HOME, with alice and bob in it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.store.database import Store


@pytest.fixture
async def store(home: Path) -> AsyncIterator[Store]:
    async with await Store.open(home / "state.db") as opened:
        for person in ("alice", "bob"):
            await ensure_person(opened, person)
        yield opened
