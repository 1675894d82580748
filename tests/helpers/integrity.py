"""Checks that a home's state.db is whole after a fault."""

from __future__ import annotations

from pathlib import Path

from memory.store.database import Store


async def integrity_problems(home: Path) -> list[str]:
    """What the store's own integrity and FTS checks find wrong (empty when sound)."""
    async with await Store.open(home / "state.db") as store:
        report = await store.check_integrity()
    return [] if report.ok else list(report.problems)
