"""Migrations v15 on of state.db (`memory.store.migrations` runs them in order): who
turned reflection off."""

from __future__ import annotations

import aiosqlite

from memory.store.migration_steps_early import run_script


async def v15_reflection_off(db: aiosqlite.Connection) -> None:
    """The people who turned the background review of their memory off (`/memory auto off`).

    A row is a choice made; a person without one follows `agent.reflection.enabled`.
    """
    await run_script(
        db,
        """
        CREATE TABLE reflection_off (
            person_id TEXT PRIMARY KEY REFERENCES persons(id) ON DELETE CASCADE,
            since REAL NOT NULL
        ) WITHOUT ROWID;
        """,
    )
