"""Is an archive's state.db sound, laid out as kioku's, and checked in bounded time?

A state.db from an archive is a file anyone could have made. Reading it runs whatever
its schema says: a `turns` that is a recursive view counts forever, a foreign layout
with the right `user_version` restores and then breaks `kioku search`. So before any
row is read, its layout is compared with the one kioku's own migrations build for that
version: every table there, a table (not a view) with kioku's columns and their types;
kioku's virtual table, views, triggers and indexes exactly as kioku writes them when
present (a missing view, trigger or index is what `kioku doctor --repair` re-creates);
no trigger of anyone else's. A newer kioku's layout is unknown here: of it, only the
tables counted must be tables. Then SQLite's `integrity_check` and the row counts run
under a progress handler that stops them past a time budget: a base plus what a
database of that size needs at a slow disk's pace, far above a real check's time.
Schema-defined functions run as untrusted (`trusted_schema = OFF`).
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from memory.backup.errors import BackupError
from memory.backup.manifest import Counts
from memory.store import migrations
from memory.store.scalar import scalar_now

# A check may take this long plus a second per `BUDGET_BYTES_PER_S` of database: a real
# integrity check of a 289 MB state.db takes about 1.5 s (tests/bench/bench_backup.py).
BASE_BUDGET_S = 10.0
BUDGET_BYTES_PER_S = 20 * 1024 * 1024
# SQLite virtual-machine steps between two looks at the clock.
CLOCK_STEPS = 10_000
# Kinds `kioku doctor --repair` re-creates when they are gone: nothing stored is in them.
RECREATED = ("view", "trigger", "index")
SHOWN = 5
FOREIGN = "it was changed, or is no kioku database"
COUNTED = ("persons", "sessions", "turns")
OBJECTS = "SELECT lower(name), type, sql FROM sqlite_master WHERE substr(name, 1, 7) != 'sqlite_'"


@dataclass(frozen=True)
class SchemaObject:
    """A table, view, trigger or index: its kind, its SQL (whitespace folded), and for an
    ordinary table its columns and their declared types."""

    kind: str
    sql: str
    columns: frozenset[tuple[str, str]] = frozenset()

    @property
    def virtual(self) -> bool:
        return self.sql.upper().startswith("CREATE VIRTUAL TABLE")


def check_database(
    database: Path, schema_version: int, counts: Counts, budget_s: float | None = None
) -> None:
    """`BackupError` unless the copy at `database` is the schema version its manifest says,
    laid out as kioku's, passes SQLite's integrity check, and holds the rows the manifest
    says; all within `budget_s` (default: by its size)."""
    budget = budget_s if budget_s is not None else _budget(database)
    deadline = time.monotonic() + budget
    db = sqlite3.connect(database, isolation_level=None)
    db.row_factory = sqlite3.Row
    db.set_progress_handler(lambda: time.monotonic() > deadline, CLOCK_STEPS)
    try:
        db.execute("PRAGMA trusted_schema = OFF")
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version != schema_version:
            raise BackupError(
                f"the archive's state.db is schema v{version}, its manifest says "
                f"v{schema_version}: it was changed"
            )
        present = _present(db)
        if version <= migrations.SCHEMA_VERSION:
            _check_layout(present, expected_layout(version))
        else:  # a newer kioku's layout, unknown here: at least what is counted are tables
            _check_counted(present)
        checked = db.execute("PRAGMA integrity_check")
        problems = [row["integrity_check"] for row in checked if row["integrity_check"] != "ok"]
        if problems:
            raise BackupError(
                "the archive's state.db fails SQLite's integrity check: "
                + "; ".join(map(str, problems[:SHOWN]))
            )
        found = Counts(*(scalar_now(db, f"SELECT count(*) FROM {table}") for table in COUNTED))
    except sqlite3.DatabaseError as exc:
        if time.monotonic() > deadline:
            raise BackupError(
                f"checking the archive's state.db took over {budget:.0f} s, far longer than "
                "a database of its size needs: it was changed, or is no kioku database"
            ) from None
        raise BackupError(f"the archive's state.db is damaged: {exc}") from None
    finally:
        db.close()
    if found != counts:
        raise BackupError(
            f"the archive's state.db holds {found}, its manifest says {counts}: it was changed"
        )


@functools.lru_cache(maxsize=4)
def expected_layout(version: int) -> dict[str, SchemaObject]:
    """Every object of kioku's layout at `version`, by lower-case name: a database migrated
    in memory, so the layout is the migrations' own."""

    async def migrated() -> dict[str, SchemaObject]:
        async with aiosqlite.connect(":memory:", isolation_level=None) as db:
            await migrations.migrate(db, target=version)
            rows = await db.execute_fetchall(OBJECTS)
            found = {}
            for name, kind, sql in rows:
                columns = await db.execute_fetchall(
                    "SELECT lower(name), lower(type) FROM pragma_table_info(?)", (name,)
                )
                found[name] = _object(kind, sql, columns)
            return found

    return asyncio.run(migrated())


def _present(db: sqlite3.Connection) -> dict[str, SchemaObject]:
    found = {}
    for name, kind, sql in db.execute(OBJECTS).fetchall():
        columns: list[tuple[str, str]] = []
        if kind == "table":
            columns = db.execute(
                "SELECT lower(name), lower(type) FROM pragma_table_info(?)", (name,)
            ).fetchall()
        found[name] = _object(kind, sql, columns)
    return found


def _object(kind: str, sql: str | None, columns: Iterable[Sequence[Any]]) -> SchemaObject:
    pairs = frozenset((str(column[0]), str(column[1])) for column in columns)
    folded = " ".join((sql or "").split())
    return SchemaObject(kind, folded, pairs if kind == "table" else frozenset())


def _check_layout(present: dict[str, SchemaObject], expected: dict[str, SchemaObject]) -> None:
    """`BackupError` naming the first way `present` is not kioku's layout `expected`."""
    for name, want in sorted(expected.items()):
        have = present.get(name)
        if have is None:
            if want.kind in RECREATED:
                continue
            raise BackupError(f"the archive's state.db lacks kioku's table {name}: {FOREIGN}")
        if have.kind != want.kind or have.virtual != want.virtual:
            raise BackupError(
                f"the archive's state.db has a {_kind(have)} {name} where kioku keeps a "
                f"{_kind(want)}: {FOREIGN}"
            )
        if want.kind != "table" or want.virtual:
            if have.sql != want.sql:
                raise BackupError(
                    f"the archive's state.db defines the {_kind(want)} {name} otherwise than "
                    f"kioku: {FOREIGN}"
                )
        elif missing := sorted(want.columns - have.columns):
            shown = ", ".join(f"{column} {kind}".strip() for column, kind in missing[:SHOWN])
            raise BackupError(
                f"the archive's state.db table {name} lacks kioku's columns ({shown}): {FOREIGN}"
            )
    foreign = sorted(n for n, o in present.items() if o.kind == "trigger" and n not in expected)
    if foreign:
        raise BackupError(
            f"the archive's state.db holds triggers kioku does not define "
            f"({', '.join(foreign[:SHOWN])}): {FOREIGN}"
        )


def _check_counted(present: dict[str, SchemaObject]) -> None:
    for name in COUNTED:
        have = present.get(name)
        if have is None or have.kind != "table" or have.virtual:
            raise BackupError(f"the archive's state.db has no table {name}: {FOREIGN}")


def _kind(obj: SchemaObject) -> str:
    return "virtual table" if obj.virtual else obj.kind


def _budget(database: Path) -> float:
    return BASE_BUDGET_S + database.stat().st_size / BUDGET_BYTES_PER_S
