"""What a state.db changed by hand can hold that kioku cannot use, found and put right.

The sqlite3 shell runs with foreign keys off and knows none of kioku's rules, so a hand
edit can leave turns of a deleted session or rows naming a deleted person, a full-text
index out of step with the turns, a `turns.body` that is no longer its content's
indexed form, a dropped trigger, or a `user_version` that is not the tables' version.
`diagnose` finds each of them (`kioku doctor`); `repair` puts right what it can without
losing anything stored (`kioku doctor --repair`), and says what it left.

Both use a connection of their own and look before any migration: `Store.open` refuses
a database whose `user_version` is wrong, and that is one of the things to fix here.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosqlite

from memory.store import migrations, schema
from memory.store.errors import store_error
from memory.store.layout import layout_version
from memory.store.scalar import scalar
from memory.store.schema import FTS_TABLE
from memory.store.segment import segment, stored_form

# Turns read at a time while their indexed text is recomputed.
BODY_ROWS = 5000
# Kinds of kioku's objects that `repair` re-creates when they are gone: nothing in them
# is stored, they are rules and an index over the turns.
RECREATED = ("view", "trigger", "index")
# How many missing keys a finding names.
SHOWN = 5


@dataclass(frozen=True)
class Dangling:
    """Rows of `table` whose `column` names a row of `parent` that is gone."""

    table: str
    column: str
    parent: str
    target: str
    rows: int
    missing: tuple[str, ...]


@dataclass(frozen=True)
class Health:
    """What `diagnose` found. `damage` is SQLite's own integrity check: when it fails the
    file itself is broken, and the other checks are not run."""

    user_version: int
    layout: int
    damage: list[str] = field(default_factory=list)
    dangling: list[Dangling] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    index: str | None = None
    stale_bodies: int = 0
    persons: int = 0
    sessions: int = 0
    turns: int = 0
    size_bytes: int = 0

    @property
    def ok(self) -> bool:
        return not (
            self.damage
            or self.dangling
            or self.missing
            or self.index
            or self.stale_bodies
            or self.user_version != self.layout
        )


@dataclass
class Repair:
    """What `repair` did, and what it left (with the reason), as sentences."""

    done: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


async def diagnose(path: Path) -> Health:
    """Every problem of the existing database at `path` that kioku cannot work with."""
    async with _connection(path) as db:
        version = await migrations.user_version(db)
        layout = await layout_version(db)
        damage = await _damage(db)
        if damage:
            return Health(version, layout, damage=damage)
        expected = await kioku_objects()
        present = await _objects(db)
        return Health(
            version,
            layout,
            dangling=await _dangling(db, expected),
            missing=_missing(expected, present) if layout == migrations.SCHEMA_VERSION else [],
            unknown=sorted(set(present) - set(expected)),
            index=await _index_problem(db) if layout >= 2 else None,
            stale_bodies=await _stale_bodies(db, fix=False) if layout >= 7 else 0,
            persons=await _count(db, "persons") if layout >= 1 else 0,
            sessions=await _count(db, "sessions") if layout >= 1 else 0,
            turns=await _count(db, "messages") if layout >= 1 else 0,
            size_bytes=await scalar(db, "PRAGMA page_count") * await scalar(db, "PRAGMA page_size"),
        )


async def repair(path: Path) -> Repair:
    """Put right what `diagnose` finds, as far as nothing stored is lost; the daemon must
    not be running (the caller makes sure of it)."""
    report = Repair()
    async with _connection(path) as db:
        damage = await _damage(db)
        if damage:
            report.left.append(f"the file itself is damaged ({damage[0]}): nothing was changed")
            return report
        expected = await kioku_objects()
        if not await _set_version(db, expected, report):
            return report
        layout = await layout_version(db)
        if layout < migrations.SCHEMA_VERSION:
            try:
                await migrations.migrate(db)
            except aiosqlite.Error as exc:
                report.left.append(f"could not upgrade it from schema v{layout}: {exc}")
                return report
            report.done.append(
                f"upgraded state.db from schema v{layout} to v{migrations.SCHEMA_VERSION}"
            )
        await _recreate(db, expected, report)
        await _fix_dangling(db, expected, report)
        stale = await _stale_bodies(db, fix=True)
        if stale:
            report.done.append(
                f"recomputed the indexed text (turns.body) of {stale} turn(s) whose content "
                "had changed"
            )
        problem = await _index_problem(db)
        if problem is not None:
            await _in_transaction(db, f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
            report.done.append(f"rebuilt the full-text index from the turns (it was: {problem})")
    return report


async def kioku_objects() -> dict[str, tuple[str, str]]:
    """Name -> (type, SQL) of every table, index, view and trigger this kioku's layout has:
    a database migrated in memory, so the list is the migrations' own."""
    async with aiosqlite.connect(":memory:", isolation_level=None) as db:
        await migrations.migrate(db)
        rows = await db.execute_fetchall(
            "SELECT name, type, sql FROM sqlite_master WHERE substr(name, 1, 7) != 'sqlite_'"
        )
    return {name: (kind, sql) for name, kind, sql in rows}


@asynccontextmanager
async def _connection(path: Path) -> AsyncIterator[aiosqlite.Connection]:
    """A connection that neither creates the file nor migrates it; the views of the layouts
    before v7 call `kioku_segment`, so it is registered."""
    try:
        db = await aiosqlite.connect(
            f"{path.as_uri()}?mode=rw",
            uri=True,
            isolation_level=None,
            timeout=schema.BUSY_TIMEOUT_S,
        )
    except sqlite3.Error as exc:
        raise store_error(exc, path) from exc
    db.row_factory = sqlite3.Row
    try:
        await db.execute(f"PRAGMA busy_timeout = {int(schema.BUSY_TIMEOUT_S * 1000)}")
        await db.create_function(migrations.SEGMENT_FUNCTION, 1, segment, deterministic=True)
        yield db
    except sqlite3.Error as exc:
        raise store_error(exc, path) from exc
    finally:
        await db.close()


async def _damage(db: aiosqlite.Connection) -> list[str]:
    rows = await db.execute_fetchall("PRAGMA integrity_check")
    return [str(row["integrity_check"]) for row in rows if row["integrity_check"] != "ok"]


async def _objects(db: aiosqlite.Connection) -> dict[str, str]:
    rows = await db.execute_fetchall(
        "SELECT name, type FROM sqlite_master WHERE substr(name, 1, 7) != 'sqlite_'"
    )
    return {name: kind for name, kind in rows}


def _missing(expected: dict[str, tuple[str, str]], present: dict[str, str]) -> list[str]:
    """kioku's objects that are gone, as "trigger sessions_delete"; the FTS5 table's own
    tables are left to the index check."""
    return [
        f"{kind} {name}"
        for name, (kind, _) in sorted(expected.items())
        if name not in present and not name.startswith(f"{FTS_TABLE}_")
    ]


async def _dangling(
    db: aiosqlite.Connection, expected: dict[str, tuple[str, str]]
) -> list[Dangling]:
    """Foreign keys of kioku's tables naming rows that are gone (a table of one's own is
    one's own business)."""
    found = []
    checked = await db.execute_fetchall("PRAGMA foreign_key_check")
    for table, fk in sorted({(str(row["table"]), int(row["fkid"])) for row in checked}):
        if table not in expected or expected[table][0] != "table":
            continue
        keys = await db.execute_fetchall(
            'SELECT "from", "table", coalesce("to", \'rowid\') FROM pragma_foreign_key_list(?) '
            "WHERE id = ?",
            (table, fk),
        )
        column, parent, target = next(iter(keys))
        where = _orphaned(table, column, parent, target)
        rows = await scalar(db, f"SELECT count(*) FROM {where}")
        missing = await db.execute_fetchall(
            f'SELECT DISTINCT "{column}" AS key FROM {where} LIMIT {SHOWN}'
        )
        found.append(
            Dangling(table, column, parent, target, rows, tuple(str(m["key"]) for m in missing))
        )
    return found


def _orphaned(table: str, column: str, parent: str, target: str) -> str:
    """FROM ... WHERE: the rows of `table` whose `column` names no row of `parent`."""
    return (
        f'"{table}" WHERE "{column}" IS NOT NULL '
        f'AND "{column}" NOT IN (SELECT "{target}" FROM "{parent}")'
    )


async def _index_problem(db: aiosqlite.Connection) -> str | None:
    """Why FTS5's integrity-check, which compares the index with the turns, fails."""
    try:
        await db.execute(
            f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('integrity-check', 1)"
        )
    except aiosqlite.DatabaseError as exc:
        return str(exc)
    return None


async def _stale_bodies(db: aiosqlite.Connection, *, fix: bool) -> int:
    """Turns whose `body` is not what `stored_form` makes of their content; with `fix`,
    each is set right (the update trigger indexes it again)."""
    stale = 0
    last = 0
    while True:
        rows = await db.execute_fetchall(
            "SELECT id, content, body FROM turns WHERE id > ? ORDER BY id LIMIT ?",
            (last, BODY_ROWS),
        )
        if not rows:
            return stale
        last = rows[-1]["id"]
        wrong = await asyncio.to_thread(_recomputed, list(rows))
        stale += len(wrong)
        if fix and wrong:
            await _in_transaction(db, "UPDATE turns SET body = ? WHERE id = ?", rows=wrong)


def _recomputed(rows: list[Any]) -> list[tuple[str | None, int]]:
    """(body, id) of the turns among `rows` whose stored body is not their content's."""
    return [
        (body, id_)
        for id_, content, stored in rows
        if isinstance(content, str) and (body := stored_form(content)) != stored
    ]


async def _set_version(
    db: aiosqlite.Connection, expected: dict[str, tuple[str, str]], report: Repair
) -> bool:
    """Make `user_version` the tables' version; False when it must stay (a newer kioku's)."""
    version = await migrations.user_version(db)
    layout = await layout_version(db)
    if version == layout:
        return True
    unknown = sorted(set(await _objects(db)) - set(expected))
    if version > migrations.SCHEMA_VERSION and unknown:
        report.left.append(
            f"user_version {version} is newer than this kioku ({migrations.SCHEMA_VERSION}) "
            f"and state.db holds tables this kioku does not know ({', '.join(unknown[:SHOWN])}): "
            "a newer kioku wrote it, so nothing was changed"
        )
        return False
    await db.execute(f"PRAGMA user_version = {layout}")
    report.done.append(f"set user_version from {version} to {layout}, the version of its tables")
    return True


async def _recreate(
    db: aiosqlite.Connection, expected: dict[str, tuple[str, str]], report: Repair
) -> None:
    """Create again kioku's views, triggers and indexes that are gone, and the index table."""
    present = await _objects(db)
    order = {FTS_TABLE: 0, "view": 1, "trigger": 2, "index": 3}
    gone = sorted(
        (name for name in expected if name not in present and not name.startswith(f"{FTS_TABLE}_")),
        key=lambda name: (order.get(name, order.get(expected[name][0], 4)), name),
    )
    for name in gone:
        kind, sql = expected[name]
        if kind not in RECREATED and name != FTS_TABLE:
            report.left.append(f"table {name} is gone: only a backup has what it held")
            continue
        try:
            await db.execute(sql)
        except aiosqlite.Error as exc:
            report.left.append(f"could not create {kind} {name} again: {exc}")
            continue
        report.done.append(f"created {kind} {name} again")


async def _fix_dangling(
    db: aiosqlite.Connection, expected: dict[str, tuple[str, str]], report: Repair
) -> None:
    """A missing person is created again (bare), so turns and links naming them stay;
    rows of a session that is gone are deleted, as deleting the session deletes them."""
    for found in await _dangling(db, expected):
        where = _orphaned(found.table, found.column, found.parent, found.target)
        names = ", ".join(found.missing)
        if found.parent == "persons":
            await _in_transaction(
                db,
                f"INSERT OR IGNORE INTO persons(id, display_name, created_at) "
                f'SELECT DISTINCT "{found.column}", NULL, ? FROM {where}',
                (time.time(),),
            )
            report.done.append(
                f"created again (without a name) the person(s) {found.table}.{found.column} "
                f"names but persons lacks: {names}"
            )
        elif found.parent == "sessions":
            await _in_transaction(db, f"DELETE FROM {where}")
            report.done.append(
                f"deleted {found.rows} row(s) of {found.table} whose session is gone "
                f"(session {names})"
            )
        else:
            report.left.append(
                f"{found.rows} row(s) of {found.table} name a {found.parent} row that is gone "
                f"({names}): only a backup has it"
            )


async def _in_transaction(
    db: aiosqlite.Connection,
    sql: str,
    params: tuple[Any, ...] = (),
    *,
    rows: list[Any] | None = None,
) -> None:
    """`sql` once with `params`, or once per row of `rows`, in a transaction of its own."""
    await db.execute("BEGIN IMMEDIATE")
    try:
        if rows is None:
            await db.execute(sql, params)
        else:
            await db.executemany(sql, rows)
        await db.execute("COMMIT")
    except BaseException:
        await db.execute("ROLLBACK")
        raise


async def _count(db: aiosqlite.Connection, table: str) -> int:
    return await scalar(db, f"SELECT count(*) FROM {table}")
