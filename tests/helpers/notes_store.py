"""A state.db for notes tests: migrated once per test run, copied for each test.

Every `PersonNotes` journals its writes in state.db; opening a new one runs every
migration (a fifth of a second), copying a migrated one takes a few milliseconds.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from memory.store.database import Store


async def migrated_template(folder: Path) -> Path:
    """An empty state.db at the current schema, in `folder`."""
    path = folder / "state.db"
    async with await Store.open(path):
        pass
    return path


def _copy(template: Path, home: Path) -> None:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.copyfile(template, home / "state.db")


@asynccontextmanager
async def store_from(template: Path, home: Path) -> AsyncIterator[Store]:
    """A store of its own in `home`, copied from `template`."""
    await asyncio.to_thread(_copy, template, home)
    async with await Store.open(home / "state.db") as store:
        yield store
