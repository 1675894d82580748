"""Which layout a state.db really has, read from its tables whatever `user_version` says.

`PRAGMA user_version` tells the migrations where to start, but anyone can set it in
the sqlite3 shell, and a number that disagrees with the tables makes an upgrade
re-create tables that exist or use ones that do not. Each migration leaves a mark no
earlier layout has, so the schema itself says its version: the newest mark found.
"""

from __future__ import annotations

import aiosqlite

from memory.store.scalar import scalar
from memory.store.schema import FTS_TABLE


def _named(name: str, condition: str = "") -> str:
    return f"SELECT 1 FROM sqlite_master WHERE name = '{name}'{condition}"


# What each version's migration leaves, newest first (see memory.store.migrations).
MARKS: tuple[tuple[int, str], ...] = (
    (17, _named("budgets")),
    (16, _named("usage")),
    (15, _named("reflection_off")),
    (14, _named("note_events")),
    (13, _named("turns_ts")),
    (12, _named("cursors")),
    (11, _named("erasures")),
    (10, _named("media")),
    (9, _named("job_runs")),
    (8, _named("retention")),
    (7, "SELECT 1 FROM pragma_table_info('turns') WHERE name = 'body'"),
    (6, _named("web_tokens")),
    (5, _named(FTS_TABLE, " AND sql LIKE '%detail=none%'")),
    (4, _named("deliveries")),
    (3, _named("turns", " AND type = 'table'")),
    (2, _named(FTS_TABLE)),
    (1, _named("persons")),
)
LAYOUT_VERSION = (
    "SELECT CASE "
    + " ".join(f"WHEN EXISTS ({mark}) THEN {version}" for version, mark in MARKS)
    + " ELSE 0 END"
)


async def layout_version(db: aiosqlite.Connection) -> int:
    """The schema version whose tables `db` holds (0: none of kioku's)."""
    return await scalar(db, LAYOUT_VERSION)
