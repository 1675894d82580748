"""A real state.db with two persons, alice and bob, for the scheduling tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.store.database import Store


@pytest.fixture
async def store(home: Path) -> AsyncIterator[Store]:
    async with await Store.open(home / "state.db") as opened:
        await opened.ensure_person("alice")
        await opened.ensure_person("bob")
        yield opened
