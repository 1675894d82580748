"""How a state.db reaches the current layout: an ordered list of migrations, tracked by
`PRAGMA user_version`.

Adding a migration is adding one function (beside the others in `migration_steps_late`)
to `MIGRATIONS`: it receives the open connection inside a write transaction and the
runner bumps `user_version` in the same transaction, so a crash mid-migration leaves the
previous version intact.
What the layout is once migrated (names, pragmas, the statements writes use) lives
in `memory.store.schema`; since v5 the full-text index holds row ids only (see
`v5_lean_index`), and since v7 it needs no function of kioku's (see `v7_open_index`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiosqlite

from memory.store import schema
from memory.store.layout import layout_version
from memory.store.migration_steps_early import (
    SEGMENT_FUNCTION,
    v1_core,
    v2_search_index,
    v3_compact_turns,
    v4_gateway,
    v5_lean_index,
    v6_web,
)
from memory.store.migration_steps_late import (
    v7_open_index,
    v8_retention,
    v9_schedule,
    v10_media,
    v11_erasures,
    v12_catch_up,
    v13_turns_by_time,
    v14_notes_journal,
)
from memory.store.migration_steps_recent import v15_reflection_off, v16_usage, v17_budgets
from memory.store.scalar import scalar
from memory.store.segment import segment

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]
MIGRATIONS: tuple[Migration, ...] = (
    v1_core,
    v2_search_index,
    v3_compact_turns,
    v4_gateway,
    v5_lean_index,
    v6_web,
    v7_open_index,
    v8_retention,
    v9_schedule,
    v10_media,
    v11_erasures,
    v12_catch_up,
    v13_turns_by_time,
    v14_notes_journal,
    v15_reflection_off,
    v16_usage,
    v17_budgets,
)
SCHEMA_VERSION = schema.SCHEMA_VERSION


class SchemaVersionError(RuntimeError):
    """state.db's `user_version` is one this kioku must not open it at; `str()` says why and
    how to set it right. `version` is what it says, `layout` what its tables are."""

    def __init__(self, message: str, version: int, layout: int) -> None:
        super().__init__(message)
        self.version = version
        self.layout = layout


class SchemaTooNew(SchemaVersionError):
    """state.db says a newer kioku wrote it; opening it could corrupt it."""

    def __init__(self, version: int, layout: int) -> None:
        super().__init__(
            f"state.db has schema version {version}, newer than this kioku "
            f"({SCHEMA_VERSION}); upgrade kioku to open it. If its user_version was set by "
            f"hand instead (its tables are those of version {layout}), "
            f"`PRAGMA user_version = {layout}` sets it back",
            version,
            layout,
        )


class SchemaMismatch(SchemaVersionError):
    """`user_version` is not the version of the tables state.db holds: it was set by hand."""

    def __init__(self, version: int, layout: int) -> None:
        harm = (
            f"upgrading from {version} would re-create tables it has"
            if version < layout
            else f"kioku would use tables of version {version} it does not have"
        )
        super().__init__(
            f"state.db says schema version {version} (PRAGMA user_version), but its tables "
            f"are those of version {layout}, so the number was changed by hand and {harm}; "
            f"`PRAGMA user_version = {layout}` sets it back",
            version,
            layout,
        )


async def migrate(db: aiosqlite.Connection, target: int = SCHEMA_VERSION) -> int:
    """Apply the migrations after the database's version up to `target`; return the new version.

    Each step runs in its own IMMEDIATE transaction and re-reads the version inside
    it, so two processes starting at once cannot apply the same step twice, and a
    step cut short (a crash, a full disk) leaves the version before it, to be run
    again from its start at the next open. A `user_version` that disagrees with the
    tables (see `memory.store.layout`) is refused before anything is run.
    """
    while True:
        await db.execute("BEGIN IMMEDIATE")
        try:
            version = await user_version(db)
            layout = await layout_version(db)
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(version, layout)
            if version != layout:
                raise SchemaMismatch(version, layout)
            if version >= target:
                await db.execute("COMMIT")
                return version
            await db.create_function(SEGMENT_FUNCTION, 1, segment, deterministic=True)
            await MIGRATIONS[version](db)
            await db.execute(f"PRAGMA user_version = {version + 1}")
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise


async def user_version(db: aiosqlite.Connection) -> int:
    return await scalar(db, "PRAGMA user_version")
