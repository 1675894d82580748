"""Each notes test gets a journal over a state.db of its own, in its KIOKU_HOME, whose
events all happen at `WRITTEN` (so the months the snapshot shows are known)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.notes.journal import NotesJournal
from memory.store.database import Store
from tests.helpers.notes_store import migrated_template, store_from


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return asyncio.run(migrated_template(tmp_path_factory.mktemp("notes-template")))


@pytest.fixture
async def store(template: Path, home: Path) -> AsyncIterator[Store]:
    async with store_from(template, home) as opened:
        yield opened


WRITTEN = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)


@pytest.fixture
def journal(store: Store) -> NotesJournal:
    return NotesJournal(store, clock=WRITTEN.timestamp)
