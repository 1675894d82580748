"""A real state.db with one person, alice, besides the owner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.access.identities import ensure_person
from memory.access.people import OWNER
from memory.store.database import Store


@pytest.fixture
async def store(home: Path) -> AsyncIterator[Store]:
    async with await Store.open(home / "state.db") as opened:
        await ensure_person(opened, OWNER)
        await ensure_person(opened, "alice")
        yield opened
