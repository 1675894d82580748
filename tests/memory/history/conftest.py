"""The store every history test works on: a real state.db in the test's KIOKU_HOME."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.store.database import Store


@pytest.fixture
async def store(home: Path) -> AsyncIterator[Store]:
    async with await Store.open(home / "state.db") as opened:
        yield opened
